// RotaryEmbedding (opset 23): rotates pairs of each head's first rotary_embedding_dim features by per-position angles.
#include <type_traits>

#include "reference/kernel.h"
#include "reference/numeric.h"
#include "reference/parallel.h"

namespace reduce::ref {

namespace {

// X as [batch, seq, heads, head_size] whatever its layout: 4-D X is [batch, heads, seq, head_size],
// 3-D X is [batch, seq, heads * head_size]. offset() is where element (b, s, h, 0) lives.
struct RotaryLayout {
  size_t batch = 0, seq = 0, heads = 0, head_size = 0;
  bool four_d = false;
  size_t offset(size_t b, size_t s, size_t h) const {
    return four_d ? ((b * heads + h) * seq + s) * head_size : ((b * seq + s) * heads + h) * head_size;
  }
};

Expected<RotaryLayout> rotary_layout(const Shape& x, int64_t num_heads) {
  RotaryLayout l;
  if (x.size() == 4) {
    l = {static_cast<size_t>(x[0]), static_cast<size_t>(x[2]), static_cast<size_t>(x[1]), static_cast<size_t>(x[3]), true};
    return l;
  }
  if (x.size() != 3) return make_error("input must be 3-D or 4-D, got shape " + shape_to_string(x));
  if (num_heads <= 0) return make_error("a 3-D input needs the num_heads attribute");
  if (x[2] % num_heads != 0)
    return make_error("hidden size " + std::to_string(x[2]) + " is not a multiple of num_heads " + std::to_string(num_heads));
  l = {static_cast<size_t>(x[0]), static_cast<size_t>(x[1]), static_cast<size_t>(num_heads),
       static_cast<size_t>(x[2] / num_heads), false};
  return l;
}

class RotaryEmbeddingKernel : public Kernel {
 public:
  RotaryEmbeddingKernel(bool interleaved, int64_t rotary_dim, int64_t num_heads)
      : interleaved_(interleaved), rotary_dim_(rotary_dim), num_heads_(num_heads) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    const Tensor& cos_cache = *ctx.input(1);
    const Tensor& sin_cache = *ctx.input(2);
    const Tensor* position_ids = ctx.input(3);
    for (const Tensor* t : {&x, &cos_cache, &sin_cache})
      if (!dtype_is_float(t->dtype()) || t->dtype() != x.dtype())
        return make_error("input, cos_cache and sin_cache must have the same floating-point type");
    REDUCE_ASSIGN(RotaryLayout l, rotary_layout(x.shape(), num_heads_));
    const size_t rot = rotary_dim_ == 0 ? l.head_size : static_cast<size_t>(rotary_dim_);
    if (rot > l.head_size || rot % 2 != 0)
      return make_error("rotary_embedding_dim " + std::to_string(rot) + " must be even and at most the head size " +
                        std::to_string(l.head_size));
    REDUCE_ASSIGN(std::vector<size_t> rows, cache_rows(l, rot / 2, cos_cache, sin_cache, position_ids));
    REDUCE_ASSIGN(Tensor wx, widen(x));
    REDUCE_ASSIGN(Tensor wcos, widen(cos_cache));
    REDUCE_ASSIGN(Tensor wsin, widen(sin_cache));
    REDUCE_TRY(ctx.reserve(wx.byte_size()));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(wx.dtype(), wx.shape()));
    visit_dtype(wx.dtype(), [&]<typename T>() {
      if constexpr (std::is_floating_point_v<T>)
        rotate<T>(l, rot, rows, wx.data<T>().data(), wcos.data<T>().data(), wsin.data<T>().data(),
                  out.mutable_data<T>().data());
    });
    REDUCE_ASSIGN(Tensor y, narrow(out, x.dtype()));
    ctx.set_output(0, std::move(y));
    return {};
  }

 private:
  // For each (batch, position) the row of the caches holding its cos/sin values (half rot values each):
  // position_ids picks rows of [max_position, half] caches; without it the caches are [batch, seq, half].
  static Expected<std::vector<size_t>> cache_rows(const RotaryLayout& l, size_t half, const Tensor& cos_cache,
                                                  const Tensor& sin_cache, const Tensor* position_ids) {
    if (cos_cache.shape() != sin_cache.shape()) return make_error("cos_cache and sin_cache must have the same shape");
    const Shape& c = cos_cache.shape();
    std::vector<size_t> rows(l.batch * l.seq);
    if (!position_ids) {
      const Shape want{static_cast<int64_t>(l.batch), static_cast<int64_t>(l.seq), static_cast<int64_t>(half)};
      if (c != want)
        return make_error("without position_ids the caches must have shape " + shape_to_string(want) + ", got " +
                          shape_to_string(c));
      for (size_t i = 0; i < rows.size(); ++i) rows[i] = i;
      return rows;
    }
    if (c.size() != 2 || c[1] != static_cast<int64_t>(half))
      return make_error("with position_ids the caches must have shape [max_position, " + std::to_string(half) + "], got " +
                        shape_to_string(c));
    const Shape want{static_cast<int64_t>(l.batch), static_cast<int64_t>(l.seq)};
    if (position_ids->dtype() != DType::Int64 || position_ids->shape() != want)
      return make_error("position_ids must be int64 of shape " + shape_to_string(want));
    auto ids = position_ids->data<int64_t>();
    for (size_t i = 0; i < rows.size(); ++i) {
      if (ids[i] < 0 || ids[i] >= c[0])
        return make_error("position id " + std::to_string(ids[i]) + " is outside the caches' " + std::to_string(c[0]) +
                          " positions");
      rows[i] = static_cast<size_t>(ids[i]);
    }
    return rows;
  }

  // Pairs (x1, x2) are features (i, i + rot/2), or (2i, 2i + 1) when interleaved; each becomes
  // (cos*x1 - sin*x2, sin*x1 + cos*x2). Features from rot on are copied.
  template <typename T>
  void rotate(const RotaryLayout& l, size_t rot, const std::vector<size_t>& rows, const T* x, const T* cos, const T* sin,
              T* y) const {
    const size_t half = rot / 2;
    parallel_for(l.batch * l.seq, std::max<size_t>(1, 16384 / std::max<size_t>(1, l.heads * l.head_size)),
                 [&](size_t begin, size_t end) {
                   for (size_t p = begin; p < end; ++p) {
                     const T* c = cos + rows[p] * half;
                     const T* s = sin + rows[p] * half;
                     for (size_t h = 0; h < l.heads; ++h) {
                       const size_t off = l.offset(p / l.seq, p % l.seq, h);
                       const T* in = x + off;
                       T* o = y + off;
                       for (size_t i = 0; i < half; ++i) {
                         const size_t i1 = interleaved_ ? 2 * i : i, i2 = interleaved_ ? 2 * i + 1 : i + half;
                         const double x1 = in[i1], x2 = in[i2], ci = c[i], si = s[i];
                         o[i1] = static_cast<T>(ci * x1 - si * x2);
                         o[i2] = static_cast<T>(si * x1 + ci * x2);
                       }
                       for (size_t i = rot; i < l.head_size; ++i) o[i] = in[i];
                     }
                   }
                 });
  }

  bool interleaved_;
  int64_t rotary_dim_;
  int64_t num_heads_;
};

}  // namespace

Expected<KernelPtr> make_rotary_embedding(const Node& node, int64_t) {
  const int64_t interleaved = attr_int(node, "interleaved", 0);
  if (interleaved != 0 && interleaved != 1) return make_error("interleaved must be 0 or 1");
  const int64_t rotary_dim = attr_int(node, "rotary_embedding_dim", 0);
  if (rotary_dim < 0) return make_error("rotary_embedding_dim must be non-negative");
  const int64_t num_heads = attr_int(node, "num_heads", 0);
  if (num_heads < 0) return make_error("num_heads must be non-negative");
  return KernelPtr(new RotaryEmbeddingKernel(interleaved == 1, rotary_dim, num_heads));
}

}  // namespace reduce::ref
