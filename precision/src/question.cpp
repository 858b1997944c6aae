// `reduce precision`'s two questions (question.h): the search, the bundle and the words of each.
#include "precision/question.h"

#include <sstream>

#include "core/mapped_file.h"

namespace reduce {

namespace {

// The set's first line: how many of how many, how found, on how many samples.
std::string set_heading(const PrecisionOutcome& out, const char* what) {
  return "\n" + std::to_string(out.pinned.size()) + " of " + std::to_string(out.candidates) + what +
         (out.one_minimal ? " (1-minimal)" : "") + (out.strategy != "default" ? " (" + out.strategy + ")" : "") + ", " +
         std::to_string(out.checks) + " sets checked" +
         (out.samples > 1 ? ", passes on all " + std::to_string(out.samples) + " samples" : std::string()) + ":\n";
}

// The fresh runs of --confirm: `with` and `as_is` name the two models.
std::string confirmation(const PrecisionOutcome& out, const char* with, const char* as_is) {
  if (out.confirm_runs == 0) return "";
  return std::string(out.not_confirmed() ? "NOT CONFIRMED: " : "confirmed: ") + with + std::to_string(out.set_passed_again) +
         " of " + std::to_string(out.confirm_runs) + " fresh run(s) pass, " + as_is + std::to_string(out.original_failed_again) +
         " of " + std::to_string(out.confirm_runs) + " fail the same way" +
         (out.not_confirmed() ? " (a flaky engine: do not trust this set)" : "") + "\n";
}

// The set found, one node per line, with how to deploy it: the flags that keep it in FP32 on
// TensorRT 10 and Polygraphy, or, on a strongly typed engine (`typed`), the converted model.
std::string fp32_set(const PrecisionOutcome& out, std::optional<DType> typed) {
  std::string s = set_heading(out, " float nodes in FP32");
  for (const auto& p : out.pinned) s += "  " + p.name + " (" + p.op_type + ")\n";
  s += confirmation(out, "with the set ", "as it is ");
  if (!typed) return s + "\nTensorRT:   " + tensorrt_flags(out.pinned) + "\nPolygraphy: " + polygraphy_flags(out.pinned) + "\n";
  // Strongly typed (TensorRT 11): no flag keeps a layer in FP32; the bundle's model holds the set.
  const std::string file = *typed == DType::BFloat16 ? "model_bf16.onnx" : "model_fp16.onnx";
  return s + "\nTensorRT 11: trtexec --onnx=" + file + "  (the bundle's model converted with the set kept in FP32)" +
         "\nAutoCast:    " + autocast_command(out.pinned, *typed, file) + "\n";
}

// Where the quantized weights' float values came from (the float model, or dequantized).
std::string float_model_matches(const PrecisionOutcome& out) {
  if (!out.quantization) return "";
  const auto& q = *out.quantization;
  std::ostringstream s;
  if (!q.float_model.empty())
    s << "quantized nodes found in the float model: "
      << q.nodes_matched_by_name + q.nodes_matched_by_place + q.nodes_matched_by_value << " of " << q.quantized_nodes << " ("
      << q.nodes_matched_by_name << " by name, " << q.nodes_matched_by_place << " by place among their op type, "
      << q.nodes_matched_by_value << " by weight values only)\n";
  s << "weights in float: " << q.weights_from_float_model << " from the float model, " << q.weights_folded
    << " folded (they keep the quantizer's rounding)\n";
  return s.str();
}

// The nodes to leave in float, the errors, and how to quantize again without them.
std::string float_set(const PrecisionOutcome& out) {
  std::ostringstream s;
  s << set_heading(out, " quantized nodes left in float");
  for (const auto& p : out.pinned)
    s << "  " << p.name << " (" << p.op_type << "), quantized alone it adds " << p.local_error << " x the tolerance\n";
  s << confirmation(out, "partially quantized ", "quantized ");
  const auto errors = [](const Verdict& v) {
    std::string e;
    for (const auto& o : v.outputs) e += (e.empty() ? "" : ", ") + o.name + " " + std::to_string(o.max_abs);
    return e;
  };
  s << "largest absolute error against the float model: quantized " << errors(out.before) << "; partially quantized "
    << errors(out.after) << "\n"
    << float_model_matches(out) << "\nONNX Runtime:\n" << onnxruntime_quantize_call(out.pinned) << "\nModel Optimizer:\n"
    << modelopt_quantize_command(out.pinned) << "\n";
  return s.str();
}

}  // namespace

Expected<PrecisionOutcome> PrecisionQuestion::search(std::vector<Oracle*> samples, const PrecisionOptions& options,
                                                     std::stop_token stop) const {
  return plan_ ? find_float_nodes(std::move(samples), *plan_, options, stop) : find_fp32_nodes(std::move(samples), options, stop);
}

Expected<ToleranceSweep> PrecisionQuestion::sweep(const std::vector<Oracle*>& samples, const PrecisionOptions& options,
                                                  const std::vector<double>& tolerances, std::stop_token stop,
                                                  const std::function<void(const SweepRow&)>& on_row) const {
  const PrecisionSearch search = [this](std::vector<Oracle*> s, const PrecisionOptions& o, std::stop_token t) {
    return this->search(std::move(s), o, t);
  };
  return sweep_tolerances(samples, options, tolerances, stop, on_row, search);
}

Status PrecisionQuestion::write_bundle(const std::filesystem::path& dir, const Oracle& oracle, const PrecisionOutcome& outcome,
                                       const std::string& command) const {
  return plan_ ? write_quantization_bundle(dir, oracle, *plan_, outcome, command)
               : write_precision_bundle(dir, oracle, outcome, command);
}

Status PrecisionQuestion::write_sweep(const std::filesystem::path& dir, const Oracle& oracle, const ToleranceSweep& sweep,
                                      const NodeRenaming& renamed, const std::string& command) const {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Error{dir.string(), "cannot create folder: " + ec.message()};
  REDUCE_TRY(write_file_atomic(dir / "sweep.json", sweep_json(sweep)));
  const PrecisionOutcome* tightest = sweep.tightest_found();
  if (!tightest) return {};
  PrecisionOutcome bundled = *tightest;
  bundled.renamed = renamed;
  return write_bundle(dir, oracle, bundled, command);
}

std::string PrecisionQuestion::intro() const {
  if (!plan_) return "";
  return "quantized model: " + std::to_string(plan_->nodes.size()) +
         " nodes read quantized values; searching which to leave in float against " +
         (plan_->float_model_source.empty() ? "the model with every Q/DQ pair folded" : plan_->float_model_source) + "\n";
}

std::string PrecisionQuestion::no_set(const PrecisionOutcome& out) const {
  switch (out.kind) {
    case PrecisionOutcome::Kind::DoesNotFail:
      return plan_ ? "does not fail: the quantized model's outputs are within tolerance of the float model's\n"
                   : "does not fail: the model passes with nothing in FP32\n";
    case PrecisionOutcome::Kind::FailsEvenInFp32:
      return (plan_ ? "fails even with every quantized node in float: not a quantization problem ("
                    : "fails even in FP32: not a precision problem (") +
             out.after.signature.to_string() + ")\n" + float_model_matches(out);
    case PrecisionOutcome::Kind::Found: break;
  }
  return "";
}

std::string PrecisionQuestion::answer(const PrecisionOutcome& out, const Oracle& oracle) const {
  return plan_ ? float_set(out) : fp32_set(out, oracle.engine_converts_to());
}

std::string PrecisionQuestion::bundle_files(const Oracle& oracle) const {
  const std::optional<DType> typed = plan_ ? std::nullopt : oracle.engine_converts_to();
  const std::string extra = plan_  ? std::string(kPartiallyQuantizedFile) + ", "
                            : !typed ? ""
                            : *typed == DType::BFloat16 ? "model_bf16.onnx, " : "model_fp16.onnx, ";
  return "precision.txt, model.onnx, " + extra + "report.md, report.json";
}

std::string outcome_line(const PrecisionOutcome& out) {
  const bool quantized = out.quantization.has_value();
  switch (out.kind) {
    case PrecisionOutcome::Kind::DoesNotFail: return quantized ? "passes with every node quantized" : "passes with nothing in FP32";
    case PrecisionOutcome::Kind::FailsEvenInFp32:
      return quantized ? "fails even with every quantized node in float" : "fails even with every float node in FP32";
    case PrecisionOutcome::Kind::Found: break;
  }
  std::string names;
  for (const auto& p : out.pinned) names += (names.empty() ? "" : ", ") + p.name;
  return std::to_string(out.pinned.size()) + (quantized ? " nodes left in float (" : " nodes in FP32 (") +
         std::to_string(out.checks) + " sets checked" + (out.not_confirmed() ? ", NOT CONFIRMED on a fresh run" : "") + "): " + names;
}

}  // namespace reduce
