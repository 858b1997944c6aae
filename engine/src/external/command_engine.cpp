// The `cmd:TEMPLATE` engine: each run writes the model and inputs to a temporary folder and runs a command.
#include <mutex>

#include "core/model_io.h"
#include "engine/command_template.h"
#include "engine/process.h"
#include "external/output_model.h"
#include "external/temp_folder.h"
#include "external/tensor_exchange.h"
#include "spec/engine_factories.h"

namespace reduce {

namespace {

class CommandPrepared : public PreparedModel {
 public:
  CommandPrepared(const Model& model, std::vector<std::string> tokens, const EngineEnvironment& environment,
                  TempFolder models, Placeholders fp32)
      : model_(model), tokens_(std::move(tokens)), environment_(environment), models_(std::move(models)),
        fp32_(std::move(fp32)) {}

  Expected<TensorMap> run(const TensorMap& inputs, const RunOptions& options) override {
    const std::vector<std::string> outputs = requested_outputs(model_, options.outputs);
    REDUCE_ASSIGN(std::filesystem::path model_path, saved_model(outputs));
    REDUCE_ASSIGN(TempFolder run, TempFolder::create("reduce-cmd-run-"));
    std::error_code ec;
    std::filesystem::create_directory(run / "inputs", ec);
    std::filesystem::create_directory(run / "outputs", ec);
    if (ec) return Error{run.path().string(), "cannot create folder: " + ec.message()};
    REDUCE_TRY(write_input_folder(run / "inputs", model_.graph, inputs));
    Placeholders values = fp32_;
    values["model"] = model_path.string();
    values["inputs"] = (run / "inputs").string();
    values["outputs"] = (run / "outputs").string();
    ProcessOptions process;
    process.timeout_seconds = environment_.timeout_seconds;
    process.env = environment_.env;
    process.cancel = options.cancel;
    REDUCE_ASSIGN(ProcessResult result, run_process(fill_placeholders(tokens_, values), process));
    if (result.cancelled) return Error{"", "cancelled"};
    if (result.timed_out)
      return Error{"", "command " + result.describe(process), ErrorKind::Timeout, result.signal};
    if (const int signal = result.crash_signal()) {
      const std::string tail = last_output_lines(result.output);
      return Error{"", "command killed by " + signal_name(signal) + (tail.empty() ? "" : ": " + tail),
                   ErrorKind::Crash, signal};
    }
    if (result.exit_code != 0) {
      const std::string tail = last_output_lines(result.output);
      return Error{"", tail.empty() ? "command failed with " + result.describe(process) : tail};
    }
    return read_output_folder(run / "outputs", outputs, "the command");
  }

 private:
  // The model file for this set of outputs, written once (the first time it is needed).
  Expected<std::filesystem::path> saved_model(const std::vector<std::string>& outputs) {
    std::lock_guard lock(mutex_);
    for (const auto& [names, path] : saved_)
      if (names == outputs) return path;
    const auto path = models_ / ("model_" + std::to_string(saved_.size()) + ".onnx");
    if (are_graph_outputs(model_, outputs)) {
      REDUCE_TRY(save_model(model_, path));
    } else {
      REDUCE_ASSIGN(Model variant, model_with_outputs(model_, outputs));
      REDUCE_TRY(save_model(variant, path));
    }
    saved_.emplace_back(outputs, path);
    return path;
  }

  const Model& model_;
  const std::vector<std::string> tokens_;
  const EngineEnvironment environment_;
  TempFolder models_;
  const Placeholders fp32_;  // {fp32_nodes} and {fp32_nodes_file}: the same for every run
  std::mutex mutex_;
  std::vector<std::pair<std::vector<std::string>, std::filesystem::path>> saved_;
};

class CommandEngine : public Engine {
 public:
  CommandEngine(std::string spec, std::vector<std::string> tokens, EngineEnvironment environment, Fp32Nodes fp32_nodes)
      : spec_(std::move(spec)), tokens_(std::move(tokens)), environment_(std::move(environment)),
        fp32_nodes_(std::move(fp32_nodes)) {}
  std::string name() const override { return spec_; }

  Expected<std::unique_ptr<PreparedModel>> prepare(const Model& model) override {
    REDUCE_ASSIGN(TempFolder models, TempFolder::create("reduce-cmd-model-"));
    Placeholders fp32;
    REDUCE_TRY(add_fp32_placeholders(fp32, fp32_nodes_, model.graph, models / "fp32_nodes.txt"));
    return std::unique_ptr<PreparedModel>(
        std::make_unique<CommandPrepared>(model, tokens_, environment_, std::move(models), std::move(fp32)));
  }

 private:
  std::string spec_;
  std::vector<std::string> tokens_;
  EngineEnvironment environment_;
  Fp32Nodes fp32_nodes_;
};

}  // namespace

Expected<std::unique_ptr<Engine>> make_command_engine(std::string_view command_template,
                                                      const EngineEnvironment& environment,
                                                      const Fp32Nodes& fp32_nodes) {
  const std::string spec = (fp32_nodes.empty() ? "cmd:" : "cmd[fp32=" + to_string(fp32_nodes) + "]:") +
                           std::string(command_template);
  auto tokens = split_command_template(command_template);
  if (!tokens) return Error{spec, tokens.error().what};
  bool has_outputs = false;
  for (const auto& t : *tokens) has_outputs = has_outputs || t.find("{outputs}") != std::string::npos;
  if (!has_outputs) return Error{spec, "the command template has no {outputs} placeholder (where it writes results)"};
  return std::unique_ptr<Engine>(
      std::make_unique<CommandEngine>(spec, std::move(tokens).value(), environment, fp32_nodes));
}

}  // namespace reduce
