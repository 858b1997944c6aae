// `reduce precision`: the smallest set of nodes to keep in FP32 so that the model passes on an
// engine running in reduced precision; the dual of a reduction (the reducer's precision strategy,
// with this module's test: a set is interesting when the model passes with it kept in FP32).
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "oracle/error_origin.h"
#include "oracle/oracle.h"

namespace reduce {

struct PrecisionOptions {
  int jobs = 1;
  // Nodes run alone to rank the nodes by the error they add (ErrorOriginOptions::max_local_runs).
  size_t max_local_runs = 2000;
  std::function<void(std::string)> log;  // one line per call
  // "default": the 1-minimal search. Baselines as Polygraphy's `debug precision` does it, for honest
  // comparisons: "polygraphy-bisect" (binary search) and "polygraphy-linear" (one more node per
  // check) over how many float nodes, from the start of the topological order (or from its end
  // with `from_outputs`, Polygraphy's --direction reverse), are kept in FP32. One set at a time.
  std::string strategy = "default";
  bool from_outputs = false;
  // Fresh runs, after the search, of the model with the set in FP32 (must pass on every sample)
  // and of the model as it is (must fail the same way): a flaky engine's answer is not reported
  // as found.
  int confirm = 1;
};

// A strategy `PrecisionOptions::strategy` takes (precision/src/strategies/strategies.def), the
// default first; `directed`: it takes `from_outputs`.
struct PrecisionStrategyInfo {
  std::string name;
  bool directed = false;
  std::string help;
};
const std::vector<PrecisionStrategyInfo>& precision_strategies();
bool is_precision_strategy(const std::string& name);
// "default, polygraphy-bisect or polygraphy-linear": the names, for help texts and errors.
std::string precision_strategy_names();

struct PinnedNode {
  size_t node = 0;    // index in the model's graph
  std::string name;   // ONNX node name
  std::string op_type;
  // Error / tolerance of its output when it runs alone on its reference inputs (0: not run; -1: an
  // input is beyond the engine's range, so what it does alone is inherited).
  double local_error = 0;
};

struct PrecisionOutcome {
  enum class Kind {
    Found,            // a 1-minimal set (or the best so far when stopped)
    DoesNotFail,      // the model passes with nothing kept in FP32
    FailsEvenInFp32,  // it still fails with every float node in FP32: not a precision problem
  } kind = Kind::Found;
  std::vector<PinnedNode> pinned;  // the set, in topological order
  size_t candidates = 0;           // float nodes that could be kept in FP32
  size_t samples = 1;              // input samples on which the model must pass with the set
  size_t failing_sample = 0;       // the first sample the model fails on (`before`, the ranking)
  Verdict before;                  // nothing in FP32
  Verdict after;                   // the set in FP32 (all float nodes when FailsEvenInFp32)
  Verdict all_kept;                // every candidate in FP32 (the check before the search)
  size_t checks = 0;               // sets checked (the reducer's count, or the baseline's)
  std::string strategy = "default";  // with " reverse" for a baseline from the outputs
  bool one_minimal = false;        // removing any one node of the set makes the model fail
  // PrecisionOptions::confirm: fresh runs of each, and how many gave the searched answer again.
  NodeRenaming renamed;             // nodes named or renamed on load (filled by the caller), reported
  int confirm_runs = 0;
  int set_passed_again = 0;        // the set in FP32 passed on every sample
  int original_failed_again = 0;   // nothing in FP32 failed the same way
  bool not_confirmed() const {
    return confirm_runs > 0 && (set_passed_again < confirm_runs || original_failed_again < confirm_runs);
  }
  bool stopped = false;
  double seconds = 0;
  // Model Optimizer AutoCast's default rule on the recorded values of the first sample (strongly
  // typed engines only): the float nodes it keeps in FP32, whether the model passes with them on
  // every sample (one more check, not counted in `checks`).
  struct RuleSet {
    double data_max = 512;     // a node whose float output exceeds this in magnitude stays FP32
    double init_max = 65504;   // a node that reads a weight exceeding this stays FP32
    std::vector<std::string> nodes;
    bool passes = false;
  };
  std::optional<RuleSet> autocast_rule;
  // Where error is born in the model with nothing in FP32 (the default strategy's ranking): the
  // bundle draws it as error.svg.
  std::optional<ErrorOrigin> origin;
  // A Q/DQ model (precision/quantization.h): `pinned` are quantized nodes left in float, the outputs
  // are compared with the float model's, and `all_kept` is every quantized node in float.
  struct Quantization {
    std::string float_model;  // the float model's file; "" when derived by folding every Q/DQ pair
    size_t weights_from_float_model = 0;
    size_t weights_folded = 0;
    size_t quantized_nodes = 0;
    size_t nodes_matched_by_name = 0;  // in the float model (QuantizedSearchPlan)
    size_t nodes_matched_by_place = 0;
    size_t nodes_matched_by_value = 0;
  };
  std::optional<Quantization> quantization;
};

// The nodes of the oracle's model that compute a float value (Constant nodes excluded), ascending.
std::vector<size_t> float_nodes(const Oracle& oracle);

// `samples`: oracles of one model, one per input sample (in order). Checks that the model fails
// with nothing in FP32 (on some sample) and passes with every float node in FP32 (on every sample),
// then finds a 1-minimal set with which it passes on every sample (nodes ranked by the error they
// add alone on the first sample it fails on come first). Sets that sample's oracle's target.
// Errors: the engine takes no per-node precision, the model has no named float node.
Expected<PrecisionOutcome> find_fp32_nodes(std::vector<Oracle*> samples, const PrecisionOptions& options,
                                           std::stop_token stop);

// The bundle: precision.txt (one node name per line), model.onnx (the model with the node names the
// set uses: unnamed nodes were named), report.md, report.json; each written whole, then renamed
// into place. `command` is the command line that reproduces the search.
Status write_precision_bundle(const std::filesystem::path& dir, const Oracle& oracle, const PrecisionOutcome& outcome,
                              const std::string& command);

// `reduce precision --tolerance-sweep`: the set at each tolerance, loose to tight.
struct SweepRow {
  double tolerance = 0;  // atol = rtol = this, for every output
  PrecisionOutcome outcome;
};
struct ToleranceSweep {
  std::vector<SweepRow> rows;  // loose to tight, as given; only the tolerances searched to the end
  bool stopped = false;        // a stop ended it (rows holds those done before)
  // The outcome of the tightest tolerance that found a set (what the bundle holds), or null.
  const PrecisionOutcome* tightest_found() const;
  // The outcome the sweep answers with: the tightest found, else the last tolerance's (null when none ended).
  const PrecisionOutcome* answer() const;
};
// One search of `reduce precision`: find_fp32_nodes, or find_float_nodes bound to a Q/DQ model's plan.
using PrecisionSearch =
    std::function<Expected<PrecisionOutcome>(std::vector<Oracle*> samples, const PrecisionOptions& options, std::stop_token stop)>;
// Sets every sample's tolerance to each of `tolerances` (loose to tight) in turn and runs `search`
// (default find_fp32_nodes; its log silenced); `on_row` sees each row when it ends. The oracles
// keep the last tolerance.
Expected<ToleranceSweep> sweep_tolerances(const std::vector<Oracle*>& samples, PrecisionOptions options,
                                          const std::vector<double>& tolerances, std::stop_token stop,
                                          const std::function<void(const SweepRow&)>& on_row = {},
                                          const PrecisionSearch& search = {});
// sweep.json: one object per row: tolerance, checks, outcome ("found", "does not fail", "fails
// even in FP32", or on a Q/DQ model "fails even in float"), fp32_nodes (float_nodes on a Q/DQ model).
std::string sweep_json(const ToleranceSweep& sweep);

// "trtexec ... --layerPrecisions=A:fp32,B:fp32" and the Polygraphy flags, for the report.
std::string tensorrt_flags(const std::vector<PinnedNode>& pinned);
std::string polygraphy_flags(const std::vector<PinnedNode>& pinned);
// For strongly typed engines (TensorRT 11), where the set is delivered in the model: Model
// Optimizer's AutoCast converting with the set excluded (`--nodes_to_exclude` takes regular
// expressions: each name escaped and anchored), writing `output`; ONNX Runtime's float16 converter.
std::string autocast_command(const std::vector<PinnedNode>& pinned, DType to, const std::string& output);
std::string onnxruntime_float16_call(const std::vector<PinnedNode>& pinned);

}  // namespace reduce
