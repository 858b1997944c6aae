// The report model: one value saying what a reduction did, rendered to report.json (JSON) and
// report.md (Markdown) by separate renderers, and the bucket record `reduce batch` groups by.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "oracle/model_independence.h"
#include "oracle/oracle.h"
#include "reducer/reducer.h"

namespace reduce {

// report.json's `schema`: raised when a key changes meaning or goes away (keys are only ever added
// under the same number; scripts may check it and refuse a number they do not know).
inline constexpr int kReportSchema = 1;


// A node of the original model named by the error-origin trace.
struct ErrorSource {
  std::string node;   // its name ("" when unnamed)
  std::string op_type;
  std::string value;  // the output that adds the error
  double local_error = 0;  // error / tolerance when the node runs alone (inf: non-finite)
};

// The input samples the original model was checked on: with several, the reduction goes on with
// the first sample it fails on (the bundle's inputs are that sample's).
struct InputSamples {
  size_t count = 1;
  size_t used = 0;              // index of the sample reduced on
  std::string source;           // its file or folder ("seed N" for random inputs)
  std::vector<size_t> failing;  // samples checked and failing (up to `used`: later ones are not checked)
};

// Control flow: If nodes replaced by their taken branch and Loop nodes by their iterations before
// the search (session/control_flow.h), and the nodes left inside bodies of the reproducer (If,
// Loop, Scan: units of reduction too, core/body_nodes.h).
struct ControlFlowReport {
  size_t inlined_if = 0;
  size_t inlined_body_nodes = 0;
  size_t given_nodes = 0;       // top-level nodes of the model as given
  size_t nodes_in_bodies = 0;   // inside subgraphs of the reproducer, at any depth
  size_t unrolled_loops = 0;
  size_t unrolled_iterations = 0;
  size_t unrolled_body_nodes = 0;
  size_t body_nodes_removed = 0;  // removed by the search from the bodies of the nodes it kept
};

// Whether the reproducer's mismatch is what reduced precision itself gives: the reproducer on the
// exact reduced-precision reference (session/src/rounding_check.h).
struct RoundingCheck {
  bool checked = false;    // the reference ran (a mismatch on an FP16/BF16 engine)
  bool explained = false;  // it failed the same way: rounding, not an engine bug
  std::string precision;   // "FP16", "BF16"
  std::string engine;      // the reference's spec ("fp16:ref")
  std::string verdict;     // its verdict ("pass", "mismatch: error up to 10^2 x tolerance")
};

struct ReductionReport {
  // The original model.
  std::string model_path;
  size_t original_nodes = 0;
  size_t original_op_types = 0;
  InputSamples samples;
  ControlFlowReport control_flow;
  // Nodes renamed NAME_K on load because an earlier node had their name (a name means one node).
  size_t renamed_nodes = 0;
  // The reproducer.
  size_t reduced_nodes = 0;
  std::map<std::string, size_t> reduced_op_types;  // op type -> count, without Constant nodes
  size_t inputs = 0;
  size_t outputs = 0;
  std::map<std::string, double> filled_weights;   // weight -> the one value it was filled with
  std::vector<std::string> dropped_attributes;    // "node.attribute"
  // Filled weights model.onnx makes with a ConstantOfShape node instead of storing them whole (the
  // engine failed the same way on that form), sorted.
  std::vector<std::string> filled_stored_small;
  // report.md's Reproducer section (reproducer_section.h): the stored model as text.
  std::string reproducer;
  // Bytes of model.onnx and its weight files, whether those include a link of the original's data
  // file (BundleWeights), and of the whole bundle but report.json, report.md and bucket.txt (a few
  // KB, written after it is known).
  uint64_t model_bytes = 0;
  bool weights_linked = false;
  uint64_t bundle_bytes = 0;
  std::vector<OutputComparison> reduced_errors;   // per output of the reproducer, when the engine ran
  // The failure kept, and the reproducer's own verdict.
  FailureSignature failure;
  FailureSignature reduced_failure;
  // How it was searched.
  std::string engine;
  // `engine` parsed: the oracle's spec (Oracle::spec()), for what report.md and issue.md derive from
  // it (a preset's command line, the engine's bug template). Not in report.json. Unset for an engine
  // given as an instance, which has no spec.
  std::optional<EngineSpec> engine_spec;
  std::string engine_release;  // as the engine names itself ("onnxruntime-node 1.16.3 (cpu)"; "": unknown)
  // The spec as it runs from the bundle's folder, where it differs (a cmd:/check: program carried in
  // engine/: adapters/reproduction.h, bundle_engine_spec); "": `engine`.
  std::string bundle_engine;
  std::string reference;
  // TensorRT's timing cache (adapters/timing_cache.h): the engine builds that used one, and the
  // files they shared (0, 0: no cache, or no build used it).
  size_t timing_cache_builds = 0;
  size_t timing_cache_files = 0;
  // --expected: the file the given expected values came from (empty: none), how many values it
  // gave, and whether the reference ran at all (not when the file gave every value).
  std::string expected_source;
  size_t expected_values = 0;
  bool reference_ran = true;
  Tolerance tolerance;
  // The check options that decided the verdicts (--fail-regex, --fail-code, --ignore-fail-code).
  std::vector<std::string> fail_regexes;
  std::vector<int> fail_codes, ignore_fail_codes;
  std::string strategy;
  int jobs = 1;
  // MPI (cluster/): ranks that checked candidates (1: this process alone), the engine slots of them
  // all, the worker ranks dropped (died, stopped answering, could not load the model), and how
  // many checks the other ranks answered.
  int ranks = 1;
  int slots = 1;
  int ranks_lost = 0;
  uint64_t remote_checks = 0;  // checks other ranks answered
  uint64_t checks = 0;       // every verdict, refused and cached ones included
  uint64_t engine_runs = 0;
  // The longest chain of engine runs in which each waited for an earlier verdict: the wall time in
  // engine-run latencies when every run takes as long and slots are free (the original's check,
  // the probes, the search's rounds, the bundle's runs of the reproducer; docs/reducer.md, "Rounds").
  uint64_t rounds = 0;
  // Where engine_runs and rounds went besides the search (the original's check and the reducer's
  // checks): the trust runs (fresh runs of the reproducer, probe models before and after the
  // search) and the bundle's own runs (the stored model's check, the rounding check). The search's
  // share is the rest (report.json engine_runs_by_purpose, rounds_by_purpose).
  struct Spent {
    uint64_t confirmation = 0, probes = 0, bundle = 0;
    uint64_t besides_search() const { return confirmation + probes + bundle; }
  };
  Spent runs_spent, rounds_spent;
  // Engine runs made one after another after the search by the bundle itself.
  void count_runs_after_search(uint64_t runs) {
    engine_runs += runs;
    rounds += runs;
    runs_spent.bundle += runs;
    rounds_spent.bundle += runs;
  }
  // The engine's work (OracleStatistics::work_nodes): over every run of the engine under test, the
  // nodes and weight bytes of the model it was given; all of them (the bundle's own runs and "where
  // error is born" included), and the search's (the original's check, probes, the reducer's checks,
  // runs beside certify). On engines that build per model the cost grows with these, not with runs.
  uint64_t work_nodes = 0;
  uint64_t work_weight_bytes = 0;
  uint64_t search_work_nodes = 0;
  // Why this reduction spent more trust runs than one confirmation run (kTinyConfirmRuns fresh
  // runs, the probe models again): the signs the engine gave, or the user's options. Empty: none.
  std::vector<std::string> trust_reasons;
  // --max-engine-runs (0: none), and whether the search stopped on it (the reproducer is then the
  // best so far, re-checked but not certified 1-minimal).
  uint64_t engine_run_budget = 0;
  bool budget_reached = false;
  // --simplify-runs (nullopt: no limit), the engine runs the simplification passes spent, and
  // whether the limit stopped one (ReduceResult::simplify_runs).
  std::optional<size_t> simplify_runs_max;
  size_t simplify_runs = 0;
  bool simplify_budget_reached = false;
  // The first reproducer written within twice the final size (the start itself when it is): its
  // nodes, and the seconds and engine runs the session had spent when it was written.
  struct FirstSmall {
    size_t nodes = 0;
    double seconds = 0;
    uint64_t engine_runs = 0;
  };
  std::optional<FirstSmall> first_small;  // verdicts that ran the engine under test (the original's check included)
  uint64_t cache_hits = 0;
  uint64_t slipped = 0;
  // --repeat N: runs per evaluation, and the evaluations whose runs disagreed (a flaky engine).
  int repeat = 1;
  uint64_t flaky = 0;
  uint64_t invalid = 0;
  // Of those, candidates ONNX's checker refused before the engine saw them (OracleStatistics).
  uint64_t refused_by_checker = 0;
  double seconds = 0;
  double engine_seconds = 0;  // of those, the engine under test's (summed over slots)
  // Memory, in bytes: the most the reduction's values held at once (engine runs, reference values
  // in memory, kept outputs: the MemoryLedger), and the reference values in memory and spilled.
  uint64_t peak_held_bytes = 0;
  uint64_t recorded_in_memory_bytes = 0;
  uint64_t recorded_spilled_bytes = 0;
  bool one_minimal = false;
  bool interrupted = false;  // stopped (Ctrl-C): the best reproducer so far
  // The reproducer run again on the engine, never from the cache, before the bundle calls it one
  // (`--confirm N`): how many fresh runs, and how many failed the same way. confirmed < confirm_runs:
  // a reproducer that does not (always) fail again, reported as such (exit 6), never as success.
  int confirm_runs = 0;
  int confirmed = 0;
  bool not_confirmed() const { return confirmed < confirm_runs; }
  std::vector<PassStats> passes;  // the reducer's, as it counted them
  std::string command;      // the exact command to reproduce (shell-quoted)
  std::string environment;  // compiler, system, CPU
  bool graph_svg = false;   // graph.svg was rendered next to graph.dot
  bool graph_png = false;   // and graph.png (report.md links it: GitHub issues take PNG, not SVG)
  // --save-format polygraphy: inputs.json and expected.json were written (or why not, when the
  // tensors have no Polygraphy form); report.md only.
  bool polygraphy_files = false;
  std::string polygraphy_files_note;
  // The reproducer as the engine under test runs it: `model.onnx`, or for an engine that converts
  // each model (`fp16:SPEC`, `bf16:SPEC`, `trt:fp16` on TensorRT 11) the converted model
  // (`model_fp16.onnx`, `model_bf16.onnx`) that `reproducer_engine`, the inner engine, fails on as it is.
  std::string reproducer_model = "model.onnx";
  std::string reproducer_engine;
  // The scripts that reproduce without reduce (adapters/reproduction.h: repro.py, repro.mjs, repro.sh,
  // compare.py) and the data files they read (inputs.npz, expected.npz); a note when some could not
  // be written (a tensor .npy cannot hold).
  std::vector<std::string> reproduction_scripts;
  std::vector<std::string> reproduction_data;
  std::string reproduction_note;
  // repro.py and repro.mjs carry the model and its data (a small reproducer: one file pasted alone
  // reproduces), and issue.md, the engine's bug template filled in ("" when the engine has none).
  bool reproduction_standalone = false;
  std::string reproduction_issue;
  // Where error is born in the original model (numeric failures): the report.md section (empty: not
  // traced), the nodes that add the error of the worst output (largest first), the node where a
  // non-finite value is born, and whether error.svg was drawn.
  std::string error_origin;
  std::vector<ErrorSource> error_sources;
  std::optional<ErrorSource> nonfinite_born;
  bool error_svg = false;
  bool error_png = false;
  // The probe models run after the original failed (oracle/model_independence.h): what they showed.
  ModelIndependence probes;
  // A reproducer of at most kSetupSuspectNodes nodes while a probe model that shares nothing with
  // it fails the same way: it may show the engine's setup (a kernel library it cannot load, a
  // refused option) rather than a bug of the model. Said in report.md and on stdout.
  bool setup_suspect = false;
  static constexpr size_t kSetupSuspectNodes = 2;
  RoundingCheck rounding;
};

// report.json: every key users script against (see README "The bundle").
std::string report_json(const ReductionReport& report);
// report.md: paste-ready for an issue tracker.
std::string report_markdown(const ReductionReport& report);
// issue.md: the engine's own bug template (ONNX Runtime, OpenCV, TensorRT) filled in, `script`
// (its text: `text`) inline when `standalone` (it carries its files); "" for other engines.
std::string issue_markdown(const ReductionReport& report, const std::string& script, const std::string& text,
                           bool standalone);
// The `reduce check` line that reproduces the failure from the bundle's folder.
std::string reduce_check_line(const ReductionReport& report);

// What `reduce batch` groups reproducers by: failure key and canonical graph form. Stored as one
// JSON line in a bundle's bucket.txt.
struct BucketRecord {
  std::string failure;  // kind, plus the normalized message or signal
  size_t original_nodes = 0;
  size_t reduced_nodes = 0;
  uint64_t checks = 0;
  double seconds = 0;
  bool one_minimal = false;
  std::string ops;   // "Add:2 Mul:1"
  std::string form;  // canonical_form of the reduced graph
  // Neither interrupted nor unconfirmed: `reduce batch` skips it when it resumes (a record without
  // the key, from an older reduce, is taken as not complete and reduced again).
  bool complete = true;
};

BucketRecord bucket_record(const ReductionReport& report, const std::string& canonical_form);
std::string bucket_json_line(const BucketRecord& record);
std::optional<BucketRecord> parse_bucket(const std::string& text);
// A bundle folder's bucket.txt, parsed; none when it is missing or not one.
std::optional<BucketRecord> read_bucket(const std::filesystem::path& bundle);

// "reduce (built with g++ ...), Linux 6.1 x86_64, <CPU model>".
std::string environment_line();

}  // namespace reduce
