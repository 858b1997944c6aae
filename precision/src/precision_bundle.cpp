// The bundle of `reduce precision`: precision.txt, report.json (nlohmann-json), report.md.
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <sstream>

#include "core/mapped_file.h"
#include "core/precision_conversion.h"
#include "core/model_io.h"
#include "oracle/error_chart.h"
#include "precision/precision.h"

#include "precision_report.h"

namespace reduce {

namespace {

const char* kind_name(PrecisionOutcome::Kind k) {
  switch (k) {
    case PrecisionOutcome::Kind::Found: return "found";
    case PrecisionOutcome::Kind::DoesNotFail: return "does not fail";
    case PrecisionOutcome::Kind::FailsEvenInFp32: return "fails even in FP32";
  }
  return "";
}

}  // namespace

double worst_ratio(const Verdict& v) {
  double worst = 0;
  for (const auto& o : v.outputs) worst = std::max(worst, o.ratio);
  return worst;
}

nlohmann::json verdict_json(const Verdict& v) {
  nlohmann::json j;
  j["fails"] = v.signature.fails();
  j["signature"] = v.signature.to_string();
  j["worst_error_over_tolerance"] = worst_ratio(v);
  return j;
}

std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", x);
  return buf;
}

void add_search_json(nlohmann::json& j, const PrecisionOutcome& out, const char* outcome) {
  j["outcome"] = outcome;
  j["candidates"] = out.candidates;
  j["samples"] = out.samples;
  j["failing_sample"] = out.failing_sample;
  j["checks"] = out.checks;
  j["strategy"] = out.strategy;
  j["one_minimal"] = out.one_minimal;
  j["stopped"] = out.stopped;
  j["seconds"] = out.seconds;
  j["before"] = verdict_json(out.before);
  j["after"] = verdict_json(out.after);
  j["renamed_nodes"] = out.renamed.duplicates;
  j["named_nodes"] = out.renamed.unnamed;
  j["confirm"] = {{"runs", out.confirm_runs}, {"set_passed_again", out.set_passed_again},
                  {"original_failed_again", out.original_failed_again}};
}

namespace {

// A strongly typed engine (`fp16:SPEC`, TensorRT 11) takes the set in the model: the deployable
// model is the original converted with the set kept in FP32.
struct Deployable {
  std::optional<DType> typed;
  std::string file;
  std::optional<MixedPrecisionModel> converted;
};

Expected<Deployable> deployable_model(const Oracle& oracle, const PrecisionOutcome& out) {
  Deployable d;
  if (out.kind == PrecisionOutcome::Kind::Found) d.typed = oracle.engine_converts_to();
  d.file = d.typed == DType::BFloat16 ? "model_bf16.onnx" : "model_fp16.onnx";
  if (!d.typed) return d;
  MixedPrecisionOptions options;
  options.to = *d.typed;
  for (const auto& p : out.pinned) options.keep_nodes.insert(p.name);
  REDUCE_ASSIGN(d.converted, convert_to_mixed_precision(oracle.model(), options));
  return d;
}

nlohmann::json precision_json(const Oracle& oracle, const PrecisionOutcome& out, const Deployable& deployable, bool chart,
                              const std::string& command) {
  nlohmann::json j;
  j["engine"] = oracle.options().engine;
  j["timing_cache"] = nullptr;
  if (const auto& caches = oracle.options().environment.timing_caches; caches && caches->leases() > 0)
    j["timing_cache"] = {{"builds", caches->leases()}, {"files", caches->files()}};
  j["converted_model"] = deployable.converted ? nlohmann::json(deployable.file) : nlohmann::json(nullptr);
  j["autocast_rule"] = nullptr;
  if (out.autocast_rule)
    j["autocast_rule"] = {{"data_max", out.autocast_rule->data_max}, {"init_max", out.autocast_rule->init_max},
                          {"fp32_nodes", out.autocast_rule->nodes}, {"passes", out.autocast_rule->passes}};
  add_search_json(j, out, kind_name(out.kind));
  j["error_svg"] = chart;
  j["error_png"] = chart;
  j["fp32_nodes"] = nlohmann::json::array();
  for (const auto& p : out.pinned)
    j["fp32_nodes"].push_back({{"name", p.name}, {"op_type", p.op_type}, {"local_error_over_tolerance", p.local_error}});
  j["command"] = command;
  return j;
}

// report.md's opening: the failure, the set with each node's own error, the confirmation.
void markdown_set(std::ostream& md, const Oracle& oracle, const PrecisionOutcome& out) {
  md << "# Nodes to keep in FP32\n\n"
     << "Engine `" << oracle.options().engine << "`: the model fails as it is (" << out.before.signature.to_string()
     << (out.samples > 1 ? " on input sample #" + std::to_string(out.failing_sample) : std::string())
     << ") and passes with these " << out.pinned.size() << " of " << out.candidates << " float nodes in FP32"
     << (out.samples > 1 ? " on every one of its " + std::to_string(out.samples) + " input samples" : std::string())
     << (out.one_minimal ? " (1-minimal: without any one of them it fails again)" : "")
     << (out.stopped ? " (stopped early: the best set so far, not minimal)" : "")
     << (out.strategy != "default" ? " (found by the baseline `" + out.strategy + "`, a prefix or suffix of the topological order, not minimized)" : "")
     << ".\n\n"
     << "| node | op | error it adds alone (error / tolerance) |\n|---|---|---|\n";
  for (const auto& p : out.pinned)
    md << "| " << p.name << " | " << p.op_type << " | "
       << (p.local_error < 0 ? std::string("inherits (an input is beyond the engine's range)") : number(p.local_error)) << " |\n";
  if (out.confirm_runs > 0)
    md << "\n" << (out.not_confirmed() ? "**Not confirmed**" : "Confirmed") << " on fresh runs: with the set in FP32 the model passed "
       << out.set_passed_again << " of " << out.confirm_runs << " times, as it is it failed the same way "
       << out.original_failed_again << " of " << out.confirm_runs << " times"
       << (out.not_confirmed() ? " (the engine is flaky: this set is not an answer to rely on)" : "") << ".\n";
  if (out.renamed.duplicates > 0 || out.renamed.unnamed > 0)
    md << "\nRenamed before the search: " << out.renamed.duplicates << " node(s) that had an earlier node's name (now `NAME_K`), "
       << out.renamed.unnamed << " unnamed node(s) (now `node_K`).\n";
}

// AutoCast's default rule next to the set found.
void markdown_autocast_rule(std::ostream& md, const PrecisionOutcome& out) {
  if (!out.autocast_rule) return;
  const auto& rule = *out.autocast_rule;
  const auto flag_value = [](double v) {  // as typed on AutoCast's command line
    return v == std::floor(v) && std::fabs(v) < 1e15 ? std::to_string(static_cast<long long>(v)) : number(v);
  };
  md << "Model Optimizer AutoCast's default rule (`--data_max " << flag_value(rule.data_max) << " --init_max "
     << flag_value(rule.init_max) << "`, on the recorded FP32 values) keeps " << rule.nodes.size() << " node(s) in FP32";
  for (size_t i = 0; i < rule.nodes.size() && i < 20; ++i) md << (i ? ", " : ": ") << "`" << rule.nodes[i] << "`";
  if (rule.nodes.size() > 20) md << ", ...";
  md << "; with them the model " << (rule.passes ? "passes" : "**still fails**") << ". This search's set: "
     << out.pinned.size() << " node(s)" << (out.one_minimal ? ", 1-minimal" : "") << ".\n\n";
}

// How to deploy the set: the converted model on a strongly typed engine, else the flags.
void markdown_deployment(std::ostream& md, const PrecisionOutcome& out, const Deployable& d) {
  if (d.converted) {
    md << "The engine is strongly typed (TensorRT 11 builds the graph as typed): the set is delivered in the model. `"
       << d.file << "` is `model.onnx` converted to " << (d.typed == DType::BFloat16 ? "BF16" : "FP16")
       << " with these nodes kept in FP32 (" << d.converted->converted_nodes << " nodes converted, " << d.converted->casts
       << " Casts):\n\n```sh\ntrtexec --onnx=" << d.file << "\n```\n\nThe same conversion with Model Optimizer's "
       << "AutoCast" << (d.typed == DType::Float16 ? ", or ONNX Runtime's converter" : "") << ":\n\n```sh\n"
       << autocast_command(out.pinned, *d.typed, d.file) << "\n```\n\n";
    if (d.typed == DType::Float16) md << "```python\n" << onnxruntime_float16_call(out.pinned) << "\n```\n\n";
  } else {
    md << "TensorRT:\n\n```sh\n" << tensorrt_flags(out.pinned) << "\n```\n\nPolygraphy:\n\n```sh\n"
       << polygraphy_flags(out.pinned) << "\n```\n\n";
  }
}

std::string precision_markdown(const Oracle& oracle, const PrecisionOutcome& out, const Deployable& deployable,
                               const std::optional<ChartResult>& chart, const std::string& command) {
  std::ostringstream md;
  markdown_set(md, oracle, out);
  const bool drawn = chart && chart->outcome == ChartOutcome::Drawn;
  const std::string note = chart ? chart->note : "";
  md << "\nWorst output error / tolerance: " << number(worst_ratio(out.before)) << " before, "
     << number(worst_ratio(out.after)) << " with the set in FP32 (" << out.checks << " sets checked).\n\n"
     << (drawn ? "Error per node with nothing in FP32 (added alone vs accumulated; the set ringed): "
                 "![error per node](error.png) ([SVG](error.svg))\n\n"
               : note.empty() ? "" : "No chart: " + note + "\n\n");
  markdown_autocast_rule(md, out);
  markdown_deployment(md, out, deployable);
  md << "The node names are those of `model.onnx` here (unnamed nodes were named `node_K`, and a name shared by "
        "several nodes kept by the first and made `NAME_K` for the others). "
        "TensorRT layer names follow the ONNX node names only in the common case; check them with "
        "`--exportLayerInfo` or Polygraphy's `inspect model`.\n\nReproduce:\n\n```sh\n"
     << command << "\n```\n";
  return md.str();
}

}  // namespace

Status write_precision_bundle(const std::filesystem::path& dir, const Oracle& oracle, const PrecisionOutcome& out,
                              const std::string& command) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return make_error(dir.string() + ": cannot create the folder (" + ec.message() + ")");
  std::string list;
  for (const auto& p : out.pinned) list += p.name + "\n";
  // The error each node adds vs inherits with nothing in FP32: where the set's nodes stand out.
  std::optional<ChartResult> chart;
  if (out.origin && !out.stopped) {  // after Ctrl-C, the set is written at once
    std::vector<size_t> kept;
    for (const auto& p : out.pinned) kept.push_back(p.node);
    REDUCE_ASSIGN(chart, write_error_chart({dir / "error.svg", dir / "error.png"}, *out.origin, oracle.model().graph,
                                           std::nullopt, nullptr, kept));
  }
  REDUCE_ASSIGN(const Deployable deployable, deployable_model(oracle, out));
  const nlohmann::json j = precision_json(oracle, out, deployable, chart && chart->outcome == ChartOutcome::Drawn, command);
  const std::string md = precision_markdown(oracle, out, deployable, chart, command);
  REDUCE_TRY(save_model(oracle.model(), dir / "model.onnx"));
  if (deployable.converted) REDUCE_TRY(save_model(deployable.converted->model, dir / deployable.file));
  REDUCE_TRY(write_file_atomic(dir / "precision.txt", list));
  REDUCE_TRY(write_file_atomic(dir / "report.json", j.dump(2) + "\n"));
  REDUCE_TRY(write_file_atomic(dir / "report.md", md));
  return {};
}

}  // namespace reduce
