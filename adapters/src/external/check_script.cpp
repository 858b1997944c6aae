// CheckScript: runs an interestingness command on a model file and an inputs folder.
#include "adapters/check_script.h"

#include "core/model_io.h"
#include "adapters/command_template.h"
#include "external/temp_folder.h"
#include "external/tensor_exchange.h"

namespace reduce {

Expected<CheckScript> CheckScript::parse(std::string_view command_template, Fp32Nodes fp32_nodes) {
  auto tokens = split_command_template(command_template);
  if (!tokens) return Error{"check:" + std::string(command_template), tokens.error().what};
  return CheckScript(std::move(tokens).value(), std::move(fp32_nodes));
}

Expected<ProcessResult> CheckScript::run_with(Placeholders placeholders, const EngineEnvironment& environment,
                                              const std::atomic<bool>* cancel) const {
  ProcessOptions process;
  process.timeout_seconds = environment.timeout_seconds;
  process.env = environment.env;
  process.cancel = cancel;
  placeholders.emplace("slot", std::to_string(environment.slot));
  return run_process(fill_placeholders(tokens_, placeholders), process);
}

Expected<ProcessResult> CheckScript::run(const std::filesystem::path& model, const std::filesystem::path& inputs,
                                         const EngineEnvironment& environment, const std::atomic<bool>* cancel) const {
  Placeholders values{{"model", model.string()}, {"inputs", inputs.string()}};
  // {fp32_nodes_file} goes to a folder of ours: nothing is written next to a user's model.
  REDUCE_ASSIGN(TempFolder folder, TempFolder::create("reduce-check-"));
  Model loaded;
  if (!fp32_nodes_.empty()) {
    REDUCE_ASSIGN(loaded, load_model(model));
  }
  REDUCE_TRY(add_fp32_placeholders(values, fp32_nodes_, loaded.graph, folder / "fp32_nodes.txt"));
  return run_with(std::move(values), environment, cancel);
}

Expected<ProcessResult> CheckScript::run(const Model& model, const TensorMap& inputs,
                                         const EngineEnvironment& environment, const std::atomic<bool>* cancel) const {
  REDUCE_ASSIGN(TempFolder folder, TempFolder::create("reduce-check-"));
  std::error_code ec;
  std::filesystem::create_directory(folder / "inputs", ec);
  if (ec) return Error{folder.path().string(), "cannot create folder: " + ec.message()};
  SaveOptions so;
  so.link_external_data = true;  // the original's external data: a hard link, not a copy per check
  REDUCE_TRY(save_model(model, folder / "model.onnx", so));
  REDUCE_TRY(write_input_folder(folder / "inputs", model.graph, inputs));
  Placeholders values{{"model", (folder / "model.onnx").string()}, {"inputs", (folder / "inputs").string()}};
  REDUCE_TRY(add_fp32_placeholders(values, fp32_nodes_, model.graph, folder / "fp32_nodes.txt"));
  return run_with(std::move(values), environment, cancel);
}

}  // namespace reduce
