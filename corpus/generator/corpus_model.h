// The corpus: one model family per fault (plus real FP16 overflow), each a trigger buried once in a
// CNN-like or transformer-like body; generation of a family at a size, and the manifest.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/model.h"
#include "graph_builder.h"
#include "quantize_model.h"

namespace reduce::corpus {

// The seed `reduce-corpus` uses unless told otherwise (the committed examples use it too).
inline constexpr uint64_t kDefaultSeed = 1;

// Builds a whole model of about `target` nodes (inputs, body, trigger, outputs) into `b`,
// marking the trigger's minimal reproducer nodes.
using BuildFn = void (*)(GraphBuilder& b, size_t target, Random& rng);

struct Family {
  // The --faults name: a fault of the catalog, or "fp16-overflow"; for precision families the
  // --precision name.
  std::string_view fault;
  std::string_view stem;         // file names are <stem>_<size>.onnx
  std::string engine;            // the engine spec on which the models fail
  std::string_view kind;         // mismatch, nonfinite or error
  BuildFn build;
  std::string_view description;
  bool precision = false;  // a precision family (precision.def): its ground truth is the FP32 set
  // A quantized family (quantized.def): the model is quantized this way, its float model written
  // next to it; the ground truth is the set of quantized nodes to leave in float.
  QuantizeScheme quantize = QuantizeScheme::None;
};

// Every family, in the order of families.def.
std::span<const Family> families();
const Family* find_family(std::string_view fault);

// The precision families (precision.def): models that fail in FP16 and pass with a known set of
// nodes kept in FP32, the only 1-minimal one (`reduce precision`'s ground truth).
std::span<const Family> precision_families();
const Family* find_precision_family(std::string_view name);

// The quantized families (quantized.def): Q/DQ models that fail against their float model's outputs
// and pass with a known set of nodes left in float, the only 1-minimal one.
std::span<const Family> quantized_families();

struct GeneratedModel {
  std::string file_name;
  const Family* family = nullptr;
  Model model;
  std::vector<size_t> minimal_nodes;  // the ground-truth reproducer, ascending node indices
  std::vector<size_t> fp32_nodes;     // the ground-truth set to keep in FP32 (precision families) or to
                                      // leave in float (quantized families), ascending
  Model float_model;                  // quantized families: the float model
  std::string float_file_name;        // its file, <stem>_<size>_float.onnx
  size_t nodes = 0;                   // count_nodes(model.graph)

  // The reproducer's op multiset, "Op:count" comma-separated, sorted by op name.
  std::string minimal_ops() const;
  std::string wrapped_minimal_ops;  // wrap_in_if/loop: the network's ground truth (its nodes are inside a body)
  // The names of the fp32 nodes, comma-separated, in node order.
  std::string fp32_node_names() const;
};

GeneratedModel generate(const Family& family, size_t size, uint64_t seed);

// The model with its whole network inside an If (as exporters write data-dependent paths): the
// then-branch is the network, the else-branch a copy of it, and the condition (sum |first input| >
// 0) holds for any input that is not all zeros. The file name gains `_if` before the size. The
// ground truth stays the same op multiset: replaced by its taken branch, the model is the network
// again. Only failures that fire inside subgraph bodies survive the wrapping (the optimized
// engine's passes leave bodies alone: precision failures do, fused-kernel faults do not).
void wrap_in_if(GeneratedModel& g);

// The model with its whole network inside a Loop body run `trips` times (file `_loop` before the
// size): each iteration computes the network on the same inputs, and the Loop's outputs stack the
// iterations' outputs (scan outputs, a new axis 0 of length `trips`). The same failures survive as
// with wrap_in_if; the ground truth is the network's, out of one iteration once unrolled.
void wrap_in_loop(GeneratedModel& g, int64_t trips);

// Where write_corpus puts every model's network.
enum class Wrapping { None, If, Loop };

// Lays out a model: a body of about half the nodes left by the trigger, the trigger, then the body
// again up to `target` nodes in all. `trigger` continues the stream (and marks its minimal nodes).
using GrowFn = std::function<void(GraphBuilder& b, Value& stream, size_t nodes, Random& rng)>;
using TriggerFn = std::function<Value(GraphBuilder& b, const Value& stream, Random& rng)>;
Value bury(GraphBuilder& b, Value stream, size_t target, size_t trigger_nodes, const GrowFn& grow, Random& rng,
           const TriggerFn& trigger);

// The manifest: a header line, then one tab-separated line per model.
std::string manifest_header();
std::string manifest_line(const GeneratedModel& model);

// The precision manifest: a header line, then one tab-separated line per model
// (model, engine, kind, fp32_nodes, nodes, description).
std::string precision_manifest_header();
std::string precision_manifest_line(const GeneratedModel& model);

// The quantized manifest: a header line, then one tab-separated line per model
// (model, float_model, engine, kind, float_nodes, nodes, description).
std::string quantized_manifest_header();
std::string quantized_manifest_line(const GeneratedModel& model);

// Writes OUT_DIR/<name>.onnx for every family and size, and OUT_DIR/manifest.tsv (when `chosen` is
// not empty); the same for `precision` into OUT_DIR/precision_manifest.tsv, every model wrapped as
// `wrapping` says (wrap_in_if; wrap_in_loop with 3 iterations); and for `quantized` (never wrapped)
// the quantized and float models and OUT_DIR/quantized_manifest.tsv.
Status write_corpus(const std::filesystem::path& out_dir, std::span<const Family* const> chosen,
                    std::span<const size_t> sizes, uint64_t seed, std::span<const Family* const> precision = {},
                    Wrapping wrapping = Wrapping::None, std::span<const Family* const> quantized = {});

}  // namespace reduce::corpus
