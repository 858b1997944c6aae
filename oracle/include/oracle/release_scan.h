// A model checked on several releases of an engine (`reduce check --engine ort@A,ort@B,...`, and
// `reduce batch DIR --engine ort@A,ort@B,...` over many models): each release's verdict as one of four
// classes, every change between neighbouring releases named by its class, and the reduction each real
// change asks for (the failing release against a passing one).
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "adapters/engine_spec.h"
#include "oracle/verdict.h"

namespace reduce {

class Oracle;

// One release of the scan: its spec, and its verdict, or why it did not run (an install that failed,
// a release that cannot run here).
struct ReleaseVerdict {
  std::string spec;
  std::optional<Verdict> verdict;
  std::string not_run;  // the one-line reason when there is no verdict

  // The release took the model and gave a verdict on it: passes or fails. A limit of the release
  // (Verdict::cannot_take) or of the tool (an invalid verdict) is no verdict on the model.
  bool ran() const { return verdict && !verdict->invalid && verdict->cannot_take.empty(); }
  bool fails() const { return ran() && verdict->signature.fails(); }
  // The release cannot take the model: a format, opset or type newer than it knows, no kernel.
  bool cannot_take() const { return verdict && !verdict->cannot_take.empty(); }
  // "PASS", "FAIL (mismatch: ...)", "CANNOT TAKE (IR version 10; it reads up to 9)", "INVALID: ...",
  // "NOT RUN: ...": the scan's line for this release, after "SPEC: ".
  std::string line() const;
};

// One release of a scan, made once for every model it checks: its engine, or why it cannot run.
struct ReleaseEngine {
  std::string spec;
  std::shared_ptr<Engine> engine;
  std::string not_run;  // when there is no engine: the one-line reason (an install that failed)
};
// The engines of `specs` (each made once: an install that fails is that release's not_run).
std::vector<ReleaseEngine> make_release_engines(const std::vector<std::string>& specs, const EngineEnvironment& environment);
// Each release's verdict on `oracle`'s whole model, against its recorded values.
std::vector<ReleaseVerdict> scan_releases(Oracle& oracle, const std::vector<ReleaseEngine>& releases,
                                          const std::atomic<bool>* cancel = nullptr);

// fixed (fails, then passes), regressed (passes, then fails), failure changed (fails one way, then
// another: another kind, or an error that says another thing), support added (cannot take, then
// runs), support removed (runs, then cannot take).
enum class ReleaseChangeKind { Fixed, Regressed, FailureChanged, SupportAdded, SupportRemoved };
const char* to_string(ReleaseChangeKind kind);  // "fixed", "regressed", "failure changed", ...

// A change between two neighbouring releases in the order given (`before` comes first). Verdicts
// change between releases that ran, skipping the others; support between releases that ran or cannot
// take the model, skipping those that did not run.
struct ReleaseChange {
  ReleaseChangeKind kind = ReleaseChangeKind::Fixed;
  size_t before = 0, after = 0;  // indexes into the scan
  // Only the changes of the model's behaviour ask for a reduction (a change of support does not).
  bool asks_for_reduction() const {
    return kind == ReleaseChangeKind::Fixed || kind == ReleaseChangeKind::Regressed || kind == ReleaseChangeKind::FailureChanged;
  }
  // The release the reduction runs on (the failing one; a changed failure: the newer one), and its
  // reference (the passing one), when it has one.
  size_t failing() const { return kind == ReleaseChangeKind::Fixed ? before : after; }
  std::optional<size_t> passing() const {
    if (kind == ReleaseChangeKind::Fixed) return after;
    if (kind == ReleaseChangeKind::Regressed) return before;
    return std::nullopt;
  }
};
// Every change, in the order of the releases.
std::vector<ReleaseChange> release_changes(const std::vector<ReleaseVerdict>& scan);

// One word for the scan as a whole (a row of a batch scan), the most telling first: a change of
// behaviour ("regressed", "failure changed", "fixed"); else "fails" (every release that ran fails, the
// same way); else a change of support ("support removed", "support added": every release that runs it
// passes); else "passes", "cannot take" (no release takes the model), "not run".
std::string scan_class(const std::vector<ReleaseVerdict>& scan);
// The classes in the order scan_class prefers them (a summary's table).
const std::vector<std::string>& scan_classes();

// A release spec as a word of a folder name ("ort@1.15.1" -> "ort-1.15.1").
std::string release_folder_word(std::string spec);

// The `reduce` command for a change that asks for one: `reduce MODEL --engine FAILING [--reference
// PASSING]OPTIONS -o OUT`. `options`: the user's other options as shell words with a leading space
// (every one that decided the verdicts: --inputs, --expected, tolerances, --fail-regex), so that it
// runs as printed.
std::string reduce_command_for(const std::vector<ReleaseVerdict>& scan, const ReleaseChange& change,
                               const std::string& model_path, const std::string& options, const std::string& output);

// The scan's last lines: one per change ("fixed: fails up to ort@1.15.1, passes from ort@1.17.3:
// reduce m.onnx --engine ort@1.15.1 --reference ort@1.17.3 ... -o m.reduced"; "support added: ort@1.12.1
// cannot take it (IR version 9; it reads up to 8), ort@1.15.1 runs it"), or one saying that every
// release that ran fails, or passes, or that none can take it. The reductions write into the current
// folder (`STEM.reduced`; one per failing release when there are several).
std::string release_scan_summary(const std::vector<ReleaseVerdict>& scan, const std::string& model_path,
                                 const std::string& options = {});

}  // namespace reduce
