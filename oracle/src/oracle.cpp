// The oracle: engine runs of candidates, majorities, comparison into verdicts and counting.
#include "oracle/oracle.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "core/model_io.h"
#include "adapters/command_template.h"
#include "fail_criteria.h"
#include "slot_pool.h"
#include "verdict_cache.h"

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

// The model's own operators are never masked as names, even those the ONNX library has no schema
// for (com.microsoft's FusedMatMul), as normalize_message never masks ONNX's.
void remove_op_types(const Graph& graph, std::unordered_set<std::string>& names) {
  for (const Node& n : graph.nodes) {
    names.erase(n.op_type);
    for (const auto& a : n.attributes) {
      if (a.g) remove_op_types(*a.g, names);
      for (const auto& g : a.graphs) remove_op_types(*g, names);
    }
  }
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Values shape inference leaves untyped (after an op it does not know, e.g. a contrib op that only
// the reference runs, `--reference ort`) take the type of what the reference computed, so that a
// candidate can cut there and feed the recorded value.
void learn_recorded_types(const Model& model, const RecordedValues& recorded, Extractor& extractor) {
  for (const auto& node : model.graph.nodes)
    for (const auto& v : node.outputs) {
      const ValueType* known = v.empty() ? nullptr : extractor.type_of(v);
      if (v.empty() || (known && known->kind != ValueType::Kind::Unknown)) continue;
      if (const Tensor* t = recorded.find(v)) extractor.learn_type(v, ValueType::tensor(t->dtype(), t->shape()));
    }
}

}  // namespace

Expected<std::unique_ptr<Oracle>> Oracle::create(const Model& model, std::vector<NamedTensor> inputs,
                                                 OracleOptions options) {
  std::unique_ptr<Oracle> o(new Oracle());
  o->model_ = &model;
  o->inputs_ = std::move(inputs);
  o->options_ = std::move(options);
  REDUCE_TRY(o->make_engines());
  REDUCE_TRY(o->record_reference());
  REDUCE_TRY(o->index_model());
  return o;
}

Status Oracle::make_engines() {
  // The one place the two spec strings are read: everything downstream asks spec() and
  // reference_spec(). An engine instance needs no spec: `engine` only names it then.
  const auto parse = [](const std::string& text) { return parse_engine_spec(text); };
  if (!options_.engine_instance) {
    REDUCE_ASSIGN(spec_, parse(options_.engine));
  }
  REDUCE_ASSIGN(reference_spec_, parse(options_.reference));
  external_ = !options_.engine_instance && spec_.external();
  // Asked once per reduction (TensorRT's version), not by every candidate engine made from it.
  if (!options_.engine_instance) spec_ = settled(spec_, options_.environment);
  const EngineSpec& spec = spec_;
  if (options_.slots < 1) return make_error("the number of slots must be at least 1");
  bool per_slot = false;
  for (const auto& e : options_.environment.env) per_slot |= e.find("{slot}") != std::string::npos;
  per_slot |= spec.external() && spec.command.find("{slot}") != std::string::npos;
  per_slot_ = per_slot;
  const int slots = per_slot ? options_.slots : 1;
  for (int slot = 0; slot < slots; ++slot) {
    EngineEnvironment env = options_.environment;
    for (auto& e : env.env) e = fill_placeholders(e, {{"slot", std::to_string(slot)}});
    env.slot = slot;
    slot_environments_.push_back(env);
    if (options_.engine_instance) {
      slot_engines_.push_back(options_.engine_instance);
    } else if (spec.gives_values()) {
      REDUCE_ASSIGN(auto engine, make_engine(spec, env));
      slot_engines_.push_back(std::move(engine));
    }
  }
  // A slot named in the environment or the command is a device: one run at a time on each.
  slots_ = std::make_unique<SlotPool>(options_.slots, !per_slot && !options_.exclusive_slots);
  if (!options_.engine_instance && !spec.gives_values()) {
    REDUCE_ASSIGN(CheckScript script, CheckScript::parse(spec.command, spec.fp32_nodes));
    check_script_ = std::make_unique<CheckScript>(std::move(script));
  }
  REDUCE_ASSIGN(reference_, make_engine(reference_spec_, options_.environment));
  REDUCE_ASSIGN(FailCriteria criteria, FailCriteria::create(options_.fail_regexes, options_.fail_codes,
                                                             options_.ignore_fail_codes));
  criteria_ = std::make_unique<FailCriteria>(std::move(criteria));
  target_ = std::make_unique<FailureTarget>(*criteria_);
  return {};
}

Status Oracle::record_reference() {
  const Model& model = *model_;
  if (!options_.record.ledger) options_.record.ledger = options_.environment.ledger;
  if (!options_.record.given.empty() && !options_.record.on_given)
    options_.record.on_given = [this](const std::string& name, const Tensor& computed, const Tensor& given) {
      OutputComparison c = compare_tensors(name, computed, given, options_.tolerance);
      if (!c.passed) recording_.given_disagreements.push_back(std::move(c));
    };
  // Expected values from elsewhere (a check: script decides alone; --expected gives every graph
  // output): a node the reference cannot run stops nothing, only the values that depend on it are
  // unknown.
  bool outputs_given = !options_.record.given.empty();
  for (const auto& vi : model.graph.outputs)
    outputs_given &= std::any_of(options_.record.given.begin(), options_.record.given.end(),
                                 [&](const NamedTensor& g) { return g.name == vi.name; });
  options_.record.partial = check_script_ != nullptr || outputs_given;
  const auto start = std::chrono::steady_clock::now();
  auto recorded = RecordedValues::record(model, *reference_, inputs_, options_.record);
  if (!recorded) return make_error("the reference (" + options_.reference + ") cannot run the model: " + recorded.error().message());
  recorded_ = std::make_unique<RecordedValues>(std::move(*recorded));
  options_.record.cancel = nullptr;  // the caller's flag need not outlive create()
  recording_.seconds = seconds_since(start);
  recording_.given_values = options_.record.given.size();
  recording_.given_source = options_.record.given_source;
  recording_.reference_ran = recorded_->reference_ran();
  recording_.refusal_note = refusal_note();
  options_.record.given.clear();     // recorded now: no second copy
  options_.record.on_given = nullptr;
  return {};
}

Status Oracle::index_model() {
  const Model& model = *model_;
  // The run's shapes of the inputs and of what control-flow nodes return, for the types inside bodies.
  std::map<std::string, Shape, std::less<>> run_shapes;
  for (const auto& in : inputs_) run_shapes.emplace(in.name, in.tensor.shape());
  for (const Node& n : model.graph.nodes)
    if (n.has_subgraphs())
      for (const auto& out : n.outputs)
        if (const Tensor* t = recorded_->find(out); t && !out.empty()) run_shapes.emplace(out, t->shape());
  REDUCE_ASSIGN(Extractor extractor, Extractor::create(model, run_shapes));
  extractor_ = std::make_unique<Extractor>(std::move(extractor));
  learn_recorded_types(model, *recorded_, *extractor_);
  add_names(model.graph, names_);
  remove_op_types(model.graph, names_);
  materializer_ = std::make_unique<CandidateMaterializer>(model, *extractor_, *recorded_, *reference_, check_script_ != nullptr);
  cache_ = std::make_unique<VerdictCache>(options_.environment.ledger);
  return {};
}

Oracle::Oracle() = default;
Oracle::~Oracle() = default;

Expected<CandidateRun> Oracle::materialize(const Candidate& c) const { return materializer_->materialize(c); }

Verdict Oracle::run_candidate(const Candidate& c, const std::atomic<bool>* cancel, TensorMap* actual,
                              uint64_t actual_limit) {
  auto run = materialize(c);
  if (!run) return Verdict::invalid_because(run.error().message());
  return run_materialized(*run, cancel, actual, actual_limit);
}

Verdict Oracle::run_materialized(const CandidateRun& run, const std::atomic<bool>* cancel, TensorMap* actual,
                                 uint64_t actual_limit) {
  if (external_)
    if (Status st = check_model_for_engines(run.model); !st.ok()) {
      {
        std::lock_guard<std::mutex> lock(stats_mutex_);
        ++stats_.refused_by_checker;
      }
      return Verdict::invalid_because(st.error().message());
    }
  const SlotPool::Lease lease(*slots_);
  // Cancelled while it waited for a slot: the engine never ran, so it is no engine run.
  if (cancel && cancel->load()) {
    Verdict v;
    v.cancelled = true;
    v.runs = 0;
    return v;
  }
  const size_t slot = per_slot_ ? static_cast<size_t>(lease.slot()) : 0;
  Verdict v = check_script_ ? criteria_->run_check_script(*check_script_, run, slot_environments_[slot], cancel)
                            : run_on(*slot_engines_[slot], run, cancel, actual, actual_limit);
  set_work(v, run.model);
  return v;
}

void Oracle::set_work(Verdict& v, const Model& model) {
  v.work_nodes = model.graph.nodes.size();
  v.work_weight_bytes = 0;
  for (const auto& i : model.graph.initializers) v.work_weight_bytes += i.tensor.byte_size();
}

Verdict Oracle::run_on(Engine& engine, const CandidateRun& c, const std::atomic<bool>* cancel, TensorMap* actual,
                       uint64_t actual_limit) {
  Verdict v;
  const CandidateRun* run = &c;
  const auto start = std::chrono::steady_clock::now();
  auto prepared = engine.prepare(run->model);
  if (!prepared) {
    v = Verdict::from_error(prepared.error(), names_);
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
    v = Verdict::from_error(ran.error(), names_);
    v.seconds = secs;
    return v;
  }
  for (size_t k = 0; k < run->expected.size(); ++k) {
    if (!compared[k]) {
      if (actual) actual->clear();
      return Verdict::from_error(Error{{}, "engine did not return output '" + run->expected[k].name + "'"}, names_);
    }
    v.outputs.push_back(std::move(*compared[k]));
  }
  v.signature = signature_of_outputs(v.outputs);
  return v;
}

Verdict Oracle::evaluate(const Candidate& c, const std::atomic<bool>* cancel, TensorMap* actual) {
  const auto key = candidate_hash(c);
  if (std::optional<Verdict> cached = cache_->find(key, actual)) {
    std::lock_guard<std::mutex> lock(stats_mutex_);
    ++stats_.cache_hits;
    cached->cache_hit = true;
    cached->seconds = 0;
    return *cached;
  }
  TensorMap outputs;
  // The caller's `actual` needs every output; otherwise they are kept only when small enough.
  const RunOnce run_once = [&](TensorMap* into, uint64_t limit) { return run_candidate(c, cancel, into, limit); };
  Verdict v = majority_of_runs(run_once, cancel, &outputs, actual ? UINT64_MAX : VerdictCache::kKeepableBytes);
  count_evaluation(v, cancel, c.nodes.size());
  // A cancelled run may have been cut short: its verdict is not an answer, so it is not cached.
  if (v.cancelled) return v;
  cache_->store(key, v, &outputs);
  if (actual) *actual = std::move(outputs);
  return v;
}

void Oracle::adopt(const Candidate& c, const Verdict& v) {
  {
    std::lock_guard<std::mutex> lock(stats_mutex_);
    if (v.cache_hit) {
      ++stats_.cache_hits;
      return;
    }
    ++stats_.evaluations;
    stats_.engine_seconds += v.seconds;
    stats_.work_nodes += v.work_nodes;
    stats_.work_weight_bytes += v.work_weight_bytes;
    if (v.cancelled) return;
    if (v.invalid) ++stats_.invalid;
  }
  cache_->store(candidate_hash(c), v);
}

Verdict Oracle::rerun(const Candidate& c, const std::atomic<bool>* cancel, TensorMap* actual) {
  Verdict v = run_candidate(c, cancel, actual, actual ? UINT64_MAX : 0);
  count_evaluation(v, cancel, c.nodes.size());
  return v;
}

void Oracle::count_evaluation(Verdict& v, const std::atomic<bool>* cancel, size_t nodes) {
  {
    std::lock_guard<std::mutex> lock(stats_mutex_);
    stats_.evaluations += static_cast<uint64_t>(v.runs);
    stats_.engine_seconds += v.seconds;
    stats_.work_nodes += v.work_nodes * static_cast<uint64_t>(v.runs);
    stats_.work_weight_bytes += v.work_weight_bytes * static_cast<uint64_t>(v.runs);
    stats_.flaky += v.flaky();
    if (cancel && cancel->load()) v.cancelled = true;
    else if (v.invalid) ++stats_.invalid;
  }
  // The nodes the engine was given, when it was given a model (a candidate's graph can hold more
  // nodes than it keeps: an Identity for an output that is an input).
  if (options_.on_engine_run) options_.on_engine_run(v.work_nodes > 0 ? v.work_nodes : nodes, v);
}

void Oracle::set_tolerance(const Tolerance& tolerance) {
  options_.tolerance = tolerance;
  cache_->clear();
  target_->clear();
}

Verdict Oracle::evaluate_probe(const CandidateRun& probe, const std::atomic<bool>* cancel,
                               const std::optional<EngineSpec>& engine) {
  if (engine && options_.engine_instance)
    return Verdict::invalid_because("an engine given as an instance takes no other settings");
  std::unordered_set<std::string> names = names_;
  add_names(probe.model.graph, names);
  const RunOnce run_once = [&](TensorMap* into, uint64_t limit) {
    Verdict v = engine ? run_on_spec(*engine, probe, cancel) : run_materialized(probe, cancel, into, limit);
    // Only a message normalized with the model's names is normalized again (a check: script's
    // signature is its exit code).
    FailureSignature& s = v.signature;
    if (s.fails() && !s.message.empty() && s.normalized == normalize_message(s.message, names_))
      s.normalized = normalize_message(s.message, names);
    return v;
  };
  Verdict v = majority_of_runs(run_once, cancel, nullptr, 0);
  count_evaluation(v, cancel, probe.model.graph.nodes.size());
  return v;
}

Verdict Oracle::evaluate_whole_on(Engine& engine, const std::atomic<bool>* cancel) {
  auto whole = materialize(Candidate::whole(model_->graph));
  if (!whole) return Verdict::invalid_because(whole.error().message());
  const RunOnce run_once = [&](TensorMap* into, uint64_t limit) {
    Verdict v = run_on(engine, *whole, cancel, into, limit);
    set_work(v, whole->model);
    return v;
  };
  Verdict v = majority_of_runs(run_once, cancel, nullptr, 0);
  count_evaluation(v, cancel, model_->graph.nodes.size());
  return v;
}

Verdict Oracle::run_on_spec(const EngineSpec& spec, const CandidateRun& run, const std::atomic<bool>* cancel) {
  const SlotPool::Lease lease(*slots_);
  const size_t slot = per_slot_ ? static_cast<size_t>(lease.slot()) : 0;
  if (!spec.gives_values()) {
    auto script = CheckScript::parse(spec.command, spec.fp32_nodes);
    if (!script) return Verdict::invalid_because(script.error().message());
    Verdict v = criteria_->run_check_script(*script, run, slot_environments_[slot], cancel);
    set_work(v, run.model);
    return v;
  }
  auto made = make_engine(spec, slot_environments_[slot]);
  if (!made) return Verdict::invalid_because(made.error().message());
  Verdict v = run_on(**made, run, cancel, nullptr, 0);
  set_work(v, run.model);
  return v;
}

Verdict Oracle::majority_of_runs(const RunOnce& run_once, const std::atomic<bool>* cancel, TensorMap* actual,
                                 uint64_t actual_limit) {
  Verdict first = run_once(actual, actual_limit);
  const int n = options_.repeat;
  if (n <= 1 || first.invalid || (cancel && cancel->load())) return first;
  double seconds = first.seconds;
  int failing = target_->shown_by(first);
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
    failing += target_->shown_by(again);
    runs.push_back(std::move(again));
  }
  // The first run with the decided outcome is the verdict: deterministic for the same answers.
  const bool fails = target_->shown_by_majority(failing, n);
  size_t pick = 0;
  while (pick + 1 < runs.size() && target_->shown_by(runs[pick]) != fails) ++pick;
  if (pick != 0 && actual) actual->clear();  // the outputs were the first run's
  Verdict v = std::move(runs[pick]);
  v.runs = n;
  v.failing_runs = failing;
  v.seconds = seconds;
  return v;
}

Expected<std::unique_ptr<PreparedModel>> Oracle::prepare_whole_model() {
  if (!engine_under_test()) return std::unique_ptr<PreparedModel>();
  return engine_under_test()->prepare(*model_);
}

std::string Oracle::refusal_note() const {
  const RecordedValues& r = *recorded_;
  if (r.refused_nodes() == 0) return {};
  return "the reference (" + options_.reference + ") cannot run " + std::to_string(r.refused_nodes()) + " node(s), the first: " +
         r.refusal() + "; the expected outputs come from " +
         (check_script_ ? std::string("the check script") : options_.record.given_source) + ", and the " +
         std::to_string(r.unknown_values()) + " value(s) that depend on them are unknown (candidates that need one are skipped)";
}

OracleStatistics Oracle::statistics() const {
  std::lock_guard<std::mutex> lock(stats_mutex_);
  OracleStatistics s = stats_;
  s.slipped = target_->slipped();
  return s;
}

}  // namespace reduce
