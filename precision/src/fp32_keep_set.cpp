// The search for a 1-minimal set of nodes to keep in FP32: ranking, the reducer, the verdicts.
#include "precision/autocast_rule.h"
#include "precision/precision.h"

#include "command_words.h"
#include "keep_set_search.h"
#include "core/progress_estimate.h"

#include <algorithm>
#include <cmath>
#include <chrono>
#include <optional>
#include <cctype>
#include <map>
#include <unordered_set>

#include "core/candidate.h"
#include "oracle/layer_comparison.h"
#include "engine/fp32_nodes.h"
#include "reducer/reducer.h"

namespace reduce {

namespace {

bool is_float(DType t) { return t == DType::Float || t == DType::Double || t == DType::Float16 || t == DType::BFloat16; }

Fp32Nodes names_of(const Graph& g, const std::vector<size_t>& nodes, const std::vector<bool>& pinnable) {
  Fp32Nodes out;
  for (size_t n : nodes)
    if (pinnable[n]) out.names.push_back(g.nodes[n].name);
  return out;
}

// The whole model on the engine under test with `nodes` kept in FP32 (engine/fp32_nodes.h:
// `opt:fp16,fp32=...`, `cmd[fp32=...]:`), compared with the same recorded reference. Not cached.
// Invalid when the spec cannot take the set.
Verdict run_with_fp32_nodes(Oracle& sample, const Fp32Nodes& nodes, const std::atomic<bool>* cancel) {
  auto run = sample.materialize(Candidate::whole(sample.model().graph));
  if (!run) return Verdict::invalid_because(run.error().message());
  auto pinned = with_fp32_nodes(*sample.spec(), nodes);
  if (!pinned) return Verdict::invalid_because(pinned.error().message());
  return sample.evaluate_probe(*run, cancel, std::move(*pinned));
}

// Nodes by the error they add when run alone (largest first), then by the growth of their
// accumulated error; nodes never compared come last.
std::vector<size_t> rank_by_added_error(Oracle& oracle, const PrecisionOptions& options, const std::atomic<bool>* cancel,
                                        std::map<size_t, double>& local_error, std::optional<ErrorOrigin>& traced) {
  auto layers = compare_layers(oracle, cancel);
  if (!layers) {
    if (options.log) options.log("ranking: layerwise run failed (" + layers.error().message() + "); nodes unranked");
    return {};
  }
  ErrorOriginOptions eo;
  eo.max_local_runs = options.max_local_runs;
  eo.jobs = options.jobs;
  eo.top = SIZE_MAX;
  eo.on_progress = ProgressLine("ranking: nodes run alone", options.log);
  const ErrorOrigin origin = trace_error_origin(oracle, *layers, eo, cancel);
  std::vector<size_t> ranking;
  std::unordered_set<size_t> ranked;
  for (size_t i : origin.top_local)
    if (ranked.insert(origin.values[i].node).second) ranking.push_back(origin.values[i].node);
  std::vector<std::pair<double, size_t>> rest;
  for (const ValueError& v : origin.values) {
    // A node fed an input the engine cannot hold inherits what it does alone: no error of its own.
    const double own = !v.unfed_input.empty() ? -1 : v.local ? error_score(*v.local) : 0;
    auto [it, added] = local_error.emplace(v.node, own);
    if (!added && own > it->second) it->second = own;
    if (!ranked.count(v.node)) rest.emplace_back(-error_score(v.accumulated), v.node);
  }
  std::stable_sort(rest.begin(), rest.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [score, node] : rest)
    if (ranked.insert(node).second) ranking.push_back(node);
  if (options.log)
    options.log("ranking: " + std::to_string(origin.top_local.size()) + " nodes add error alone (" +
                std::to_string(origin.local_runs) + " run alone)");
  traced = origin;
  return ranking;
}

}  // namespace

std::vector<size_t> float_nodes(const Oracle& oracle) {
  const Graph& g = oracle.model().graph;
  std::vector<size_t> out;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (is_constant_node(g.nodes[i])) continue;
    bool produces_float = false;
    for (const auto& v : g.nodes[i].outputs)
      if (const Tensor* t = v.empty() ? nullptr : oracle.recorded().find(v)) produces_float |= is_float(t->dtype());
    if (produces_float) out.push_back(i);
  }
  return out;
}

namespace {

// AutoCast's default rule (data_max 512 on node outputs, init_max 65504 on the weights a node
// reads) on the recorded reference values, and one check of the set it gives.
void compare_with_autocast_rule(const std::vector<Oracle*>& samples, const KeepSetProblem& problem,
                                std::atomic<bool>& cancelled, PrecisionOutcome& out) {
  Oracle& oracle = *samples[0];
  const Graph& g = oracle.model().graph;
  PrecisionOutcome::RuleSet rule;
  std::vector<size_t> kept;
  const auto value_max = [&](const std::string& v) { return max_magnitude(oracle.recorded().find(v)); };
  for (size_t n = 0; n < g.nodes.size(); ++n)
    if (std::binary_search(problem.candidates.begin(), problem.candidates.end(), n) &&
        autocast_keeps(g, n, value_max, {rule.data_max, rule.init_max}))
      kept.push_back(n);
  for (size_t n : kept) rule.nodes.push_back(g.nodes[n].name);
  const Verdict v = check_set(samples, problem.check, kept, &cancelled);
  if (v.cancelled || v.invalid) return;
  rule.passes = !v.signature.fails();
  out.autocast_rule = std::move(rule);
}

}  // namespace

Expected<PrecisionOutcome> find_fp32_nodes(std::vector<Oracle*> samples, const PrecisionOptions& options,
                                           std::stop_token stop) {
  if (samples.empty()) return make_error("no input sample");
  Oracle& oracle = *samples[0];
  if (!is_precision_strategy(options.strategy)) return make_error("unknown precision strategy '" + options.strategy + "'");
  if (!oracle.spec() || !oracle.spec()->controls_precision())
    return make_error("engine '" + oracle.options().engine +
                      "' takes no per-node precision (opt:fp16 or opt:bf16, trt:fp16, trt:bf16 or trt:int8, or a cmd:/check: template using "
                      "{fp32_nodes} or {fp32_nodes_file})");
  const Graph& g = oracle.model().graph;
  const auto candidates = float_nodes(oracle);
  std::vector<bool> pinnable(g.nodes.size(), false);
  for (size_t n : candidates) {
    if (g.nodes[n].name.empty()) return make_error("node " + std::to_string(n) + " (" + g.nodes[n].op_type + ") has no name");
    pinnable[n] = true;
  }
  if (candidates.empty()) return make_error("no node computes a float value: precision cannot matter");

  std::atomic<bool> cancelled{false};
  std::stop_callback on_stop(stop, [&] { cancelled = true; });
  PrecisionOutcome out;
  out.candidates = candidates.size();
  out.samples = samples.size();
  KeepSetProblem problem;
  problem.candidates = candidates;
  problem.check = [&](Oracle& sample, const std::vector<size_t>& set, const std::atomic<bool>* cancel) {
    return run_with_fp32_nodes(sample, names_of(g, set, pinnable), cancel);
  };
  problem.rank = [&](Oracle& failing, std::map<size_t, double>& local_error, std::optional<ErrorOrigin>& origin) {
    return rank_by_added_error(failing, options, &cancelled, local_error, origin);
  };
  bool searched = false;
  REDUCE_TRY(search_keep_set(samples, problem, options, cancelled, out, searched));
  if (searched && !out.stopped && !cancelled && oracle.engine_converts_to())
    compare_with_autocast_rule(samples, problem, cancelled, out);
  return out;
}

std::string tensorrt_flags(const std::vector<PinnedNode>& pinned) {
  std::string value;
  for (size_t i = 0; i < pinned.size(); ++i) value += (i ? "," : "") + pinned[i].name + ":fp32";
  return "trtexec --onnx=model.onnx --fp16 --precisionConstraints=obey " + shell_word("--layerPrecisions=" + value);
}

std::string exact_regex(const std::string& name) {
  std::string out = "^";
  for (unsigned char c : name) {
    if (!std::isalnum(c) && c != '_' && c < 0x80) out += '\\';
    out += static_cast<char>(c);
  }
  return out + "$";
}

std::string autocast_command(const std::vector<PinnedNode>& pinned, DType to, const std::string& output) {
  std::string s = "python -m modelopt.onnx.autocast --onnx_path model.onnx --output_path " + shell_word(output) +
                  " --low_precision_type " + (to == DType::BFloat16 ? "bf16" : "fp16") + " --keep_io_types";
  if (!pinned.empty()) s += " --nodes_to_exclude";
  for (const auto& p : pinned) s += " " + shell_word(exact_regex(p.name));
  return s;
}

std::string onnxruntime_float16_call(const std::vector<PinnedNode>& pinned) {
  std::string list;
  for (size_t i = 0; i < pinned.size(); ++i) list += (i ? ", " : "") + python_string(pinned[i].name);
  return "import onnx\nfrom onnxruntime.transformers.float16 import convert_float_to_float16\n"
         "converted = convert_float_to_float16(onnx.load('model.onnx'), keep_io_types=True, node_block_list=[" +
         list + "])\nonnx.save(converted, 'model_fp16.onnx')";
}

std::string polygraphy_flags(const std::vector<PinnedNode>& pinned) {
  std::string s = "polygraphy run model.onnx --trt --fp16 --precision-constraints obey --layer-precisions";
  for (const auto& p : pinned) s += " " + shell_word(p.name + ":float32");
  return s;
}

}  // namespace reduce
