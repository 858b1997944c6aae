// The search for a 1-minimal set of nodes to keep in FP32: ranking, the reducer, the verdicts.
#include "session/autocast_rule.h"
#include "session/precision.h"

#include <algorithm>
#include <cmath>
#include <chrono>
#include <optional>
#include <cctype>
#include <map>
#include <unordered_set>

#include "core/candidate.h"
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

// The model with `set` in FP32 on every sample, the first (the one it fails on) first: the first
// verdict that fails, is invalid or was cancelled, else the first sample's (a pass).
Verdict check_pinned(const std::vector<Oracle*>& samples, const Fp32Nodes& set, const std::atomic<bool>* cancel) {
  Verdict first;
  for (size_t i = 0; i < samples.size(); ++i) {
    Verdict v = samples[i]->evaluate_pinned(set, cancel);
    if (v.cancelled || v.invalid || v.signature.fails()) return v;
    if (i == 0) first = std::move(v);
  }
  return first;
}

// A candidate's nodes are the set kept in FP32; it is interesting when the model then passes on
// every sample.
class PinnedSetTest : public CandidateTest {
 public:
  PinnedSetTest(const std::vector<Oracle*>& samples, std::vector<bool> pinnable)
      : samples_(samples), pinnable_(std::move(pinnable)) {}
  TestResult test(const Candidate& c, const std::atomic<bool>& cancel) override {
    const Verdict v = check_pinned(samples_, names_of(samples_[0]->model().graph, c.nodes, pinnable_), &cancel);
    if (v.cancelled) return {TestOutcome::Cancelled, false, {}};
    if (v.invalid) return {TestOutcome::Invalid, false, {}};
    return {v.signature.fails() ? TestOutcome::Uninteresting : TestOutcome::Interesting, false, {}};
  }

 private:
  const std::vector<Oracle*>& samples_;
  std::vector<bool> pinnable_;
};

// Nodes by the error they add when run alone (largest first), then by the growth of their
// accumulated error; nodes never compared come last.
std::vector<size_t> rank_by_added_error(Oracle& oracle, const PrecisionOptions& options, const std::atomic<bool>* cancel,
                                        std::map<size_t, double>& local_error, std::optional<ErrorOrigin>& traced) {
  auto layers = oracle.compare_layers(cancel);
  if (!layers) {
    if (options.log) options.log("ranking: layerwise run failed (" + layers.error().message() + "); nodes unranked");
    return {};
  }
  ErrorOriginOptions eo;
  eo.max_local_runs = options.max_local_runs;
  eo.jobs = options.jobs;
  eo.top = SIZE_MAX;
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

// The two checks before the search: the model fails as it is and passes with every candidate in
// FP32. False when that already decides the outcome (stopped, does not fail, fails even in FP32).
// The model is checked on the samples in order up to the first it fails on, which moves to the
// front of `samples` (the search checks it first; the ranking uses it).
Expected<bool> worth_searching(std::vector<Oracle*>& samples, const std::vector<size_t>& candidates,
                               const std::vector<bool>& pinnable, std::atomic<bool>& cancelled, PrecisionOutcome& out) {
  const Graph& g = samples[0]->model().graph;
  for (size_t i = 0; i < samples.size(); ++i) {
    Verdict v = samples[i]->evaluate(Candidate::whole(g), &cancelled);
    if (v.cancelled || cancelled) {
      out.stopped = true;
      return false;
    }
    if (v.invalid) return make_error("the model cannot be checked: " + v.invalid_reason);
    if (i == 0 || v.signature.fails()) out.before = std::move(v);
    if (out.before.signature.fails()) {
      out.failing_sample = i;
      std::rotate(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(i), samples.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      break;
    }
  }
  if (!out.before.signature.fails()) {
    out.kind = PrecisionOutcome::Kind::DoesNotFail;
    return false;
  }
  Oracle& oracle = *samples[0];
  oracle.set_target(out.before.signature);
  out.after = check_pinned(samples, names_of(g, candidates, pinnable), &cancelled);
  if (out.after.cancelled || cancelled) {
    out.stopped = true;
    return false;
  }
  if (out.after.invalid) return make_error("the model with every float node in FP32 cannot be checked: " + out.after.invalid_reason);
  if (out.after.signature.fails()) {
    out.kind = PrecisionOutcome::Kind::FailsEvenInFp32;
    return false;
  }
  return true;
}

// The reducer's precision strategy over the candidates (ranked by the error each adds alone); the
// set it ends with, in topological order, and the model's check with that set in FP32.
Status search_fp32_set(const std::vector<Oracle*>& samples, const PrecisionOptions& options,
                       const std::vector<size_t>& candidates, const std::vector<bool>& pinnable,
                       std::atomic<bool>& cancelled, PrecisionOutcome& out) {
  Oracle& oracle = *samples[0];
  const Graph& g = oracle.model().graph;
  std::map<size_t, double> local_error;
  ReduceOptions ro;
  ro.strategy = "precision";
  ro.jobs = options.jobs;
  ro.ranking = rank_by_added_error(oracle, options, &cancelled, local_error, out.origin);
  ro.start = Candidate{};
  ro.start->nodes = candidates;
  ro.stop = &cancelled;
  ro.log = options.log;
  PinnedSetTest test(samples, pinnable);
  REDUCE_ASSIGN(ReduceResult r, reduce_model(oracle.model(), test, ro));
  for (size_t n : oracle.extractor().index().topological_order())
    if (pinnable[n] && std::binary_search(r.best.nodes.begin(), r.best.nodes.end(), n)) {
      auto it = local_error.find(n);
      out.pinned.push_back({n, g.nodes[n].name, g.nodes[n].op_type, it == local_error.end() ? 0.0 : it->second});
    }
  out.checks = r.checks;
  out.one_minimal = r.one_minimal;
  out.stopped = r.stopped;
  out.seconds = r.seconds;
  return {};
}

// Runs the answer again (never from a cache): the set in FP32 must pass on every sample and the
// model as it is must fail the same way, `confirm` times each. The set's first run is `after`.
void confirm_answer(const std::vector<Oracle*>& samples, const std::vector<bool>& pinnable, int confirm,
                    std::atomic<bool>& cancelled, PrecisionOutcome& out) {
  Oracle& oracle = *samples[0];
  const Graph& g = oracle.model().graph;
  std::vector<size_t> set;
  for (const auto& p : out.pinned) set.push_back(p.node);
  for (int r = 0; r < confirm; ++r) {
    Verdict with_set = check_pinned(samples, names_of(g, set, pinnable), &cancelled);
    Verdict as_is = oracle.rerun(Candidate::whole(g), &cancelled);
    if (with_set.cancelled || as_is.cancelled || cancelled) {
      out.stopped = true;
      return;
    }
    ++out.confirm_runs;
    out.set_passed_again += !with_set.invalid && !with_set.fails();
    out.original_failed_again += oracle.match(as_is) == SignatureMatch::Same;
    if (r == 0) out.after = std::move(with_set);
  }
}

// Polygraphy's `debug precision`: keeps the first K float nodes of the topological order (or the
// last K) in FP32 and searches K, by bisection (assumes more nodes in FP32 never fails again) or
// one node more per check. The model fails at K = 0 and passes at K = all (checked before).
Status search_fp32_prefix(const std::vector<Oracle*>& samples, const PrecisionOptions& options,
                          const std::vector<bool>& pinnable, std::atomic<bool>& cancelled, PrecisionOutcome& out) {
  Oracle& oracle = *samples[0];
  const Graph& g = oracle.model().graph;
  std::vector<size_t> order;
  for (size_t n : oracle.extractor().index().topological_order())
    if (pinnable[n]) order.push_back(n);
  if (options.from_outputs) std::reverse(order.begin(), order.end());
  auto first = [&](size_t k) { return std::vector<size_t>(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k)); };
  size_t passes_at = order.size(), fails_at = 0;  // known: K = all passes, K = 0 fails
  Verdict best = out.after;
  const auto start = std::chrono::steady_clock::now();
  // One set: true when the model passes with it; nullopt when stopped.
  auto passes = [&](size_t k) -> Expected<std::optional<bool>> {
    const Verdict v = check_pinned(samples, names_of(g, first(k), pinnable), &cancelled);
    if (v.cancelled || cancelled) return std::optional<bool>{};
    if (v.invalid) return make_error("the model with " + std::to_string(k) + " nodes in FP32 cannot be checked: " + v.invalid_reason);
    ++out.checks;
    if (!v.signature.fails()) best = v;
    if (options.log)
      options.log(options.strategy + ": " + std::to_string(k) + " of " + std::to_string(order.size()) + " nodes in FP32: " +
                  (v.signature.fails() ? "fails" : "passes"));
    return std::optional<bool>{!v.signature.fails()};
  };
  while (passes_at - fails_at > 1) {
    const size_t k = options.strategy == "polygraphy-linear" ? fails_at + 1 : fails_at + (passes_at - fails_at) / 2;
    REDUCE_ASSIGN(const std::optional<bool> answer, passes(k));
    if (!answer) {
      out.stopped = true;
      break;
    }
    (*answer ? passes_at : fails_at) = k;
    // Linear search stops at the first K that passes.
    if (*answer && options.strategy == "polygraphy-linear") break;
  }
  std::vector<size_t> set = first(passes_at);
  if (options.from_outputs) std::reverse(set.begin(), set.end());  // reported in topological order
  for (size_t n : set) out.pinned.push_back({n, g.nodes[n].name, g.nodes[n].op_type, 0.0});
  out.after = best;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {};
}

// AutoCast's default rule (data_max 512 on node outputs, init_max 65504 on the weights a node
// reads) on the recorded reference values, and one check of the set it gives.
void compare_with_autocast_rule(const std::vector<Oracle*>& samples, const std::vector<bool>& pinnable,
                                std::atomic<bool>& cancelled, PrecisionOutcome& out) {
  Oracle& oracle = *samples[0];
  const Graph& g = oracle.model().graph;
  PrecisionOutcome::RuleSet rule;
  std::vector<size_t> kept;
  const auto value_max = [&](const std::string& v) { return max_magnitude(oracle.recorded().find(v)); };
  for (size_t n = 0; n < g.nodes.size(); ++n)
    if (pinnable[n] && autocast_keeps(g, n, value_max, {rule.data_max, rule.init_max})) kept.push_back(n);
  for (size_t n : kept) rule.nodes.push_back(g.nodes[n].name);
  const Verdict v = check_pinned(samples, names_of(g, kept, pinnable), &cancelled);
  if (v.cancelled || v.invalid) return;
  rule.passes = !v.signature.fails();
  out.autocast_rule = std::move(rule);
}

}  // namespace

Expected<PrecisionOutcome> find_fp32_nodes(std::vector<Oracle*> samples, const PrecisionOptions& options,
                                           std::stop_token stop) {
  if (samples.empty()) return make_error("no input sample");
  Oracle& oracle = *samples[0];
  if (std::find(std::begin(kPrecisionStrategies), std::end(kPrecisionStrategies), options.strategy) ==
      std::end(kPrecisionStrategies))
    return make_error("unknown precision strategy '" + options.strategy + "'");
  auto spec = parse_engine_spec(oracle.options().engine);
  if (oracle.options().engine_instance || !spec || !spec->controls_precision())
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
  REDUCE_ASSIGN(const bool search, worth_searching(samples, candidates, pinnable, cancelled, out));
  out.strategy = options.strategy + (options.strategy != "default" && options.from_outputs ? " reverse" : "");
  if (search && options.strategy == "default")
    REDUCE_TRY(search_fp32_set(samples, options, candidates, pinnable, cancelled, out));
  else if (search)
    REDUCE_TRY(search_fp32_prefix(samples, options, pinnable, cancelled, out));
  if (search && !out.stopped) confirm_answer(samples, pinnable, std::max(options.confirm, 1), cancelled, out);
  if (search && !out.stopped && !cancelled && oracle.engine_converts_to())
    compare_with_autocast_rule(samples, pinnable, cancelled, out);
  return out;
}

namespace {
// One shell word: single-quoted when it holds anything but safe characters (node names are data).
std::string shell_word(const std::string& s) {
  const bool safe = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == '/' || c == ':' ||
           c == ',' || c == '=';
  });
  if (safe) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}
}  // namespace

std::string tensorrt_flags(const std::vector<PinnedNode>& pinned) {
  std::string value;
  for (size_t i = 0; i < pinned.size(); ++i) value += (i ? "," : "") + pinned[i].name + ":fp32";
  return "trtexec --onnx=model.onnx --fp16 --precisionConstraints=obey " + shell_word("--layerPrecisions=" + value);
}

// A node name as a Python regular expression matching exactly it (re.escape's rule: every
// character that is not a letter, a digit or '_' escaped).
std::string exact_regex(const std::string& name) {
  std::string out = "^";
  for (unsigned char c : name) {
    if (!std::isalnum(c) && c != '_' && c < 0x80) out += '\\';
    out += static_cast<char>(c);
  }
  return out + "$";
}

// A Python string literal ('...') of `s`.
std::string python_string(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' || c == '\\' ? std::string("\\") + c : std::string(1, c);
  return out + "'";
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
