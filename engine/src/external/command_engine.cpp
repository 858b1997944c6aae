// The `cmd:TEMPLATE` engine: each run writes the model and inputs to a temporary folder and runs a command;
// tensors go as input_K.pb / output_K.pb (or .npy), or as Polygraphy JSON files.
#include <algorithm>
#include <mutex>

#include "core/model_io.h"
#include "core/polygraphy_json.h"
#include "engine/command_template.h"
#include "engine/process.h"
#include "external/output_model.h"
#include "external/temp_folder.h"
#include "external/tensor_exchange.h"
#include "spec/engine_factories.h"

namespace reduce {

namespace {

bool template_uses(const std::vector<std::string>& tokens, std::string_view placeholder) {
  const std::string braced = "{" + std::string(placeholder) + "}";
  return std::any_of(tokens.begin(), tokens.end(), [&](const std::string& t) { return t.find(braced) != std::string::npos; });
}

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
    // Polygraphy's files: `polygraphy run {model} --load-inputs {inputs_json} --save-outputs {outputs_json}`.
    if (uses("inputs_json")) REDUCE_TRY(write_polygraphy_inputs(run / "inputs.json", {named_inputs(inputs)}));
    values["inputs_json"] = (run / "inputs.json").string();
    values["outputs_json"] = (run / "outputs.json").string();
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
    if (uses("outputs_json")) return read_polygraphy_outputs(run / "outputs.json", outputs);
    return read_output_folder(run / "outputs", outputs, "the command");
  }

 private:
  bool uses(std::string_view placeholder) const { return template_uses(tokens_, placeholder); }

  // The runtime inputs given, in graph input order (Polygraphy feeds by name; the order is for people).
  std::vector<NamedTensor> named_inputs(const TensorMap& inputs) const {
    std::vector<NamedTensor> out;
    for (const auto& vi : model_.graph.inputs)
      if (auto it = inputs.find(vi.name); it != inputs.end()) out.push_back({vi.name, it->second});
    return out;
  }

  // The values `outputs` from the RunResults the command wrote (its only iteration), by name.
  static Expected<TensorMap> read_polygraphy_outputs(const std::filesystem::path& file, const std::vector<std::string>& outputs) {
    REDUCE_ASSIGN(auto samples, read_polygraphy_json(file));
    if (samples.size() != 1)
      return Error{file.string(), "the command wrote " + std::to_string(samples.size()) + " iterations, not 1"};
    TensorMap out;
    for (auto& t : samples[0].tensors) out.emplace(t.name, std::move(t.tensor));
    for (const auto& name : outputs)
      if (!out.count(name)) return Error{file.string(), "the command wrote no output '" + name + "'"};
    return out;
  }

  // The model file for this set of outputs, written once (the first time it is needed).
  Expected<std::filesystem::path> saved_model(const std::vector<std::string>& outputs) {
    std::lock_guard lock(mutex_);
    for (const auto& [names, path] : saved_)
      if (names == outputs) return path;
    const auto path = models_ / ("model_" + std::to_string(saved_.size()) + ".onnx");
    // Weights of the original's external data are a hard link of its file, not a copy per check.
    SaveOptions so;
    so.link_external_data = true;
    if (are_graph_outputs(model_, outputs)) {
      REDUCE_TRY(save_model(model_, path, so));
    } else {
      REDUCE_ASSIGN(Model variant, model_with_outputs(model_, outputs));
      REDUCE_TRY(save_model(variant, path, so));
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
  if (!template_uses(*tokens, "outputs") && !template_uses(*tokens, "outputs_json"))
    return Error{spec, "the command template has no {outputs} or {outputs_json} placeholder (where it writes results)"};
  return std::unique_ptr<Engine>(
      std::make_unique<CommandEngine>(spec, std::move(tokens).value(), environment, fp32_nodes));
}

}  // namespace reduce
