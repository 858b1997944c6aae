// The `cmd:TEMPLATE` engine (and the `trt` preset built on it): each run writes the model and inputs to a
// temporary folder and runs a command; tensors go as input_K.pb / output_K.pb (or .npy), as Polygraphy
// JSON files, or as trtexec's raw input files and --exportOutput JSON.
#include <algorithm>
#include <mutex>
#include <optional>

#include "core/model_io.h"
#include "core/tensor_file.h"
#include "core/polygraphy_json.h"
#include "core/trtexec_json.h"
#include "adapters/command_template.h"
#include "adapters/process.h"
#include "external/output_model.h"
#include "external/temp_folder.h"
#include "external/tensor_exchange.h"
#include "factories/engine_factories.h"

namespace reduce {

namespace {

bool template_uses(const std::vector<std::string>& tokens, std::string_view placeholder) {
  const std::string braced = "{" + std::string(placeholder) + "}";
  return std::any_of(tokens.begin(), tokens.end(), [&](const std::string& t) { return t.find(braced) != std::string::npos; });
}

// A model file for one set of outputs, and their element types (trtexec's output file has none).
struct SavedModel {
  std::vector<std::string> outputs;
  std::filesystem::path path;
  std::map<std::string, DType, std::less<>> dtypes;
};

class CommandPrepared : public PreparedModel {
 public:
  CommandPrepared(const Model& model, std::vector<std::string> tokens, const EngineEnvironment& environment,
                  TempFolder models, Placeholders fp32, std::vector<std::string> fp32_arguments)
      : model_(model), tokens_(std::move(tokens)), environment_(environment), models_(std::move(models)),
        fp32_(std::move(fp32)), fp32_arguments_(std::move(fp32_arguments)) {}

  Expected<TensorMap> run(const TensorMap& inputs, const RunOptions& options) override {
    const std::vector<std::string> outputs = requested_outputs(model_, options.outputs);
    REDUCE_ASSIGN(const SavedModel* saved, saved_model(outputs));
    const std::filesystem::path& model_path = saved->path;
    REDUCE_ASSIGN(TempFolder run, TempFolder::create("reduce-cmd-run-"));
    std::error_code ec;
    std::filesystem::create_directory(run / "inputs", ec);
    std::filesystem::create_directory(run / "outputs", ec);
    if (ec) return Error{run.path().string(), "cannot create folder: " + ec.message(), ErrorKind::Setup};
    REDUCE_TRY(as_setup(write_input_folder(run / "inputs", model_.graph, inputs)));
    Placeholders values = fp32_;
    values["model"] = model_path.string();
    values["inputs"] = (run / "inputs").string();
    values["outputs"] = (run / "outputs").string();
    values["slot"] = std::to_string(environment_.slot);
    // NumPy's files: the inputs as one .npz (entries named after the inputs, in graph input order,
    // stored), and where the command writes its outputs as one .npz (entries named after them).
    if (uses("inputs_npz")) REDUCE_TRY(as_setup(write_npz(run / "inputs.npz", named_inputs(inputs), false)));
    values["inputs_npz"] = (run / "inputs.npz").string();
    values["outputs_npz"] = (run / "outputs.npz").string();
    values["model_inline"] = model_path.string();
    // Polygraphy's files: `polygraphy run {model} --load-inputs {inputs_json} --save-outputs {outputs_json}`.
    if (uses("inputs_json")) REDUCE_TRY(as_setup(write_polygraphy_inputs(run / "inputs.json", {named_inputs(inputs)})));
    values["inputs_json"] = (run / "inputs.json").string();
    values["outputs_json"] = (run / "outputs.json").string();
    // trtexec's files: `trtexec --onnx={model} --loadInputs={trtexec_inputs} --exportOutput={trtexec_output_json}`.
    if (uses("trtexec_inputs")) {
      REDUCE_ASSIGN(values["trtexec_inputs"], as_setup(write_trtexec_inputs(run.path(), inputs)));
    }
    values["trtexec_output_json"] = (run / "trtexec_outputs.json").string();
    // One timing cache file per build at a time, reused by the reduction's later builds.
    std::optional<TimingCachePool::Lease> timing_cache;
    if (uses("timing_cache")) {
      if (environment_.timing_caches) {
        REDUCE_ASSIGN(auto lease, environment_.timing_caches->lease());
        timing_cache.emplace(std::move(lease));
        values["timing_cache"] = timing_cache->path().string();
      } else {
        values["timing_cache"] = (run / "timing.cache").string();  // this build's alone
      }
    }
    if (uses("trtexec_shapes")) {
      REDUCE_ASSIGN(values["trtexec_shapes"], as_setup(trtexec_shapes(saved->path, inputs)));
    }
    ProcessOptions process;
    process.timeout_seconds = environment_.timeout_seconds;
    process.env = environment_.env;
    process.cancel = options.cancel;
    std::vector<std::string> argv;
    for (const auto& token : tokens_) {
      // `{trtexec_shapes}` alone is the whole --shapes flag, or no argument for a static model
      // (trtexec refuses --shapes on a model without dynamic inputs).
      if (token == "{trtexec_shapes}" && values["trtexec_shapes"].empty()) continue;
      argv.push_back(fill_placeholders(token, values));
    }
    argv.insert(argv.end(), fp32_arguments_.begin(), fp32_arguments_.end());
    // A command that cannot start (not found, no descriptors left) is the setup's problem.
    REDUCE_ASSIGN(ProcessResult result, as_setup(run_process(argv, process)));
    if (result.cancelled) return Error{"", "cancelled"};
    if (result.timed_out)
      return Error{"", "command " + result.describe(process), ErrorKind::Timeout, result.signal};
    if (const int signal = result.crash_signal())
      return process_died("command", signal, result.exit_code, first_and_last_output_lines(result.output));
    if (result.exit_code != 0) {
      const std::string tail = last_output_lines(result.output);
      return Error{"", tail.empty() ? "command failed with " + result.describe(process) : tail};
    }
    if (uses("outputs_npz")) return read_npz_outputs(run / "outputs.npz", outputs);
    if (uses("outputs_json")) return read_polygraphy_outputs(run / "outputs.json", outputs);
    if (uses("trtexec_output_json")) return read_trtexec_output(run / "trtexec_outputs.json", *saved);
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

  // The runtime inputs given as raw files input_K.bin in `dir`, and trtexec's --loadInputs spec for
  // them: 'NAME':FILE,... (the quotes let a name hold ':'; trtexec cannot take ',' or "'" in either).
  Expected<std::string> write_trtexec_inputs(const std::filesystem::path& dir, const TensorMap& inputs) const {
    std::string spec;
    size_t k = 0;
    for (const auto& [name, tensor] : named_inputs(inputs)) {
      const auto file = dir / ("input_" + std::to_string(k++) + ".bin");
      if (name.find_first_of(",'") != std::string::npos || file.string().find_first_of(",'") != std::string::npos)
        return make_error("trtexec's --loadInputs cannot express input '" + name + "' in " + file.string() +
                          " (a ',' or \"'\" in the name or the temporary folder)");
      REDUCE_TRY(write_raw_tensor(file, tensor));
      spec += (spec.empty() ? "'" : ",'") + name + "':" + file.string();
    }
    return spec;
  }

  // trtexec's `--shapes='NAME':AxB,...` for the inputs the model leaves dynamic, with the shapes of
  // the tensors given; "" when every input is static. trtexec builds a dynamic input with the shape
  // --shapes gives it (1 for each dynamic dim without one), so it must be the tensor's.
  Expected<std::string> trtexec_shapes(const std::filesystem::path& file, const TensorMap& inputs) const {
    std::string spec;
    for (const auto& vi : model_.graph.inputs) {
      const auto it = inputs.find(vi.name);
      if (it == inputs.end()) continue;
      const bool dynamic = std::any_of(vi.type.dims.begin(), vi.type.dims.end(), [](const Dim& d) { return !d.is_static(); });
      if (!dynamic && vi.type.has_shape) continue;
      if (vi.name.find_first_of(",'") != std::string::npos)
        return Error{file.string(), "trtexec's --shapes cannot express input '" + vi.name + "' (a ',' or \"'\" in the name)"};
      std::string dims;
      for (const int64_t d : it->second.shape()) dims += (dims.empty() ? "" : "x") + std::to_string(d);
      spec += (spec.empty() ? "--shapes='" : ",'") + vi.name + "':" + dims;
    }
    return spec;
  }

  // The requested values from trtexec's --exportOutput file, typed as the model run declares them.
  static Expected<TensorMap> read_trtexec_output(const std::filesystem::path& file, const SavedModel& saved) {
    REDUCE_ASSIGN(auto tensors, read_trtexec_outputs(file, saved.dtypes));
    TensorMap out;
    for (auto& t : tensors) out.emplace(t.name, std::move(t.tensor));
    for (const auto& [name, dtype] : saved.dtypes)
      if (!out.count(name)) return Error{file.string(), "the command wrote no output '" + name + "'"};
    return out;
  }

  // The values `outputs` from the .npz the command wrote, by entry name.
  static Expected<TensorMap> read_npz_outputs(const std::filesystem::path& file, const std::vector<std::string>& outputs) {
    if (!std::filesystem::exists(file)) return Error{file.string(), "the command wrote no outputs .npz"};
    REDUCE_ASSIGN(auto tensors, read_npz(file));
    TensorMap out;
    for (auto& t : tensors) out.emplace(t.name, std::move(t.tensor));
    for (const auto& name : outputs)
      if (!out.count(name)) return Error{file.string(), "the command wrote no output '" + name + "' (an entry " + name + ".npy)"};
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
  Expected<const SavedModel*> saved_model(const std::vector<std::string>& outputs) {
    std::lock_guard lock(mutex_);
    for (const auto& saved : saved_)
      if (saved->outputs == outputs) return saved.get();
    auto saved = std::make_unique<SavedModel>();
    saved->outputs = outputs;
    saved->path = models_ / ("model_" + std::to_string(saved_.size()) + ".onnx");
    const Model* written = &model_;
    Model variant;
    if (!are_graph_outputs(model_, outputs)) {
      REDUCE_ASSIGN(variant, model_with_outputs(model_, outputs));
      written = &variant;
    }
    // Weights of the original's external data are a hard link of its file, not a copy per check;
    // with {model_inline} every weight is in the one file (engines that load a model from bytes).
    SaveOptions so;
    so.link_external_data = !uses("model_inline");
    REDUCE_TRY(as_setup(save_model(*written, saved->path, so)));
    for (const auto& vi : written->graph.outputs)
      if (auto dtype = dtype_from_onnx(vi.type.elem_type)) saved->dtypes.emplace(vi.name, *dtype);
    saved_.push_back(std::move(saved));
    return saved_.back().get();
  }

  const Model& model_;
  const std::vector<std::string> tokens_;
  const EngineEnvironment environment_;
  TempFolder models_;
  const Placeholders fp32_;  // {fp32_nodes} and {fp32_nodes_file}: the same for every run
  const std::vector<std::string> fp32_arguments_;  // appended to every argv as they are
  std::mutex mutex_;
  std::vector<std::unique_ptr<SavedModel>> saved_;  // pointers stay valid while runs use them
};

class CommandEngine : public Engine {
 public:
  CommandEngine(CommandSetup setup, EngineEnvironment environment)
      : setup_(std::move(setup)), environment_(std::move(environment)) {}
  std::string name() const override { return setup_.name; }

  Expected<std::unique_ptr<PreparedModel>> prepare(const Model& model) override {
    REDUCE_ASSIGN(TempFolder models, TempFolder::create("reduce-cmd-model-"));
    Placeholders fp32;
    REDUCE_TRY(add_fp32_placeholders(fp32, setup_.fp32_nodes, model.graph, models / "fp32_nodes.txt"));
    std::vector<std::string> fp32_arguments;
    if (setup_.fp32_arguments) {
      auto arguments = setup_.fp32_arguments(setup_.fp32_nodes.present_in(model.graph));
      if (!arguments) return Error{setup_.name, arguments.error().what};
      fp32_arguments = std::move(*arguments);
    }
    return std::unique_ptr<PreparedModel>(std::make_unique<CommandPrepared>(
        model, setup_.tokens, environment_, std::move(models), std::move(fp32), std::move(fp32_arguments)));
  }

 private:
  const CommandSetup setup_;
  const EngineEnvironment environment_;
};

}  // namespace

Expected<std::unique_ptr<Engine>> make_command_engine(CommandSetup setup, const EngineEnvironment& environment) {
  if (!template_uses(setup.tokens, "outputs") && !template_uses(setup.tokens, "outputs_json") &&
      !template_uses(setup.tokens, "outputs_npz") && !template_uses(setup.tokens, "trtexec_output_json"))
    return Error{setup.name,
                 "the command template has no {outputs}, {outputs_npz}, {outputs_json} or {trtexec_output_json} placeholder (where it "
                 "writes results)"};
  return std::unique_ptr<Engine>(std::make_unique<CommandEngine>(std::move(setup), environment));
}

Expected<std::unique_ptr<Engine>> make_command_engine(std::string_view command_template,
                                                      const EngineEnvironment& environment,
                                                      const Fp32Nodes& fp32_nodes) {
  CommandSetup setup;
  setup.name = (fp32_nodes.empty() ? "cmd:" : "cmd[fp32=" + to_string(fp32_nodes) + "]:") + std::string(command_template);
  auto tokens = split_command_template(command_template);
  if (!tokens) return Error{setup.name, tokens.error().what};
  setup.tokens = std::move(*tokens);
  setup.fp32_nodes = fp32_nodes;
  return make_command_engine(std::move(setup), environment);
}

}  // namespace reduce
