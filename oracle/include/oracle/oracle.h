// Oracle: runs a candidate subgraph on the engine under test, compares it with the reference values
// recorded once for the full model, and says whether it shows the same failure as the original.
// Its jobs are done by parts of their own: CandidateMaterializer (materializer.h) makes candidates
// concrete, VerdictCache remembers verdicts, SlotPool gives runs their --jobs slots, FailCriteria
// runs check: scripts and applies the check options, FailureTarget (failure_target.h) holds the
// failure to keep and matches verdicts with it; the oracle runs engines, counts and decides.
// Its verbs are few: run a candidate (evaluate, or adopt another rank's verdict), re-run one
// (rerun), run a variant of the whole model (evaluate_probe), and hand out the whole model as the
// engine prepared it (prepare_whole_model); layer comparison, input-binding diagnosis
// (layer_comparison.h), probes (model_independence.h) and `check --diagnose` (diagnosis.h) are
// built on them outside the class.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/candidate.h"
#include "core/extract.h"
#include "core/model.h"
#include "core/tensor_file.h"
#include "engine/engine.h"
#include "adapters/check_script.h"
#include "adapters/engine_spec.h"
#include "oracle/comparison.h"
#include "oracle/failure_target.h"
#include "oracle/materializer.h"
#include "oracle/recorded_values.h"
#include "oracle/signature.h"
#include "oracle/verdict.h"

namespace reduce {

class SlotPool;
class FailCriteria;
class VerdictCache;

struct OracleOptions {
  // Spec of the engine under test, as given (reports print it); create() parses it, once
  // (Oracle::spec()).
  std::string engine;
  // When set, this engine is used instead of building `engine` from its spec (embedding, tests);
  // `engine` then only names it.
  std::shared_ptr<Engine> engine_instance;
  std::string reference = "ref";  // spec of the engine that gives expected values (Oracle::reference_spec())
  EngineEnvironment environment;
  Tolerance tolerance;
  // Polygraphy's check options, with Polygraphy's semantics (docs/oracle.md). When any regex is
  // given, a failure is "the same" when the candidate fails and any of them matches the engine's
  // message (errors, crashes, check: script output), instead of comparing normalized messages.
  // A check: script fails when: its exit code is not in `ignore_fail_codes`, and, with
  // `fail_codes`, its code is one of them and (with regexes) its output matches one; without
  // `fail_codes`, its output matches one of the regexes (exit 0 included) or, with none, its code
  // is not 0.
  std::vector<std::string> fail_regexes;
  std::vector<int> fail_codes;
  std::vector<int> ignore_fail_codes;
  RecordOptions record;
  // Concurrent evaluations get a slot each (0..slots-1); `{slot}` in environment.env entries and in
  // a cmd:/check: template is replaced by the slot number (e.g. CUDA_VISIBLE_DEVICES={slot} pins a
  // device per slot), and then no two runs hold one slot at once.
  int slots = 1;
  // At most `slots` engine runs at once even when nothing names {slot} (`--slots` given).
  bool exclusive_slots = false;
  // Flaky engines (`--repeat N`): every evaluation runs the candidate N times. Before the target is
  // set (the original's own runs) the majority decides; after, a candidate shows the target's
  // failure when it does so in a majority of its runs and at least as often as the original did
  // (a failure that comes back less reliably than the original's is not the same one: random
  // failures of the engine are outvoted). The verdict is the first run with the outcome decided.
  // 1: one run.
  int repeat = 1;
  // Called once per evaluation that reached the engine (candidates, reruns, probes; not cache hits
  // or verdicts adopted from another rank), with the node count of what ran: `-v`'s line per
  // engine run. Called from the evaluating thread, outside the oracle's locks.
  std::function<void(size_t nodes, const Verdict& verdict)> on_engine_run;
};

// What create() learned while it recorded the reference values.
struct ReferenceRecording {
  double seconds = 0;  // the reference's run of the full model
  // How many values were given (RecordOptions::given, `--expected FILE`; 0: the reference computed
  // them all) and where they came from.
  size_t given_values = 0;
  std::string given_source;
  // Given values that the reference computed differently, beyond the tolerance: the reduction then
  // takes those from the file and the other values from the reference, which disagree, so commands
  // warn about them.
  std::vector<OutputComparison> given_disagreements;
  bool reference_ran = true;  // false when every value was given and the reference did not run the model
  // One line when the reference could not run part of the model and the expected values come from
  // elsewhere (RecordOptions::partial): what it refused and what is therefore unknown ("").
  std::string refusal_note;
};

struct OracleStatistics {
  uint64_t evaluations = 0;  // engine runs
  uint64_t cache_hits = 0;
  uint64_t slipped = 0;      // failed differently (FailureTarget::classify)
  uint64_t invalid = 0;
  uint64_t flaky = 0;        // evaluations whose repeated runs (--repeat) disagreed
  // Candidates ONNX's checker (or reduce's own validation) refused before an external engine saw
  // them: each is a candidate the search should not have made (never run, never the reproducer).
  uint64_t refused_by_checker = 0;
  // Seconds the engine under test spent preparing and running candidates (every evaluation,
  // cancelled ones included), without materializing, comparing or waiting for a slot.
  double engine_seconds = 0;
  // The engine's work: over every engine run, the nodes and the weight bytes of the model it was
  // given (Verdict::work_nodes): on engines that build per model (TensorRT) the cost is in these.
  uint64_t work_nodes = 0;
  uint64_t work_weight_bytes = 0;
};

class Oracle {
 public:
  // Records the reference values of the full model on `inputs` (graph inputs in declaration order)
  // and builds the engine under test. The model must outlive the oracle.
  static Expected<std::unique_ptr<Oracle>> create(const Model& model, std::vector<NamedTensor> inputs,
                                                  OracleOptions options);
  ~Oracle();

  // The candidate's model, inputs and expected outputs (weights shared with the original, cut
  // inputs viewing the recorded values: nothing large is copied).
  Expected<CandidateRun> materialize(const Candidate& candidate) const;

  // Runs a candidate on the engine under test (answers from the cache when it can); the original
  // model is Candidate::whole(model().graph). `actual`, when
  // given, receives the engine's outputs: kept from a recent run of the same candidate that
  // failed (a bundle's reproducer was just tested), else the engine runs again.
  Verdict evaluate(const Candidate& candidate, const std::atomic<bool>* cancel = nullptr,
                   TensorMap* actual = nullptr);

  // Takes a verdict another process's oracle gave for `candidate` on the same model (an MPI worker
  // rank): counted as an evaluation (or a cache hit) and cached, as if this oracle had run it.
  void adopt(const Candidate& candidate, const Verdict& verdict);

  // Runs a candidate on the engine again, whatever the cache holds (for flakiness checks); counted
  // as an evaluation, and the cache keeps its first verdict.
  Verdict rerun(const Candidate& candidate, const std::atomic<bool>* cancel = nullptr, TensorMap* actual = nullptr);

  // Runs a variant of the whole model: a model of the caller's own on the model's graph inputs (a
  // probe: oracle/model_independence.h; the model with some nodes changed), compared with its own
  // expected values, on the engine under test or, given `engine`, on the engine that spec makes (the
  // caller's variant of spec(): `reduce precision`'s with_fp32_nodes, the exact `fp16:ref`). By
  // majority with `repeat`; not cached, counted as an evaluation. Messages quoting the variant's
  // names mask them as they mask the model's. Compare with target().match() once the target is set.
  // Invalid with `engine` when the engine was given as an instance (it has no settings to vary) or
  // the spec's engine cannot be made.
  Verdict evaluate_probe(const CandidateRun& probe, const std::atomic<bool>* cancel = nullptr,
                         const std::optional<EngineSpec>& engine = std::nullopt);

  // Runs the whole model on another engine (a release of a scan: oracle/release_scan.h), compared
  // with the same recorded values: by majority with `repeat`, not cached, counted as an evaluation.
  Verdict evaluate_whole_on(Engine& engine, const std::atomic<bool>* cancel = nullptr);

  // The failure every candidate is compared with (set from the original's verdict by the caller)
  // and how a verdict relates to it; its slippage is OracleStatistics::slipped.
  FailureTarget& target() { return *target_; }
  const FailureTarget& target() const { return *target_; }
  // Compares with another tolerance from now on (`reduce precision --tolerance-sweep`); verdicts
  // cached under the old one and the target are dropped. Between searches only, not while
  // evaluations run.
  void set_tolerance(const Tolerance& tolerance);

  // The full model as the engine under test (slot 0) prepared it, to run as often as the caller
  // likes with inputs and requested values of its own: not counted, cached or compared
  // (layer_comparison.h). Null for a check: script, which gives no values.
  Expected<std::unique_ptr<PreparedModel>> prepare_whole_model();

  // The type the engine under test converts each model to before running it (a strongly typed
  // engine: `fp16:SPEC`, `trt:fp16` on TensorRT 11); its FP32 nodes are then the keep set.
  std::optional<DType> engine_converts_to() const {
    const Engine* e = engine_under_test();
    return e ? e->converts_models_to() : std::nullopt;
  }

  // The engine under test's release as it names it (Engine::release(); "" when it cannot tell).
  std::string engine_release() const {
    const Engine* e = engine_under_test();
    return e ? e->release() : std::string();
  }

  const Model& model() const { return *model_; }
  const std::vector<NamedTensor>& inputs() const { return inputs_; }
  const RecordedValues& recorded() const { return *recorded_; }
  const OracleOptions& options() const { return options_; }
  // The engine under test's spec, parsed from options().engine and settled (settled()) once, when
  // the oracle was made: every module asks it, never the string again. nullptr for an engine given
  // as an instance (options().engine_instance), which has none.
  const EngineSpec* spec() const { return options_.engine_instance ? nullptr : &spec_; }
  // The reference's spec, parsed from options().reference (make_engine builds it from this).
  const EngineSpec& reference_spec() const { return reference_spec_; }
  const Extractor& extractor() const { return *extractor_; }
  OracleStatistics statistics() const;
  const ReferenceRecording& recording() const { return recording_; }

 private:
  Oracle();
  // The steps of create(): the engines of every slot, the reference and the check criteria; the
  // reference values and what was learned recording them; the extractor, names, materializer, cache.
  Status make_engines();
  Status record_reference();
  Status index_model();
  // ReferenceRecording::refusal_note, once the values are recorded.
  std::string refusal_note() const;
  // Counts an evaluation that reached the engine (its runs, time, disagreeing runs, invalid) and
  // marks it cancelled when `cancel` was set; then tells on_engine_run (`nodes` ran).
  void count_evaluation(Verdict& v, const std::atomic<bool>* cancel, size_t nodes);
  // What the engine was given for `v` (Verdict::work_nodes, work_weight_bytes).
  static void set_work(Verdict& v, const Model& model);
  // One engine run of something, its outputs into `actual` up to `limit` bytes.
  using RunOnce = std::function<Verdict(TensorMap* actual, uint64_t limit)>;
  // run_once `repeat` times, by majority (OracleOptions::repeat).
  Verdict majority_of_runs(const RunOnce& run_once, const std::atomic<bool>* cancel, TensorMap* actual, uint64_t actual_limit);
  // A materialized candidate on the engine under test (the ONNX checker first for external engines).
  Verdict run_materialized(const CandidateRun& run, const std::atomic<bool>* cancel, TensorMap* actual,
                           uint64_t actual_limit);
  // A run on the engine `spec` makes (a check: script when it gives no values), in a slot.
  Verdict run_on_spec(const EngineSpec& spec, const CandidateRun& run, const std::atomic<bool>* cancel);
  Verdict run_candidate(const Candidate& candidate, const std::atomic<bool>* cancel, TensorMap* actual,
                        uint64_t actual_limit);
  // The engine under test of slot 0 (null for a check: script).
  Engine* engine_under_test() const { return slot_engines_.empty() ? nullptr : slot_engines_.front().get(); }
  // `actual` (when given) receives the engine's outputs if they total at most `actual_limit` bytes.
  Verdict run_on(Engine& engine, const CandidateRun& run, const std::atomic<bool>* cancel, TensorMap* actual,
                 uint64_t actual_limit);

  const Model* model_ = nullptr;
  std::vector<NamedTensor> inputs_;
  OracleOptions options_;
  std::unique_ptr<Extractor> extractor_;
  std::unique_ptr<RecordedValues> recorded_;
  std::unique_ptr<Engine> reference_;
  std::unique_ptr<CandidateMaterializer> materializer_;
  std::vector<std::shared_ptr<Engine>> slot_engines_;  // one per slot when the environment names {slot}; none for check:
  std::vector<EngineEnvironment> slot_environments_;
  std::unique_ptr<SlotPool> slots_;
  bool per_slot_ = false;  // an engine and environment per slot ({slot} named), else one for all
  std::unique_ptr<CheckScript> check_script_;
  std::unique_ptr<FailCriteria> criteria_;
  std::unique_ptr<VerdictCache> cache_;
  std::unordered_set<std::string> names_;  // node and value names, masked in messages
  EngineSpec spec_;            // of the engine under test, settled (unset for an engine instance)
  EngineSpec reference_spec_;  // of the reference
  bool external_ = false;  // EngineSpec::external(): run the ONNX checker on candidates first
  std::unique_ptr<FailureTarget> target_;  // made with criteria_, which it reads
  ReferenceRecording recording_;

  mutable std::mutex stats_mutex_;
  OracleStatistics stats_;
};

}  // namespace reduce
