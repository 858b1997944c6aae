// `check:TEMPLATE` interestingness scripts (as llvm-reduce --test, Polygraphy --check): the script decides.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/model.h"
#include "adapters/command_template.h"
#include "engine/engine.h"
#include "adapters/engine_spec.h"
#include "adapters/process.h"

namespace reduce {

// A parsed check command. Placeholders: {model} (an .onnx file), {inputs} (a folder of
// input_K.pb, named, in graph input order), {fp32_nodes} and {fp32_nodes_file} (the nodes of the
// model among `check[fp32=...]:`, adapters/command_template.h). The caller decides what the result
// means (--fail-code, --ignore-fail-code, --fail-regex on ProcessResult::output).
class CheckScript {
 public:
  // `command_template` is the part after "check:". Errors: malformed template.
  static Expected<CheckScript> parse(std::string_view command_template, Fp32Nodes fp32_nodes = {});

  // Runs the script on files that already exist (no copies), under the environment's timeout and
  // extra variables. {fp32_nodes_file}, when used, is written into a temporary folder.
  Expected<ProcessResult> run(const std::filesystem::path& model, const std::filesystem::path& inputs,
                              const EngineEnvironment& environment, const std::atomic<bool>* cancel = nullptr) const;

  // Saves `model`, `inputs` and the FP32 node list into a fresh temporary folder (removed
  // afterwards) and runs there.
  Expected<ProcessResult> run(const Model& model, const TensorMap& inputs, const EngineEnvironment& environment,
                              const std::atomic<bool>* cancel = nullptr) const;

  const std::vector<std::string>& tokens() const { return tokens_; }

 private:
  CheckScript(std::vector<std::string> tokens, Fp32Nodes fp32_nodes)
      : tokens_(std::move(tokens)), fp32_nodes_(std::move(fp32_nodes)) {}
  Expected<ProcessResult> run_with(Placeholders placeholders, const EngineEnvironment& environment,
                                   const std::atomic<bool>* cancel) const;
  std::vector<std::string> tokens_;
  Fp32Nodes fp32_nodes_;
};

}  // namespace reduce
