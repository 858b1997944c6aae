// The bundle of `reduce precision` on a Q/DQ model: the nodes to leave in float, the partially
// quantized model, the errors of the quantized and partially quantized models against the float
// model's outputs, and the quantizers' `nodes_to_exclude`.
#include <nlohmann/json.hpp>

#include <sstream>

#include "core/mapped_file.h"
#include "core/model_io.h"
#include "precision/quantization.h"

#include "command_words.h"
#include "precision_report.h"

namespace reduce {

std::string onnxruntime_quantize_call(const std::vector<PinnedNode>& excluded) {
  std::string list;
  for (size_t i = 0; i < excluded.size(); ++i) list += (i ? ", " : "") + python_string(excluded[i].name);
  return "from onnxruntime.quantization import quantize_static, QuantFormat\n"
         "quantize_static('model_float.onnx', 'model_quantized.onnx', calibration_data_reader,\n"
         "                quant_format=QuantFormat.QDQ, nodes_to_exclude=[" + list + "])";
}

std::string modelopt_quantize_command(const std::vector<PinnedNode>& excluded) {
  // Model Optimizer matches --nodes_to_exclude as regular expressions: each name escaped and anchored.
  std::string s = "python -m modelopt.onnx.quantization --onnx_path model_float.onnx --quantize_mode int8 "
                  "--calibration_data calibration.npz --output_path model_quantized.onnx";
  if (!excluded.empty()) s += " --nodes_to_exclude";
  for (const auto& p : excluded) s += " " + shell_word(exact_regex(p.name));
  return s;
}

namespace {

// Each output's largest absolute difference from the float model's.
nlohmann::json max_abs_json(const Verdict& v) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& o : v.outputs) j[o.name] = o.max_abs;
  return j;
}

std::string max_abs_text(const Verdict& v) {
  std::string s;
  for (const auto& o : v.outputs) s += (s.empty() ? "" : ", ") + o.name + " " + number(o.max_abs);
  return s.empty() ? std::string("-") : s;
}

const char* kind_name(PrecisionOutcome::Kind k) {
  switch (k) {
    case PrecisionOutcome::Kind::Found: return "found";
    case PrecisionOutcome::Kind::DoesNotFail: return "does not fail";
    case PrecisionOutcome::Kind::FailsEvenInFp32: return "fails even in float";
  }
  return "";
}

// report.json of the quantized search.
nlohmann::json quantization_json(const Oracle& oracle, const QuantizedSearchPlan& plan, const PrecisionOutcome& out,
                                 const std::string& command) {
  const std::string& float_source = plan.float_model_source;
  nlohmann::json j;
  j["engine"] = oracle.options().engine;
  j["mode"] = "quantization";
  j["float_model"] = float_source.empty() ? nlohmann::json(nullptr) : nlohmann::json(float_source);
  j["weights"] = {{"from_float_model", plan.weights_from_float_model}, {"folded", plan.weights_folded}};
  j["float_model_nodes"] = {{"quantized", plan.nodes.size()},
                            {"matched_by_name", plan.nodes_matched_by_name},
                            {"matched_by_place", plan.nodes_matched_by_place},
                            {"matched_by_value", plan.nodes_matched_by_value}};
  j["partially_quantized_model"] = kPartiallyQuantizedFile;
  add_search_json(j, out, kind_name(out.kind));
  j["every_node_in_float"] = verdict_json(out.all_kept);
  j["max_abs_error"] = {{"quantized", max_abs_json(out.before)},
                        {"partially_quantized", max_abs_json(out.after)},
                        {"every_node_in_float", max_abs_json(out.all_kept)}};
  j["float_nodes"] = nlohmann::json::array();
  j["nodes_to_exclude"] = nlohmann::json::array();
  for (const auto& p : out.pinned) {
    j["float_nodes"].push_back({{"name", p.name}, {"op_type", p.op_type}, {"added_error_over_tolerance", p.local_error}});
    j["nodes_to_exclude"].push_back(p.name);
  }
  j["onnxruntime"] = onnxruntime_quantize_call(out.pinned);
  j["modelopt"] = modelopt_quantize_command(out.pinned);
  j["command"] = command;
  return j;
}

}  // namespace

Status write_quantization_bundle(const std::filesystem::path& dir, const Oracle& oracle, const QuantizedSearchPlan& plan,
                                 const PrecisionOutcome& out, const std::string& command) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return make_error(dir.string() + ": cannot create the folder (" + ec.message() + ")");
  std::vector<size_t> set;
  std::string list;
  for (const auto& p : out.pinned) {
    set.push_back(p.node);
    list += p.name + "\n";
  }
  std::sort(set.begin(), set.end());
  REDUCE_ASSIGN(const Model partial, leave_in_float(oracle.model(), plan.nodes, set, plan.float_weights));
  const std::string& float_source = plan.float_model_source;

  const nlohmann::json j = quantization_json(oracle, plan, out, command);

  std::ostringstream md;
  md << "# Quantized nodes to leave in float\n\n"
     << "Engine `" << oracle.options().engine << "`, outputs compared with the float model's ("
     << (float_source.empty() ? "derived by folding every QuantizeLinear/DequantizeLinear pair: folded weights keep "
                                "the quantizer's rounding"
                              : "`" + float_source + "`")
     << "). The quantized model fails (" << out.before.signature.to_string()
     << (out.samples > 1 ? " on input sample #" + std::to_string(out.failing_sample) : std::string())
     << ") and passes with these " << out.pinned.size() << " of " << out.candidates
     << " quantized nodes left in float (their QuantizeLinear/DequantizeLinear inputs removed)"
     << (out.samples > 1 ? " on every one of its " + std::to_string(out.samples) + " input samples" : std::string())
     << (out.one_minimal ? " (1-minimal: with any one of them quantized again it fails)" : "")
     << (out.stopped ? " (stopped early: the best set so far, not minimal)" : "")
     << (out.strategy != "default" ? " (found by the baseline `" + out.strategy + "`, not minimized)" : "") << ".\n\n"
     << "| node | op | error it adds quantized alone (error / tolerance) |\n|---|---|---|\n";
  for (const auto& p : out.pinned) md << "| " << p.name << " | " << p.op_type << " | " << number(p.local_error) << " |\n";
  md << "\n| model | largest absolute error per output |\n|---|---|\n"
     << "| quantized (`model.onnx`) | " << max_abs_text(out.before) << " |\n"
     << "| partially quantized (`" << kPartiallyQuantizedFile << "`) | " << max_abs_text(out.after) << " |\n"
     << "| every quantized node in float | " << max_abs_text(out.all_kept) << " |\n\n"
     << (plan.float_model_source.empty() ? std::string()
         : "Quantized nodes whose weights were found in the float model: " + std::to_string(plan.nodes_matched_by_name) +
               " by name, " + std::to_string(plan.nodes_matched_by_place) + " by place among their op type, " +
               std::to_string(plan.nodes_matched_by_value) + " by weight values only, of " +
               std::to_string(plan.nodes.size()) + ". ")
     << "Weights in float: " << plan.weights_from_float_model << " from the float model, " << plan.weights_folded
     << " folded (dequantized: they keep the quantizer's rounding). " << out.checks << " sets checked.\n";
  if (out.confirm_runs > 0)
    md << "\n" << (out.not_confirmed() ? "**Not confirmed**" : "Confirmed") << " on fresh runs: the partially quantized model passed "
       << out.set_passed_again << " of " << out.confirm_runs << " times, the quantized model failed the same way "
       << out.original_failed_again << " of " << out.confirm_runs << " times.\n";
  md << "\nQuantize again with these nodes excluded, with ONNX Runtime:\n\n```python\n" << onnxruntime_quantize_call(out.pinned)
     << "\n```\n\nor with Model Optimizer:\n\n```sh\n" << modelopt_quantize_command(out.pinned)
     << "\n```\n\nReproduce:\n\n```sh\n" << command << "\n```\n";

  REDUCE_TRY(save_model(oracle.model(), dir / "model.onnx"));
  REDUCE_TRY(save_model(partial, dir / kPartiallyQuantizedFile));
  REDUCE_TRY(write_file_atomic(dir / "precision.txt", list));
  REDUCE_TRY(write_file_atomic(dir / "report.json", j.dump(2) + "\n"));
  REDUCE_TRY(write_file_atomic(dir / "report.md", md.str()));
  return {};
}

}  // namespace reduce
