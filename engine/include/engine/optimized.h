// The optimized engine (spec `opt`): a TensorRT-like engine that rewrites and fuses the graph, runs in
// reduced precision, and carries a catalog of documented faults (docs/faults.md) for the reducer to find.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "engine/engine.h"
#include "engine/fault.h"
#include "engine/fp32_nodes.h"

namespace reduce {

// How floating activations and weights are stored between kernels (kernels compute in float).
enum class Precision { FP32, FP16, BF16 };

struct OptimizedOptions {
  Precision precision = Precision::FP32;
  std::vector<Fault> faults;                 // in the order given, each once
  std::vector<std::string> disabled_passes;  // names from optimized_passes(), each once
  // Nodes that compute and store in FP32 under fp16/bf16 (`fp32=`); names absent from a model are
  // ignored (a reduced candidate keeps the names of the nodes it kept).
  Fp32Nodes fp32_nodes;
  int threads = 0;                           // worker threads per run (0: all cores); not part of a spec
  RunLimits limits;                          // time and memory of every run; not part of a spec

  bool has(Fault fault) const;
};

// Parses the part of an engine spec after "opt:": a comma list of `fp32|fp16|bf16`,
// `fp32=NAME+NAME|@FILE` (engine/fp32_nodes.h), `fault=NAME[+NAME...]` and `no-PASS`. Unknown words,
// faults and passes are one-line errors that list the known ones.
Expected<OptimizedOptions> parse_optimized_options(std::string_view options);
// The canonical form of options (what parse_optimized_options reads back to the same options):
// `[fp16|bf16][,fp32=A+B][,fault=A+B][,no-PASS...]`, empty for the defaults.
std::string to_string(const OptimizedOptions& options);

std::unique_ptr<Engine> make_optimized_engine(const OptimizedOptions& options);

// The passes in the order they run, each with a one-line description (faults: engine/fault.h).
std::vector<std::pair<std::string, std::string>> optimized_passes();

// What the optimizer did for one requested output set.
struct OptimizationReport {
  std::vector<std::pair<std::string, int>> rewrites;  // per pass, in run order: how often it fired
  std::vector<Fault> armed_faults;        // requested faults whose trigger pattern is in the plan (faults.def order)
  size_t nodes_before = 0;                // nodes of the graph (Constant included)
  size_t nodes_after = 0;                 // nodes of the optimized plan

  int fired(std::string_view pass) const;
  bool armed(Fault fault) const;
  std::string to_string() const;  // one line: "constant-folding 3, conv-bn-fold 1, ...; faults: ..."
};

// The prepared model `make_optimized_engine(...)->prepare(...)` returns.
class OptimizedPreparedModel : public PreparedModel {
 public:
  // The optimizations applied when `outputs` are requested (empty: the graph outputs). A plan is
  // built once per distinct output set: requested intermediates are never fused away.
  virtual Expected<OptimizationReport> report(const std::vector<std::string>& outputs = {}) = 0;
};

}  // namespace reduce
