// The oracle: candidate materialization from recorded values, engine runs, verdicts and their cache.
#include "oracle/oracle.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <chrono>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "core/half.h"
#include "core/model_io.h"
#include "adapters/command_template.h"
#include "leading_slice.h"

namespace reduce {

namespace {

// The names a failure message may quote (graph, nodes, values), in subgraph bodies too: a message
// about a node of a body masks the same way once the body is inlined.
void add_names(const Graph& graph, std::unordered_set<std::string>& names) {
  names.insert(graph.name);
  for (const Node& n : graph.nodes) {
    if (!n.name.empty()) names.insert(n.name);
    for (const auto& v : n.outputs) if (!v.empty()) names.insert(v);
    for (const auto& v : n.inputs) if (!v.empty()) names.insert(v);
    for (const auto& a : n.attributes) {
      if (a.g) add_names(*a.g, names);
      for (const auto& g : a.graphs) add_names(*g, names);
    }
  }
  for (const auto& vi : graph.inputs) names.insert(vi.name);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Declares new shapes for (sliced) inputs; inferred shapes of everything downstream are dropped.
void redeclare_inputs(Model& model, const std::map<std::string, Shape, std::less<>>& shapes) {
  for (auto& vi : model.graph.inputs) {
    auto it = shapes.find(vi.name);
    if (it == shapes.end()) continue;
    vi.type.dims.clear();
    for (int64_t d : it->second) vi.type.dims.push_back(Dim::fixed(d));
    vi.type.has_shape = true;
  }
  model.graph.value_info.clear();
  for (auto& vi : model.graph.outputs) {
    vi.type.dims.clear();
    vi.type.has_shape = false;
  }
}

// A tensor declaration whose shape inference left dims unknown gets the shape `value` has (the
// value it had in the original run, as the engine saw it), when the element types agree.
void declare_shape_of(ValueInfo& vi, const Tensor* value) {
  bool unknown = !vi.type.has_shape;
  for (const Dim& d : vi.type.dims) unknown |= !d.is_static();
  if (!unknown || !vi.type.is_tensor() || !value || value->dtype() != static_cast<DType>(vi.type.elem_type)) return;
  vi.type.has_shape = true;
  vi.type.dims.clear();
  for (int64_t d : value->shape()) vi.type.dims.push_back(Dim::fixed(d));
}

}  // namespace

Expected<std::unique_ptr<Oracle>> Oracle::create(const Model& model, std::vector<NamedTensor> inputs,
                                                 OracleOptions options) {
  std::unique_ptr<Oracle> o(new Oracle());
  o->model_ = &model;
  o->inputs_ = std::move(inputs);
  o->options_ = std::move(options);
  // An engine instance needs no spec: `engine` only names it then.
  EngineSpec spec;
  if (!o->options_.engine_instance) {
    REDUCE_ASSIGN(spec, parse_engine_spec(o->options_.engine));
  }
  REDUCE_ASSIGN(const EngineSpec reference, parse_engine_spec(o->options_.reference));
  o->external_ = !o->options_.engine_instance && spec.external();
  o->spec_ = spec;
  if (o->options_.slots < 1) return make_error("the number of slots must be at least 1");
  bool per_slot = false;
  for (const auto& e : o->options_.environment.env) per_slot |= e.find("{slot}") != std::string::npos;
  const int slots = per_slot ? o->options_.slots : 1;
  for (int slot = 0; slot < slots; ++slot) {
    EngineEnvironment env = o->options_.environment;
    for (auto& e : env.env) e = fill_placeholders(e, {{"slot", std::to_string(slot)}});
    o->slot_environments_.push_back(env);
    if (o->options_.engine_instance) {
      o->slot_engines_.push_back(o->options_.engine_instance);
    } else if (spec.gives_values()) {
      REDUCE_ASSIGN(auto engine, make_engine(spec, env));
      o->slot_engines_.push_back(std::move(engine));
    }
  }
  o->slot_busy_.assign(slots, false);
  if (!o->slot_engines_.empty()) o->engine_ = o->slot_engines_[0];
  if (!o->options_.engine_instance && !spec.gives_values()) {
    REDUCE_ASSIGN(CheckScript script, CheckScript::parse(spec.command, spec.fp32_nodes));
    o->check_script_ = std::make_unique<CheckScript>(std::move(script));
  }
  REDUCE_ASSIGN(o->reference_, make_engine(reference, o->options_.environment));
  for (const std::string& pattern : o->options_.fail_regexes) {
    try {
      o->fail_regexes_.emplace_back(pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return make_error("invalid --fail-regex '" + pattern + "': " + e.what());
    }
  }
  REDUCE_ASSIGN(Extractor extractor, Extractor::create(model));
  o->extractor_ = std::make_unique<Extractor>(std::move(extractor));
  if (!o->options_.record.ledger) o->options_.record.ledger = o->options_.environment.ledger;
  Oracle* self = o.get();
  if (!o->options_.record.given.empty() && !o->options_.record.on_given)
    o->options_.record.on_given = [self](const std::string& name, const Tensor& computed, const Tensor& given) {
      OutputComparison c = compare_tensors(name, computed, given, self->options_.tolerance);
      if (!c.passed) self->given_disagreements_.push_back(std::move(c));
    };
  // Expected values from elsewhere (a check: script decides alone; --expected gives every graph
  // output): a node the reference cannot run stops nothing, only the values that depend on it are
  // unknown.
  bool outputs_given = !o->options_.record.given.empty();
  for (const auto& vi : model.graph.outputs)
    outputs_given &= std::any_of(o->options_.record.given.begin(), o->options_.record.given.end(),
                                 [&](const NamedTensor& g) { return g.name == vi.name; });
  o->options_.record.partial = o->check_script_ != nullptr || outputs_given;
  const auto start = std::chrono::steady_clock::now();
  auto recorded = RecordedValues::record(model, *o->reference_, o->inputs_, o->options_.record);
  if (!recorded) return make_error("the reference (" + o->options_.reference + ") cannot run the model: " + recorded.error().message());
  o->recorded_ = std::make_unique<RecordedValues>(std::move(*recorded));
  o->options_.record.cancel = nullptr;  // the caller's flag need not outlive create()
  o->given_values_ = o->options_.record.given.size();
  o->options_.record.given.clear();     // recorded now: no second copy
  o->options_.record.on_given = nullptr;
  o->reference_seconds_ = seconds_since(start);
  add_names(model.graph, o->names_);
  return o;
}

Oracle::~Oracle() {
  if (const auto& ledger = options_.environment.ledger) ledger->discharge(kept_bytes_);
}

// A tensor of `like`'s float type and shape with every element `value`.
static Expected<Tensor> filled_tensor(const Tensor& like, double value) {
  REDUCE_ASSIGN(Tensor t, Tensor::allocate(like.dtype(), like.shape()));
  // +0 is all zero bits in every float type, and allocate zero-fills: writing the zeros again
  // would make a large weight resident (it is mapped, and only written pages are).
  if (value == 0.0 && !std::signbit(value) && dtype_is_float(like.dtype())) return t;
  switch (like.dtype()) {
    case DType::Float: for (auto& x : t.mutable_data<float>()) x = static_cast<float>(value); break;
    case DType::Double: for (auto& x : t.mutable_data<double>()) x = value; break;
    case DType::Float16: for (auto& x : t.mutable_data<uint16_t>()) x = float_to_half(static_cast<float>(value)); break;
    case DType::BFloat16: for (auto& x : t.mutable_data<uint16_t>()) x = float_to_bfloat16(static_cast<float>(value)); break;
    default: return make_error("cannot fill a tensor of type " + std::string(dtype_name(like.dtype())));
  }
  return t;
}

Expected<Tensor> Oracle::filled(const std::string& name, const Tensor& like, double value) const {
  std::lock_guard<std::mutex> lock(fills_mutex_);
  std::erase_if(fills_, [](const auto& held) { return held.second.owner.expired(); });
  const auto key = std::make_pair(name, std::bit_cast<uint64_t>(value));
  if (auto it = fills_.find(key); it != fills_.end() && it->second.dtype == like.dtype() && it->second.shape == like.shape())
    if (auto owner = it->second.owner.lock())
      return Tensor::view(like.dtype(), like.shape(), std::move(owner), it->second.data, like.byte_size());
  REDUCE_ASSIGN(Tensor t, filled_tensor(like, value));
  fills_[key] = {t.owner(), t.bytes().data(), t.dtype(), t.shape()};
  // Read-only for every candidate, the first included: no engine may write a weight it shares.
  return Tensor::view(t.dtype(), t.shape(), t.owner(), t.bytes().data(), t.byte_size());
}

Status Oracle::simplify(Model& extracted, const Candidate& c) const {
  for (const auto& [name, value] : c.filled) {
    auto it = std::find_if(extracted.graph.initializers.begin(), extracted.graph.initializers.end(),
                           [&](const Initializer& init) { return init.name == name; });
    if (it == extracted.graph.initializers.end()) return make_error("no initializer '" + name + "' to fill");
    REDUCE_ASSIGN(it->tensor, filled(name, it->tensor, value));
  }
  for (const auto& [index, attr] : c.dropped_attributes) {
    if (index >= model_->graph.nodes.size()) return make_error("no node " + std::to_string(index));
    const Node& original = model_->graph.nodes[index];
    // Node outputs are unique names: they find the node in the extracted graph.
    auto it = std::find_if(extracted.graph.nodes.begin(), extracted.graph.nodes.end(), [&](const Node& n) {
      return n.op_type == original.op_type && n.outputs == original.outputs;
    });
    if (it == extracted.graph.nodes.end()) return make_error("node " + std::to_string(index) + " is not kept");
    std::erase_if(it->attributes, [&](const Attribute& a) { return a.name == attr; });
  }
  return {};
}

Expected<CandidateRun> Oracle::materialize(const Candidate& c) const {
  ExtractOptions eo;
  eo.outputs = c.outputs;
  for (const auto& name : c.frozen) {
    const Tensor* t = recorded_->find(name);
    if (!t) return make_error("no recorded value for frozen '" + name + "'");
    eo.frozen[name] = *t;
  }
  CandidateRun run;
  REDUCE_ASSIGN(run.model, extractor_->extract(c.nodes, eo));
  std::unordered_set<std::string_view> original_inputs;
  for (const auto& vi : model_->graph.inputs) original_inputs.insert(vi.name);
  for (auto& vi : run.model.graph.inputs) {
    if (run.model.graph.find_initializer(vi.name)) continue;
    const Tensor* t = recorded_->find(vi.name);
    if (!t) return make_error("no recorded value for input '" + vi.name + "'");
    // Cut values only: the model's own inputs keep their declaration.
    if (!original_inputs.count(vi.name)) declare_shape_of(vi, t);
    auto shape = c.input_shapes.find(vi.name);
    if (shape == c.input_shapes.end()) {
      run.inputs.push_back({vi.name, *t});
    } else {
      REDUCE_ASSIGN(Tensor sliced, leading_slice(*t, shape->second));
      run.inputs.push_back({vi.name, std::move(sliced)});
    }
  }
  // Outputs too: a reproducer declares the shapes its outputs had in the original run, where
  // shape inference gave up (ops newer than the ONNX library), so that importers see them.
  if (c.input_shapes.empty())
    for (auto& vi : run.model.graph.outputs) declare_shape_of(vi, recorded_->find(vi.name));
  REDUCE_TRY(simplify(run.model, c));
  if (c.input_shapes.empty() && c.filled.empty() && c.dropped_attributes.empty()) {
    for (const auto& vi : run.model.graph.outputs) {
      const Tensor* t = recorded_->find(vi.name);
      if (!t && check_script_) continue;  // the script decides; nothing is compared
      if (!t) return make_error("no recorded value for output '" + vi.name + "'");
      run.expected.push_back({vi.name, *t});
    }
    return run;
  }
  // Reduced shapes or simplified weights and attributes: the recorded outputs no longer apply;
  // the reference computes them.
  redeclare_inputs(run.model, c.input_shapes);
  REDUCE_ASSIGN(auto prepared, reference_->prepare(run.model));
  TensorMap feed;
  for (const auto& in : run.inputs) feed[in.name] = in.tensor;
  REDUCE_ASSIGN(TensorMap values, prepared->run(feed));
  for (const auto& vi : run.model.graph.outputs) run.expected.push_back({vi.name, values[vi.name]});
  for (auto& vi : run.model.graph.outputs)
    if (auto it = values.find(vi.name); it != values.end()) declare_shape_of(vi, &it->second);
  return run;
}

Verdict Oracle::verdict_from_error(const Error& error) const {
  Verdict v;
  FailureSignature& s = v.signature;
  s.message = error.message();
  switch (error.kind) {
    case ErrorKind::Crash: s.kind = FailureKind::Crash; s.signal = error.signal; break;
    case ErrorKind::Timeout: s.kind = FailureKind::Timeout; break;
    case ErrorKind::Error: s.kind = FailureKind::Error; break;
    case ErrorKind::Setup:
      // The tool could not run the engine: not a verdict on the model, never a reproducer.
      v.invalid = true;
      v.invalid_reason = "not the engine's failure: " + error.message();
      return v;
  }
  s.normalized = normalize_message(s.message, names_);
  return v;
}

Verdict Oracle::run_candidate(const Candidate& c, const std::atomic<bool>* cancel, TensorMap* actual,
                              uint64_t actual_limit) {
  auto run = materialize(c);
  if (!run) {
    Verdict v;
    v.invalid = true;
    v.invalid_reason = run.error().message();
    return v;
  }
  return run_materialized(*run, cancel, actual, actual_limit);
}

Verdict Oracle::run_materialized(const CandidateRun& run, const std::atomic<bool>* cancel, TensorMap* actual,
                                 uint64_t actual_limit) {
  if (external_) {
    if (Status st = check_model_for_engines(run.model); !st.ok()) {
      Verdict v;
      v.invalid = true;
      v.invalid_reason = st.error().message();
      return v;
    }
  }
  const SlotLease lease(*this);
  const int slot = lease.slot;
  if (check_script_) return run_check_script(*check_script_, run, slot_environments_[slot], cancel);
  return run_on(*slot_engines_[slot], run, cancel, actual, actual_limit);
}

Verdict Oracle::run_on(Engine& engine, const CandidateRun& c, const std::atomic<bool>* cancel, TensorMap* actual,
                       uint64_t actual_limit) {
  Verdict v;
  const CandidateRun* run = &c;
  const auto start = std::chrono::steady_clock::now();
  auto prepared = engine.prepare(run->model);
  if (!prepared) {
    v = verdict_from_error(prepared.error());
    v.seconds = seconds_since(start);
    return v;
  }
  TensorMap feed;
  for (const auto& in : run->inputs) feed[in.name] = in.tensor;
  // Each output is compared as the engine hands it over and then let go (kept for `actual` only
  // while they all fit in `actual_limit`), so marking every value of a large model as an output
  // never holds two copies of its activations.
  std::unordered_map<std::string_view, size_t> expected_at;
  for (size_t k = 0; k < run->expected.size(); ++k) expected_at.emplace(run->expected[k].name, k);
  std::vector<std::optional<OutputComparison>> compared(run->expected.size());
  uint64_t actual_bytes = 0;
  bool actual_complete = actual != nullptr;
  double comparing = 0;  // inside the run: not the engine's time
  auto on_output = [&](const std::string& name, Tensor value) -> Status {
    auto it = expected_at.find(name);
    if (it == expected_at.end()) return {};
    const auto compare_start = std::chrono::steady_clock::now();
    struct Timed {
      std::chrono::steady_clock::time_point start;
      double& total;
      ~Timed() { total += seconds_since(start); }
    } timed{compare_start, comparing};
    const Tensor& expected = run->expected[it->second].tensor;
    compared[it->second] = compare_tensors(name, value, expected, options_.tolerance);
    recorded_->release_pages(expected);
    if (actual_complete) {
      actual_bytes += value.byte_size();
      if (actual_bytes <= actual_limit) (*actual)[name] = std::move(value);
      else actual_complete = false, actual->clear();
    }
    return {};
  };
  RunOptions run_options;
  run_options.cancel = cancel;
  Status ran = run_streaming(**prepared, feed, run_options, on_output);
  for (const auto& in : run->inputs) recorded_->release_pages(in.tensor);
  v.seconds = std::max(0.0, seconds_since(start) - comparing);
  if (!ran.ok()) {
    if (actual) actual->clear();
    const double secs = v.seconds;
    v = verdict_from_error(ran.error());
    v.seconds = secs;
    return v;
  }
  double worst = 0;
  bool nonfinite = false, mismatch = false;
  std::string first_problem;
  for (size_t k = 0; k < run->expected.size(); ++k) {
    if (!compared[k]) {
      if (actual) actual->clear();
      return verdict_from_error(Error{{}, "engine did not return output '" + run->expected[k].name + "'"});
    }
    OutputComparison& cmp = *compared[k];
    const std::string& name = run->expected[k].name;
    if (!cmp.passed) {
      if (cmp.is_nonfinite_failure()) nonfinite = true;
      else mismatch = true;
      worst = std::max(worst, cmp.ratio);
      if (first_problem.empty())
        first_problem = "output '" + name + "': " +
                        (cmp.structural_problem.empty()
                             ? (cmp.nonfinite_new ? std::to_string(cmp.nonfinite_new) + " non-finite values where the reference is finite"
                                                  : std::to_string(cmp.mismatched) + " of " + std::to_string(cmp.elements) +
                                                        " elements differ, max abs error " + std::to_string(cmp.max_abs))
                             : cmp.structural_problem);
    }
    v.outputs.push_back(std::move(cmp));
  }
  if (nonfinite) v.signature.kind = FailureKind::NonFinite;
  else if (mismatch) v.signature.kind = FailureKind::Mismatch;
  v.signature.message = first_problem;
  v.signature.magnitude = magnitude_class(worst);
  return v;
}

namespace {
// What the outputs of failing runs may hold on to: enough for the reproducers at the end of a
// reduction, not for every marked-output candidate of a large model.
constexpr size_t kKeptRuns = 32;
constexpr size_t kKeptBytes = size_t{16} << 20;

size_t held_bytes(const TensorMap& outputs) {
  size_t bytes = 0;
  for (const auto& [name, tensor] : outputs) bytes += tensor.byte_size() + name.size();
  return bytes;
}
}  // namespace

const TensorMap* Oracle::kept_outputs(const std::pair<uint64_t, uint64_t>& key) const {
  for (const auto& [k, outputs] : kept_outputs_)
    if (k == key) return &outputs;
  return nullptr;
}

void Oracle::keep_outputs(const std::pair<uint64_t, uint64_t>& key, const TensorMap& outputs) {
  const size_t bytes = held_bytes(outputs);
  if (bytes > kKeptBytes / 4 || kept_outputs(key)) return;
  kept_outputs_.emplace_back(key, outputs);
  kept_bytes_ += bytes;
  if (const auto& ledger = options_.environment.ledger) ledger->charge(bytes);
  while (kept_outputs_.size() > kKeptRuns || kept_bytes_ > kKeptBytes) {
    const size_t dropped = held_bytes(kept_outputs_.front().second);
    kept_bytes_ -= dropped;
    if (const auto& ledger = options_.environment.ledger) ledger->discharge(dropped);
    kept_outputs_.pop_front();
  }
}

Verdict Oracle::evaluate(const Candidate& c, const std::atomic<bool>* cancel, TensorMap* actual) {
  const auto key = candidate_hash(c);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = cache_.find(key);
    const TensorMap* kept = actual ? kept_outputs(key) : nullptr;
    if (it != cache_.end() && (!actual || kept)) {
      ++stats_.cache_hits;
      if (actual) *actual = *kept;
      Verdict v = it->second;
      v.cache_hit = true;
      v.seconds = 0;
      return v;
    }
  }
  TensorMap outputs;
  // The caller's `actual` needs every output; otherwise they are kept only when small enough.
  const RunOnce run_once = [&](TensorMap* into, uint64_t limit) { return run_candidate(c, cancel, into, limit); };
  Verdict v = majority_of_runs(run_once, cancel, &outputs, actual ? UINT64_MAX : kKeptBytes / 4);
  std::lock_guard<std::mutex> lock(mutex_);
  count_evaluation(v, cancel);
  // A cancelled run may have been cut short: its verdict is not an answer, so it is not cached.
  if (v.cancelled) return v;
  cache_[key] = v;
  if (v.fails() && outputs.size() == v.outputs.size()) keep_outputs(key, outputs);
  if (actual) *actual = std::move(outputs);
  return v;
}

void Oracle::adopt(const Candidate& c, const Verdict& v) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (v.cache_hit) {
    ++stats_.cache_hits;
    return;
  }
  ++stats_.evaluations;
  stats_.engine_seconds += v.seconds;
  if (v.cancelled) return;
  if (v.invalid) ++stats_.invalid;
  cache_[candidate_hash(c)] = v;
}

Verdict Oracle::rerun(const Candidate& c, const std::atomic<bool>* cancel, TensorMap* actual) {
  Verdict v = run_candidate(c, cancel, actual, actual ? UINT64_MAX : 0);
  std::lock_guard<std::mutex> lock(mutex_);
  count_evaluation(v, cancel);
  return v;
}

void Oracle::count_evaluation(Verdict& v, const std::atomic<bool>* cancel) {
  stats_.evaluations += static_cast<uint64_t>(v.runs);
  stats_.engine_seconds += v.seconds;
  stats_.flaky += v.flaky();
  if (cancel && cancel->load()) v.cancelled = true;
  else if (v.invalid) ++stats_.invalid;
}

void Oracle::set_tolerance(const Tolerance& tolerance) {
  std::lock_guard<std::mutex> lock(mutex_);
  options_.tolerance = tolerance;
  cache_.clear();
  kept_outputs_.clear();
  if (const auto& ledger = options_.environment.ledger) ledger->discharge(kept_bytes_);
  kept_bytes_ = 0;
  has_target_ = false;
}

Verdict Oracle::evaluate_pinned(const Fp32Nodes& nodes, const std::atomic<bool>* cancel) {
  Verdict v;
  auto invalid = [&](std::string why) {
    v.invalid = true;
    v.invalid_reason = std::move(why);
    return v;
  };
  if (options_.engine_instance) return invalid("an engine given as an instance takes no FP32 nodes");
  auto pinned = with_fp32_nodes(spec_, nodes);
  if (!pinned) return invalid(pinned.error().message());
  auto run = materialize(Candidate::whole(model_->graph));
  if (!run) return invalid(run.error().message());
  const SlotLease lease(*this);
  const int slot = lease.slot;
  if (!pinned->gives_values()) {
    auto script = CheckScript::parse(pinned->command, pinned->fp32_nodes);
    if (!script) return invalid(script.error().message());
    v = run_check_script(*script, *run, slot_environments_[slot], cancel);
  } else {
    auto engine = make_engine(*pinned, slot_environments_[slot]);
    if (!engine) return invalid(engine.error().message());
    v = run_on(**engine, *run, cancel, nullptr, 0);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  ++stats_.evaluations;
  if (cancel && cancel->load()) v.cancelled = true;
  else if (v.invalid) ++stats_.invalid;
  return v;
}

SignatureMatch Oracle::match(const Verdict& v) const {
  if (v.invalid) return SignatureMatch::Different;
  if (!fail_regexes_.empty())
    return !v.signature.fails() ? SignatureMatch::Pass
           : matches_fail_regex(v.signature.message) ? SignatureMatch::Same
                                                     : SignatureMatch::Different;
  return match_signature(target_, v.signature);
}

Verdict Oracle::majority_of_runs(const RunOnce& run_once, const std::atomic<bool>* cancel, TensorMap* actual,
                                 uint64_t actual_limit) {
  Verdict first = run_once(actual, actual_limit);
  const int n = options_.repeat;
  if (n <= 1 || first.invalid || (cancel && cancel->load())) return first;
  // Before the target is known (the original's own runs), any failure counts.
  auto shows = [&](const Verdict& v) { return has_target_ ? match(v) == SignatureMatch::Same : v.signature.fails(); };
  double seconds = first.seconds;
  int failing = shows(first);
  std::vector<Verdict> runs;
  runs.reserve(static_cast<size_t>(n));
  runs.push_back(std::move(first));
  for (int r = 1; r < n; ++r) {
    Verdict again = run_once(nullptr, 0);
    seconds += again.seconds;
    if (cancel && cancel->load()) {
      again.runs = r + 1;
      again.seconds = seconds;
      return again;
    }
    failing += shows(again);
    runs.push_back(std::move(again));
  }
  // The first run with the decided outcome is the verdict: deterministic for the same answers.
  const bool fails = 2 * failing > n && (!has_target_ || failing >= original_failing_runs_);
  if (!has_target_)
    for (int seen = original_failing_runs_.load(); seen < failing && !original_failing_runs_.compare_exchange_weak(seen, failing);) {
    }
  size_t pick = 0;
  while (pick + 1 < runs.size() && shows(runs[pick]) != fails) ++pick;
  if (pick != 0 && actual) actual->clear();  // the outputs were the first run's
  Verdict v = std::move(runs[pick]);
  v.runs = n;
  v.failing_runs = failing;
  v.seconds = seconds;
  return v;
}

SignatureMatch Oracle::classify(const Verdict& v) {
  const SignatureMatch m = match(v);
  if (m == SignatureMatch::Different && !v.cache_hit) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.slipped;
  }
  return m;
}

std::string Oracle::reference_refusal_note() const {
  const RecordedValues& r = *recorded_;
  if (r.refused_nodes() == 0) return {};
  return "the reference (" + options_.reference + ") cannot run " + std::to_string(r.refused_nodes()) + " node(s), the first: " +
         r.refusal() + "; the expected outputs come from " +
         (check_script_ ? std::string("the check script") : options_.record.given_source) + ", and the " +
         std::to_string(r.unknown_values()) + " value(s) that depend on them are unknown (candidates that need one are skipped)";
}

bool Oracle::matches_fail_regex(const std::string& text) const {
  return std::any_of(fail_regexes_.begin(), fail_regexes_.end(),
                     [&](const std::regex& re) { return std::regex_search(text, re); });
}

OracleStatistics Oracle::statistics() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

int Oracle::acquire_slot() {
  std::unique_lock<std::mutex> lock(slot_mutex_);
  while (true) {
    for (size_t s = 0; s < slot_busy_.size(); ++s)
      if (!slot_busy_[s] || slot_busy_.size() == 1) {
        slot_busy_[s] = true;
        return static_cast<int>(s);
      }
    slot_free_.wait(lock);
  }
}

void Oracle::release_slot(int slot) {
  {
    std::lock_guard<std::mutex> lock(slot_mutex_);
    if (slot_busy_.size() > 1) slot_busy_[slot] = false;
  }
  slot_free_.notify_one();
}

Verdict Oracle::run_check_script(const CheckScript& script, const CandidateRun& run, const EngineEnvironment& environment,
                                 const std::atomic<bool>* cancel) {
  Verdict v;
  TensorMap inputs;
  for (const auto& in : run.inputs) inputs[in.name] = in.tensor;
  auto result = script.run(run.model, inputs, environment, cancel);
  if (!result) {
    v.invalid = true;
    v.invalid_reason = result.error().message();
    return v;
  }
  v.seconds = result->seconds;
  FailureSignature& s = v.signature;
  // The tail of the output identifies the failure for humans; --fail-regex sees all of it.
  s.message = result->output;
  if (result->timed_out) {
    s.kind = FailureKind::Timeout;
    return v;
  }
  if (int sig = result->crash_signal(); sig != 0) {
    s.kind = FailureKind::Crash;
    s.signal = sig;
    return v;
  }
  const int code = result->exit_code;
  auto listed = [&](const std::vector<int>& codes) { return std::find(codes.begin(), codes.end(), code) != codes.end(); };
  // Polygraphy's rule (the help of `polygraphy debug`'s check options; docs/oracle.md): an ignored code
  // passes; with --fail-code only those codes fail, and only when a regex (if any) matches too;
  // without it a regex decides alone (a match fails even on exit 0), else any non-zero code fails.
  bool fails;
  if (listed(options_.ignore_fail_codes)) fails = false;
  else if (!options_.fail_codes.empty()) fails = listed(options_.fail_codes) && (fail_regexes_.empty() || matches_fail_regex(result->output));
  else if (!fail_regexes_.empty()) fails = matches_fail_regex(result->output);
  else fails = code != 0;
  if (fails) {
    s.kind = FailureKind::Error;
    s.normalized = "check script exit code " + std::to_string(code);
  }
  return v;
}

}  // namespace reduce
