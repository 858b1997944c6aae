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
    if (pads.size() != 2 * axes.size())
      return make_error("pads " + shape_to_string(pads) + " must have two values per padded axis of " +
                        shape_to_string(in.shape()));
    std::vector<int64_t> before(rank, 0), after(rank, 0);
    std::vector<bool> seen(rank, false);
    for (size_t k = 0; k < axes.size(); ++k) {
      REDUCE_ASSIGN(size_t d, normalize_axis(axes[k], rank));
      if (d >= rank || seen[d]) return make_error("axes " + shape_to_string(axes) + " are invalid");
      seen[d] = true;
      before[d] = pads[k];
      after[d] = pads[k + axes.size()];
    }
    // Output dims, checked for overflow: pads come from data and may be absurd.
    Shape out_shape(rank);
    std::vector<int64_t> lo(rank), n(rank);
    for (size_t d = 0; d < rank; ++d) {
      const __int128 dim = in.shape()[d];
      const __int128 o = dim + before[d] + after[d];
      if (o < 0 || o > std::numeric_limits<int64_t>::max())
        return make_error("pads " + shape_to_string(pads) + " give an invalid size for dim " + std::to_string(d) + " of " +
                          shape_to_string(in.shape()));
      out_shape[d] = static_cast<int64_t>(o);
      lo[d] = std::max<int64_t>(0, -before[d]);
      n[d] = in.shape()[d] - lo[d] - std::max<int64_t>(0, -after[d]);
      if (mode_ != PadMode::Constant && n[d] <= 0 && out_shape[d] > 0)
        return make_error("cannot pad an empty dim in this mode");
    }
    REDUCE_ASSIGN(Tensor * out, ctx.allocate_output(0, in.dtype(), out_shape));
    if (out->elements() == 0) return {};
    if (rank == 0) {
      std::memcpy(out->mutable_bytes().data(), in.bytes().data(), in.byte_size());
      return {};
    }
    // Per-dim lookup tables (sizes bounded by the allocated output) turn the copy into table reads.
    const auto in_strides = contiguous_strides(in.shape());
    std::vector<std::vector<int64_t>> map(rank);
    for (size_t d = 0; d < rank; ++d) {
      map[d].resize(static_cast<size_t>(out_shape[d]));
      for (int64_t o = 0; o < out_shape[d]; ++o) {
        const int64_t i = source_coordinate(mode_, o, std::max<int64_t>(0, before[d]), lo[d], n[d]);
        map[d][static_cast<size_t>(o)] = i < 0 ? -1 : i * in_strides[d];
      }
    }
    const size_t inner = static_cast<size_t>(out_shape[rank - 1]);
    const size_t rows = out->elements() / inner;
    visit_element_size(dtype_size(in.dtype()), [&]<typename T>() {
      T c;
      std::memcpy(&c, fill.data(), sizeof(T));
      const T* src = reinterpret_cast<const T*>(in.bytes().data());
      T* dst = reinterpret_cast<T*>(out->mutable_bytes().data());
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
