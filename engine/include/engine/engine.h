// The Engine interface every engine implements: prepare a model once, then run it on named tensors.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/memory_ledger.h"
#include "core/model.h"

namespace reduce {

// Named tensors, ordered by name so iteration (and everything derived from it) is deterministic.
using TensorMap = std::map<std::string, Tensor, std::less<>>;

struct RunOptions {
  // Values to return; empty means the graph outputs. Any value of the graph may be requested
  // without changing the model (the reducer and `compare` need intermediate values).
  std::vector<std::string> outputs;
  // When set and it becomes true, an engine may abandon the run (external processes are killed);
  // the result is then an error that callers must not take as a verdict.
  const std::atomic<bool>* cancel = nullptr;
  // When set, a run hands each requested value to `on_output` instead of returning it: engines
  // that stream (PreparedModel::streams_outputs) as soon as the value is computed, so that a run
  // with every value requested holds only what later nodes still need; the others after the run.
  // An error from `on_output` ends the run with that error. Call through deliver_outputs().
  std::function<Status(const std::string& name, Tensor value)> on_output;
};

// Budgets of every run of an in-process engine (0: none). Time is observed before each node and
// each subgraph run (so between loop iterations; one kernel is not interrupted) and ends the run
// with ErrorKind::Timeout; memory counts the bytes of the values a run computes and holds at once
// (views of one buffer counted each), and a run that would exceed it ends with an error saying so.
struct RunLimits {
  double timeout_seconds = 0;
  uint64_t max_memory_bytes = 0;
  // When set, the bytes a run holds are also charged here (one ledger per reduction).
  std::shared_ptr<MemoryLedger> ledger;
};

class PreparedModel {
 public:
  virtual ~PreparedModel() = default;
  // Runs on the given inputs (by name). Errors name the node and the problem.
  virtual Expected<TensorMap> run(const TensorMap& inputs, const RunOptions& options = {}) = 0;
  // Whether run() calls RunOptions::on_output while it computes (in-process engines), rather than
  // returning every requested value at once.
  virtual bool streams_outputs() const { return false; }
};

// Runs `prepared` and hands every requested value (or graph output) to `on_output`, once each:
// as computed when the engine streams, else after the run in name order.
Status run_streaming(PreparedModel& prepared, const TensorMap& inputs, RunOptions options,
                     const std::function<Status(const std::string& name, Tensor value)>& on_output);

class Engine {
 public:
  virtual ~Engine() = default;
  virtual std::string name() const = 0;
  // Validates the model and resolves everything needed to run it; unsupported operators are an
  // error naming the node and the op. The model must outlive the prepared model.
  virtual Expected<std::unique_ptr<PreparedModel>> prepare(const Model& model) = 0;
  // A strongly typed engine that converts each model to FP16 or BF16 at the ONNX level before it
  // runs it (`fp16:SPEC`, `trt:fp16` on TensorRT 11): the type; its FP32 nodes are the keep set.
  virtual std::optional<DType> converts_models_to() const { return std::nullopt; }
  // The engine as it names its own release, for bug reports ("onnxruntime-node 1.16.3 (cpu)",
  // "OpenCV 4.6.0"); empty when it cannot tell (a user's command).
  virtual std::string release() const { return {}; }
};

// The exact reference interpreter (engine spec `ref`). `threads` bounds the worker threads of one
// run (0: all cores); results are bit-identical for every thread count. Every run observes
// `limits` and RunOptions::cancel.
std::unique_ptr<Engine> make_reference_engine(int threads = 0, RunLimits limits = {});

// The process-wide allocator settings the engines are measured with (glibc malloc: activations of a
// few MB stay in the heap instead of fresh mmaps, no more arenas than cores; bench/RESULTS.md, issue
// 20). A program calls it once at its start (the `reduce` executable's main, bench drivers);
// libraries never change process-wide settings themselves.
void tune_allocator_for_engines();

}  // namespace reduce
