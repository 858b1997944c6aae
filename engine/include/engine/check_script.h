// `check:TEMPLATE` interestingness scripts (as llvm-reduce --test, Polygraphy --check): the script decides.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/model.h"
#include "engine/engine.h"
#include "engine/engine_spec.h"
#include "engine/process.h"

namespace reduce {

// A parsed check command. Placeholders: {model} (an .onnx file) and {inputs} (a folder of
// input_K.pb, named, in graph input order). The caller decides what the result means
// (--fail-code, --ignore-fail-code, --fail-regex on ProcessResult::output).
class CheckScript {
 public:
  // `command_template` is the part after "check:". Errors: malformed template.
  static Expected<CheckScript> parse(std::string_view command_template);

  // Runs the script on files that already exist (no copies), under the environment's timeout and
  // extra variables.
  Expected<ProcessResult> run(const std::filesystem::path& model, const std::filesystem::path& inputs,
                              const EngineEnvironment& environment, const std::atomic<bool>* cancel = nullptr) const;

  // Saves `model` and `inputs` into a fresh temporary folder (removed afterwards) and runs there.
  Expected<ProcessResult> run(const Model& model, const TensorMap& inputs, const EngineEnvironment& environment,
                              const std::atomic<bool>* cancel = nullptr) const;

  const std::vector<std::string>& tokens() const { return tokens_; }

 private:
  explicit CheckScript(std::vector<std::string> tokens) : tokens_(std::move(tokens)) {}
  std::vector<std::string> tokens_;
};

}  // namespace reduce
