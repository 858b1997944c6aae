// Pad: constant, reflect, edge and wrap modes; pads as attribute (before opset 11) or input, optional
// axes input (18). Negative pads crop first and the remaining pads then apply to the cropped data.
#include <cmath>
#include <cstring>
#include <limits>

#include "reference/int_input.h"
#include "reference/kernel.h"
#include "reference/parallel.h"
#include "reference/strided_copy.h"
#include "core/half.h"

namespace reduce::ref {

namespace {

enum class PadMode { Constant, Reflect, Edge, Wrap };

// The input coordinate read by output coordinate `o` of one dim, or -1 for the constant.
// `n` input elements remain after cropping, starting at `lo`; `before` is the positive leading pad.
int64_t source_coordinate(PadMode mode, int64_t o, int64_t before, int64_t lo, int64_t n) {
  int64_t i = o - before;
  if (i < 0 || i >= n) {
    switch (mode) {
      case PadMode::Constant: return -1;
      case PadMode::Edge: i = i < 0 ? 0 : n - 1; break;
      case PadMode::Wrap: i = ((i % n) + n) % n; break;
      case PadMode::Reflect: {
        const int64_t period = 2 * (n - 1);
        if (period == 0) {
          i = 0;
          break;
        }
        i = ((i % period) + period) % period;
        if (i >= n) i = period - i;
        break;
      }
    }
  }
  return lo + i;
}

// The pad value as the data's element bytes (the opset < 11 attribute is a float).
std::vector<std::byte> constant_bytes(DType dtype, double v) {
  std::vector<std::byte> b(dtype_size(dtype));
  auto put = [&]<typename T>(T x) { std::memcpy(b.data(), &x, sizeof(T)); };
  auto to_int = [&]<typename T>(T) {
    if (std::isfinite(v) && v >= static_cast<double>(std::numeric_limits<T>::lowest()) &&
        v <= static_cast<double>(std::numeric_limits<T>::max()))
      put(static_cast<T>(v));
  };
  switch (dtype) {
    case DType::Float: put(static_cast<float>(v)); break;
    case DType::Double: put(v); break;
    case DType::Float16: put(float_to_half(static_cast<float>(v))); break;
    case DType::BFloat16: put(float_to_bfloat16(static_cast<float>(v))); break;
    case DType::Bool: put(static_cast<uint8_t>(v != 0)); break;
    case DType::Int8: to_int(int8_t{}); break;
    case DType::Int16: to_int(int16_t{}); break;
    case DType::Int32: to_int(int32_t{}); break;
    case DType::Int64: to_int(int64_t{}); break;
    case DType::UInt8: to_int(uint8_t{}); break;
    case DType::UInt16: to_int(uint16_t{}); break;
    case DType::UInt32: to_int(uint32_t{}); break;
    case DType::UInt64: to_int(uint64_t{}); break;
    default: break;
  }
  return b;
}

// Where the output of Pad reads the input: per dim the output length, the positive leading pad and
// the `n` input elements left after cropping, starting at `lo`.
struct PadGeometry {
  Shape out_shape;
  std::vector<int64_t> before, lo, n;
};

// `pads` holds the leading pads of `axes`, then their trailing pads; the output dims are checked for
// overflow: pads come from data and may be absurd.
Expected<PadGeometry> pad_geometry(PadMode mode, const Shape& in, const std::vector<int64_t>& pads,
                                   const std::vector<int64_t>& axes) {
  const size_t rank = in.size();
  if (pads.size() != 2 * axes.size())
    return make_error("pads " + shape_to_string(pads) + " must have two values per padded axis of " + shape_to_string(in));
  std::vector<int64_t> before(rank, 0), after(rank, 0);
  std::vector<bool> seen(rank, false);
  for (size_t k = 0; k < axes.size(); ++k) {
    REDUCE_ASSIGN(size_t d, normalize_axis(axes[k], rank));
    if (d >= rank || seen[d]) return make_error("axes " + shape_to_string(axes) + " are invalid");
    seen[d] = true;
    before[d] = pads[k];
    after[d] = pads[k + axes.size()];
  }
  PadGeometry g{Shape(rank), std::vector<int64_t>(rank), std::vector<int64_t>(rank), std::vector<int64_t>(rank)};
  for (size_t d = 0; d < rank; ++d) {
    const __int128 o = static_cast<__int128>(in[d]) + before[d] + after[d];
    if (o < 0 || o > std::numeric_limits<int64_t>::max())
      return make_error("pads " + shape_to_string(pads) + " give an invalid size for dim " + std::to_string(d) + " of " +
                        shape_to_string(in));
    g.out_shape[d] = static_cast<int64_t>(o);
    g.before[d] = std::max<int64_t>(0, before[d]);
    g.lo[d] = std::max<int64_t>(0, -before[d]);
    g.n[d] = in[d] - g.lo[d] - std::max<int64_t>(0, -after[d]);
    if (mode != PadMode::Constant && g.n[d] <= 0 && g.out_shape[d] > 0) return make_error("cannot pad an empty dim in this mode");
  }
  return g;
}

// Per-dim lookup tables (sizes bounded by the allocated output) turn the copy into table reads:
// the input offset each output coordinate reads, or -1 for the constant.
std::vector<std::vector<int64_t>> source_offsets(PadMode mode, const Shape& in, const PadGeometry& g) {
  const auto in_strides = contiguous_strides(in);
  std::vector<std::vector<int64_t>> map(in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    map[d].resize(static_cast<size_t>(g.out_shape[d]));
    for (int64_t o = 0; o < g.out_shape[d]; ++o) {
      const int64_t i = source_coordinate(mode, o, g.before[d], g.lo[d], g.n[d]);
      map[d][static_cast<size_t>(o)] = i < 0 ? -1 : i * in_strides[d];
    }
  }
  return map;
}

// Fills the output row by row: a row whose outer coordinates hit a pad is all constant.
void copy_padded(const Tensor& in, Tensor& out, const std::vector<std::vector<int64_t>>& map, const std::vector<std::byte>& fill) {
  const Shape& out_shape = out.shape();
  const size_t rank = out_shape.size();
  const size_t inner = static_cast<size_t>(out_shape[rank - 1]);
  const size_t rows = out.elements() / inner;
  visit_element_size(dtype_size(in.dtype()), [&]<typename T>() {
    T c;
    std::memcpy(&c, fill.data(), sizeof(T));
    const T* src = reinterpret_cast<const T*>(in.bytes().data());
    T* dst = reinterpret_cast<T*>(out.mutable_bytes().data());
    parallel_for(rows, std::max<size_t>(1, 65536 / inner), [&](size_t begin, size_t end) {
      for (size_t row = begin; row < end; ++row) {
        int64_t base = 0;
        bool constant_row = false;
        for (size_t d = rank - 1, r = row; d-- > 0;) {
          const int64_t m = map[d][r % static_cast<size_t>(out_shape[d])];
          r /= static_cast<size_t>(out_shape[d]);
          if (m < 0) constant_row = true;
          base += m;
        }
        T* o = dst + row * inner;
        if (constant_row) {
          std::fill(o, o + inner, c);
          continue;
        }
        const auto& last = map[rank - 1];
        for (size_t j = 0; j < inner; ++j) o[j] = last[j] < 0 ? c : src[base + last[j]];
      }
    });
  });
}

class PadKernel : public Kernel {
 public:
  PadKernel(PadMode mode, bool from_inputs, std::vector<int64_t> pads, double value)
      : mode_(mode), from_inputs_(from_inputs), pads_(std::move(pads)), value_(value) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& in = *ctx.input(0);
    const size_t rank = in.rank();
    std::vector<int64_t> pads = pads_;
    std::vector<std::byte> fill = constant_bytes(in.dtype(), value_);
    std::vector<int64_t> axes;
    if (from_inputs_) {
      if (!ctx.input(1)) return make_error("the pads input is missing");
      REDUCE_ASSIGN(pads, int_values(*ctx.input(1), "pads"));
      if (const Tensor* c = ctx.input(2); c && c->elements() > 0) {
        if (c->dtype() != in.dtype()) return make_error("constant_value must have the data's type");
        std::memcpy(fill.data(), c->bytes().data(), fill.size());
      }
      if (ctx.input(3)) {
        REDUCE_ASSIGN(axes, int_values(*ctx.input(3), "axes"));
      }
    }
    if (axes.empty() && !(from_inputs_ && ctx.input(3)))
      for (size_t d = 0; d < rank; ++d) axes.push_back(static_cast<int64_t>(d));
    REDUCE_ASSIGN(PadGeometry g, pad_geometry(mode_, in.shape(), pads, axes));
    REDUCE_ASSIGN(Tensor * out, ctx.allocate_output(0, in.dtype(), g.out_shape));
    if (out->elements() == 0) return {};
    if (rank == 0) {
      std::memcpy(out->mutable_bytes().data(), in.bytes().data(), in.byte_size());
      return {};
    }
    copy_padded(in, *out, source_offsets(mode_, in.shape(), g), fill);
    return {};
  }

 private:
  PadMode mode_;
  bool from_inputs_;
  std::vector<int64_t> pads_;
  double value_;
};

Expected<PadMode> parse_mode(const Node& node, int64_t opset) {
  const std::string m = attr_string(node, "mode", "constant");
  if (m == "constant") return PadMode::Constant;
  if (m == "reflect") return PadMode::Reflect;
  if (m == "edge") return PadMode::Edge;
  if (m == "wrap" && opset >= 19) return PadMode::Wrap;
  return make_error("unsupported pad mode '" + m + "'");
}

}  // namespace

Expected<KernelPtr> make_pad_attr(const Node& node, int64_t opset) {
  REDUCE_ASSIGN(PadMode mode, parse_mode(node, opset));
  const char* name = opset == 1 ? "paddings" : "pads";
  if (!node.attribute(name)) return make_error(std::string("Pad needs a ") + name + " attribute");
  return KernelPtr(new PadKernel(mode, false, attr_ints(node, name), attr_float(node, "value", 0.0f)));
}
Expected<KernelPtr> make_pad(const Node& node, int64_t opset) {
  REDUCE_ASSIGN(PadMode mode, parse_mode(node, opset));
  return KernelPtr(new PadKernel(mode, true, {}, 0.0));
}

}  // namespace reduce::ref
