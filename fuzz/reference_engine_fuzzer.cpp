// Fuzz harness: one node of a reference-engine operator on small generated inputs. The op type
// (from the engine's own kernels.def), opset, inputs (dtype, shape, values, constant or fed),
// attributes and output count are decoded from the fuzz input; the model is validated, prepared
// and run on one thread.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/half.h"
#include "core/model.h"
#include "core/validate.h"
#include "engine/engine.h"
#include "fuzz_support.h"

namespace {

using namespace reduce;

struct OpChoice {
  const char* op;
  const char* domain;
  int64_t since;
  int64_t until;
};
constexpr OpChoice kOps[] = {
#define REDUCE_KERNEL(op, domain, since, until, factory) {op, domain, since, until},
#include "kernels.def"
#undef REDUCE_KERNEL
};

// Generated inputs hold at most kMaxElements elements; what a run holds at once is capped by the
// run's memory limit (RunLimits::max_memory_bytes).
constexpr size_t kMaxElements = 64;
constexpr uint64_t kMaxTensorBytes = uint64_t{64} << 20;

constexpr int64_t kOpsets[] = {7, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18};
constexpr DType kDTypes[] = {DType::Float, DType::Float, DType::Float, DType::Int64, DType::Int64,
                             DType::Double, DType::Float16, DType::BFloat16, DType::Int32,
                             DType::Int8, DType::UInt8, DType::Bool, DType::Int16, DType::UInt16,
                             DType::UInt32, DType::UInt64};
constexpr const char* kAttributeNames[] = {
    "axis", "axes", "perm", "keepdims", "kernel_shape", "strides", "pads", "dilations", "group",
    "alpha", "beta", "epsilon", "mode", "direction", "to", "transA", "transB", "auto_pad",
    "ceil_mode", "count_include_pad", "blocksize", "k", "largest", "sorted", "starts", "ends",
    "split", "num_outputs", "shape", "value", "dtype", "equation", "reduction", "exclusive",
    "reverse", "upper", "size", "bias", "hidden_size", "activations", "layout", "output_padding",
    "output_shape", "coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a",
    "extrapolation_value", "exclude_outside", "align_corners", "padding_mode", "noop_with_empty_axes",
    "select_last_index", "batch_dims", "allowzero", "storage_order", "spatial_scale",
    "sampling_ratio", "output_height", "output_width", "center_point_box", "num_groups",
    "stash_type", "saturate", "periodic", "output_datatype", "inverse", "onesided", "time_axis",
    "batch_axis", "scales", "clip", "linear_before_reset", "input_forget", "min_gram_length",
    "max_gram_length", "max_skip_count", "ngram_counts", "ngram_indexes", "weights",
    "pool_strings", "p", "ignore_index", "ratio", "training_mode", "momentum", "is_test", "spatial",
    "broadcast", "keep_aspect_ratio_policy", "antialias", "block_size", "output_dtype",
    "num_scan_inputs", "scan_input_axes", "scan_output_axes", "scan_output_directions",
    "activation_alpha", "activation_beta", "start", "end", "fmod", "detect_negative",
    "detect_positive", "min", "max", "seed", "sample_size", "lambd", "gamma", "norm_coefficient",
};
constexpr const char* kStrings[] = {
    "constant", "reflect", "edge", "wrap", "linear", "nearest", "cubic", "NOTSET", "SAME_UPPER",
    "SAME_LOWER", "VALID", "half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel",
    "tf_crop_and_resize", "round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "forward",
    "reverse", "bidirectional", "Relu", "Tanh", "Sigmoid", "DCR", "CRD", "mean", "sum", "none",
    "max", "min", "add", "mul", "avg", "bilinear", "zeros", "border", "reflection", "stretch",
    "not_larger", "not_smaller", "TF", "IDF", "TFIDF", "ij,jk->ik", "...ii->...i", "i,i", "bij,bjk->bik",
};
constexpr int64_t kInterestingInts[] = {0, 1, -1, 2, 3, 4, -2, 7, 16, 255, 1 << 20,
                                        std::numeric_limits<int32_t>::max(),
                                        std::numeric_limits<int32_t>::min(),
                                        std::numeric_limits<int64_t>::max(),
                                        std::numeric_limits<int64_t>::min()};
constexpr double kInterestingFloats[] = {0.0, 1.0, -1.0, 0.5, 2.0, 1e-5, -0.0, 1e30, -1e30, 65504.0, 1e-40,
                                         std::numeric_limits<double>::infinity(),
                                         -std::numeric_limits<double>::infinity(),
                                         std::numeric_limits<double>::quiet_NaN()};

template <typename T, size_t N>
const T& pick(fuzz::ByteReader& in, const T (&choices)[N]) {
  return choices[in.below(N)];
}

int64_t decode_int(fuzz::ByteReader& in) {
  // Mostly small values (axes, sizes, flags), sometimes the edges of the type.
  const uint8_t mode = in.byte();
  if (mode < 200) return static_cast<int8_t>(in.byte()) % 9;
  if (mode < 240) return pick(in, kInterestingInts);
  return static_cast<int64_t>(in.u64());
}

double decode_float(fuzz::ByteReader& in) {
  const uint8_t mode = in.byte();
  if (mode < 200) return (static_cast<int8_t>(in.byte())) / 8.0;
  return pick(in, kInterestingFloats);
}

void store(Tensor& t, size_t i, double f, int64_t n) {
  switch (t.dtype()) {
    case DType::Float: t.mutable_data<float>()[i] = static_cast<float>(f); break;
    case DType::Double: t.mutable_data<double>()[i] = f; break;
    case DType::Float16: t.mutable_data<uint16_t>()[i] = float_to_half(static_cast<float>(f)); break;
    case DType::BFloat16: t.mutable_data<uint16_t>()[i] = float_to_bfloat16(static_cast<float>(f)); break;
    case DType::Int64: t.mutable_data<int64_t>()[i] = n; break;
    case DType::Int32: t.mutable_data<int32_t>()[i] = static_cast<int32_t>(n); break;
    case DType::Int16: t.mutable_data<int16_t>()[i] = static_cast<int16_t>(n); break;
    case DType::Int8: t.mutable_data<int8_t>()[i] = static_cast<int8_t>(n); break;
    case DType::UInt64: t.mutable_data<uint64_t>()[i] = static_cast<uint64_t>(n); break;
    case DType::UInt32: t.mutable_data<uint32_t>()[i] = static_cast<uint32_t>(n); break;
    case DType::UInt16: t.mutable_data<uint16_t>()[i] = static_cast<uint16_t>(n); break;
    case DType::UInt8: t.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(n); break;
    case DType::Bool: t.mutable_data<uint8_t>()[i] = n & 1; break;
    default: break;
  }
}

// A small tensor: rank 0..4, at most kMaxElements elements, values small or at the edges.
Tensor decode_tensor(fuzz::ByteReader& in) {
  const DType dtype = pick(in, kDTypes);
  Shape shape(in.below(5));
  size_t count = 1;
  for (auto& d : shape) {
    d = static_cast<int64_t>(in.below(5));
    if (count * static_cast<size_t>(d) > kMaxElements) d = 1;
    count *= static_cast<size_t>(d);
  }
  auto t = Tensor::allocate(dtype, shape);
  if (!t) fuzz::invariant_failed("cannot allocate a small tensor: " + t.error().message());
  for (size_t i = 0; i < count; ++i) {
    if (dtype_is_float(dtype)) store(*t, i, decode_float(in), 0);
    else store(*t, i, 0, decode_int(in));
  }
  return std::move(*t);
}

Attribute decode_attribute(fuzz::ByteReader& in) {
  Attribute a;
  a.name = pick(in, kAttributeNames);
  switch (in.below(6)) {
    case 0:
      a.kind = Attribute::Kind::Int;
      a.i = decode_int(in);
      break;
    case 1:
      a.kind = Attribute::Kind::Ints;
      a.ints.resize(in.below(7));
      for (auto& v : a.ints) v = decode_int(in);
      break;
    case 2:
      a.kind = Attribute::Kind::Float;
      a.f = static_cast<float>(decode_float(in));
      break;
    case 3:
      a.kind = Attribute::Kind::Floats;
      a.floats.resize(in.below(7));
      for (auto& v : a.floats) v = static_cast<float>(decode_float(in));
      break;
    case 4:
      a.kind = Attribute::Kind::String;
      a.s = in.flag() ? std::string(pick(in, kStrings)) : in.text(12);
      break;
    default:
      a.kind = Attribute::Kind::Tensor;
      a.t = decode_tensor(in);
      break;
  }
  return a;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::ByteReader in(data, size);
  const int64_t opset = pick(in, kOpsets);
  std::vector<const OpChoice*> ops;
  for (const auto& op : kOps)
    if (op.since <= opset && opset <= op.until) ops.push_back(&op);
  const OpChoice& op = *ops[in.below(ops.size())];

  Model model;
  model.opset_imports.push_back({"", opset});
  Node node;
  node.name = "n";
  node.op_type = op.op;
  node.domain = op.domain;
  TensorMap feeds;
  const size_t inputs = in.below(6);
  for (size_t i = 0; i < inputs; ++i) {
    const std::string name = "x" + std::to_string(i);
    switch (in.below(4)) {
      case 0:
        node.inputs.push_back("");  // an omitted optional input
        break;
      case 1: {
        Tensor t = decode_tensor(in);
        model.graph.initializers.push_back({name, t, {}});
        node.inputs.push_back(name);
        break;
      }
      default: {
        Tensor t = decode_tensor(in);
        model.graph.inputs.push_back({name, ValueType::tensor(t.dtype(), t.shape()), {}});
        feeds[name] = std::move(t);
        node.inputs.push_back(name);
      }
    }
  }
  const size_t outputs = 1 + in.below(3);
  for (size_t i = 0; i < outputs; ++i) {
    const bool omitted = i > 0 && in.below(4) == 0;
    node.outputs.push_back(omitted ? "" : "y" + std::to_string(i));
    if (!omitted) model.graph.outputs.push_back({node.outputs.back(), {}, {}});
  }
  const size_t attributes = in.below(5);
  for (size_t i = 0; i < attributes; ++i) node.attributes.push_back(decode_attribute(in));
  model.graph.nodes.push_back(std::move(node));

  // What every loaded model passes before an engine sees it.
  if (!validate_model(model).ok()) return 0;
  // Kernels asked for huge outputs (Expand, Tile, Resize, ConstantOfShape) fail at the run's
  // memory limit instead of allocating; a run longer than the limit ends as a timeout error.
  auto engine = make_reference_engine(1, RunLimits{.timeout_seconds = 5.0, .max_memory_bytes = kMaxTensorBytes, .ledger = nullptr});
  auto prepared = engine->prepare(model);
  if (!prepared) return 0;
  (void)(*prepared)->run(feeds);
  return 0;
}
