// Attention (opsets 23 to 25): scaled dot-product attention with masks, a KV cache and grouped-query heads.
#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>

#include "reference/float_values.h"
#include "reference/kernel.h"
#include "reference/numeric.h"
#include "reference/parallel.h"

namespace reduce::ref {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

struct AttentionAttrs {
  bool causal = false;
  int64_t q_heads = 0, kv_heads = 0;  // only read for 3-D inputs
  int64_t qk_mode = 0;                // what qk_matmul_output holds: 0 QK, 1 softcapped, 2 + bias, 3 softmax
  std::optional<double> scale;        // default 1/sqrt(head size)
  double softcap = 0;                 // applied when > 0
  int64_t left_window = -1;           // opset 25: keys at most this far before the query (-1: any)
  int64_t right_window = -1;          // opset 25: keys at most this far after the query (-1: any)
  bool nonpad_input = false;          // opset 24 has nonpad_kv_seqlen
  size_t outputs = 1;                 // outputs the node has, for the optional ones (present KV, QK)
  bool want_qk = false;
};

// Sizes of one Attention call. Q is [B, q_heads, q_len, head] (3-D: [B, q_len, q_heads * head]),
// K and V likewise with kv_heads and kv_len; the cache holds past_len positions before the new ones.
struct AttentionDims {
  size_t batch = 0, q_heads = 0, kv_heads = 0, q_len = 0, kv_len = 0, past_len = 0, head = 0, v_head = 0;
  bool three_d = false;
  bool has_past = false;
  size_t total() const { return past_len + kv_len; }
  size_t group() const { return q_heads / kv_heads; }  // query heads sharing one KV head
  // Offset of element (b, h, s, 0) of a Q/K/V-like input with `heads` heads, `len` positions, `width` features.
  size_t at(size_t b, size_t h, size_t s, size_t heads, size_t len, size_t width) const {
    return three_d ? ((b * len + s) * heads + h) * width : ((b * heads + h) * len + s) * width;
  }
};

Error shape_error(const char* what, const Shape& got, const std::string& want) {
  return make_error(std::string(what) + " has shape " + shape_to_string(got) + ", expected " + want);
}

// Heads and head size of a 3-D input's last dim.
Expected<size_t> head_size_3d(const char* what, int64_t hidden, int64_t heads) {
  if (heads <= 0) return make_error("3-D inputs need the q_num_heads and kv_num_heads attributes");
  if (hidden % heads != 0)
    return make_error(std::string(what) + " hidden size " + std::to_string(hidden) + " is not a multiple of " +
                      std::to_string(heads) + " heads");
  return static_cast<size_t>(hidden / heads);
}

Expected<AttentionDims> attention_dims(const AttentionAttrs& a, const Shape& q, const Shape& k, const Shape& v,
                                       const Tensor* past_key, const Tensor* past_value) {
  if (q.size() != k.size() || q.size() != v.size() || (q.size() != 3 && q.size() != 4))
    return make_error("Q, K and V must all be 3-D or all 4-D, got " + shape_to_string(q) + ", " + shape_to_string(k) +
                      ", " + shape_to_string(v));
  AttentionDims d;
  d.three_d = q.size() == 3;
  d.batch = static_cast<size_t>(q[0]);
  if (d.three_d) {
    d.q_len = static_cast<size_t>(q[1]);
    d.kv_len = static_cast<size_t>(k[1]);
    d.q_heads = static_cast<size_t>(a.q_heads);
    d.kv_heads = static_cast<size_t>(a.kv_heads);
    REDUCE_ASSIGN(d.head, head_size_3d("Q", q[2], a.q_heads));
    REDUCE_ASSIGN(size_t k_head, head_size_3d("K", k[2], a.kv_heads));
    REDUCE_ASSIGN(d.v_head, head_size_3d("V", v[2], a.kv_heads));
    if (k_head != d.head) return make_error("K's head size " + std::to_string(k_head) + " differs from Q's");
  } else {
    d.q_heads = static_cast<size_t>(q[1]);
    d.q_len = static_cast<size_t>(q[2]);
    d.head = static_cast<size_t>(q[3]);
    d.kv_heads = static_cast<size_t>(k[1]);
    d.kv_len = static_cast<size_t>(k[2]);
    d.v_head = static_cast<size_t>(v[3]);
    if (k[3] != q[3]) return shape_error("K", k, "head size " + std::to_string(q[3]) + " as Q");
    if (v[1] != k[1]) return shape_error("V", v, std::to_string(k[1]) + " heads as K");
  }
  if (k[0] != q[0] || v[0] != q[0]) return make_error("Q, K and V must have the same batch size");
  if (v[d.three_d ? 1 : 2] != k[d.three_d ? 1 : 2]) return make_error("K and V must have the same sequence length");
  if (d.kv_heads == 0 || d.q_heads % d.kv_heads != 0)
    return make_error(std::to_string(d.q_heads) + " query heads are not a multiple of " + std::to_string(d.kv_heads) +
                      " key/value heads");
  if (!past_key != !past_value) return make_error("past_key and past_value must be given together");
  if (past_key) {
    const Shape& pk = past_key->shape();
    const auto want = [&](size_t width) {
      return "[" + std::to_string(d.batch) + ", " + std::to_string(d.kv_heads) + ", past_len, " + std::to_string(width) + "]";
    };
    if (pk.size() != 4 || pk[0] != q[0] || static_cast<size_t>(pk[1]) != d.kv_heads || static_cast<size_t>(pk[3]) != d.head)
      return shape_error("past_key", pk, want(d.head));
    const Shape& pv = past_value->shape();
    if (pv.size() != 4 || pv[0] != q[0] || pv[1] != pk[1] || pv[2] != pk[2] || static_cast<size_t>(pv[3]) != d.v_head)
      return shape_error("past_value", pv, want(d.v_head));
    d.past_len = static_cast<size_t>(pk[2]);
    d.has_past = true;
  }
  return d;
}

// attn_mask as an additive bias over [B, q_heads, q_len, total]: broadcast from the right, its last
// dim padded with -inf up to the total length; bool true adds 0, false -inf.
class MaskView {
 public:
  static Expected<MaskView> make(const Tensor* mask, const AttentionDims& d) {
    MaskView m;
    if (!mask) return m;
    const Shape& s = mask->shape();
    const size_t full[] = {d.batch, d.q_heads, d.q_len, d.total()};
    if (s.empty() || s.size() > 4 || static_cast<size_t>(s.back()) > d.total())
      return make_error("attn_mask of shape " + shape_to_string(s) + " does not broadcast to [" + std::to_string(d.batch) +
                        ", " + std::to_string(d.q_heads) + ", " + std::to_string(d.q_len) + ", " +
                        std::to_string(d.total()) + "]");
    m.last_ = static_cast<size_t>(s.back());
    size_t stride = m.last_;
    for (size_t k = 1; k < s.size(); ++k) {
      const size_t axis = 3 - k, dim = static_cast<size_t>(s[s.size() - 1 - k]);
      if (dim != 1 && dim != full[axis])
        return make_error("attn_mask of shape " + shape_to_string(s) + " does not broadcast over dim " +
                          std::to_string(axis) + " of size " + std::to_string(full[axis]));
      m.strides_[axis] = dim == 1 ? 0 : stride;
      stride *= dim;
    }
    if (mask->dtype() == DType::Bool) {
      // Read as bytes: any non-zero byte is true (a bool read of another value would be undefined).
      for (uint8_t keep : mask->data<uint8_t>()) m.values_.push_back(keep != 0 ? 0.0 : kNegInf);
    } else {
      REDUCE_ASSIGN(m.values_, float_values(*mask, "attn_mask"));
    }
    m.present_ = true;
    return m;
  }

  bool present() const { return present_; }
  // Adds the mask row of (b, h, i) to bias[0, total).
  void add_row(size_t b, size_t h, size_t i, std::vector<double>& bias) const {
    const double* row = values_.data() + b * strides_[0] + h * strides_[1] + i * strides_[2];
    for (size_t j = 0; j < bias.size(); ++j) bias[j] += j < last_ ? row[j] : kNegInf;
  }

 private:
  bool present_ = false;
  std::vector<double> values_;
  size_t last_ = 0;
  size_t strides_[3] = {0, 0, 0};
};

// Everything one row (b, query head h, query i) of the computation reads.
template <typename T>
struct AttentionInputs {
  const AttentionDims& d;
  const AttentionAttrs& a;
  double scale;
  const T* q;
  const T* present_k;  // [B, kv_heads, total, head]
  const T* present_v;  // [B, kv_heads, total, v_head]
  const MaskView& mask;
  const int64_t* nonpad;  // [B] valid cache lengths, or nullptr
};

// The additive bias of row (b, h, i): attn_mask, the causal frontier, the local window, the padding
// of nonpad_kv_seqlen. Causal masking and windows are bottom-right aligned: query i sits at position
// i + offset among the keys, offset being the past length (or the valid length minus the query length
// of an external cache given by nonpad_kv_seqlen).
template <typename T>
void bias_row(const AttentionInputs<T>& in, size_t b, size_t h, size_t i, std::vector<double>& bias) {
  std::fill(bias.begin(), bias.end(), 0.0);
  if (in.mask.present()) in.mask.add_row(b, h, i, bias);
  const auto total = static_cast<int64_t>(bias.size());
  int64_t offset = 0;
  if (in.d.has_past) offset = static_cast<int64_t>(in.d.past_len);
  else if (in.nonpad) offset = in.nonpad[b] - static_cast<int64_t>(in.d.q_len);
  const int64_t position = static_cast<int64_t>(i) + offset;
  const AttentionAttrs& a = in.a;
  for (int64_t j = 0; j < total; ++j) {
    const int64_t before = position - j;  // how far key j is before the query (negative: after)
    if (a.causal && before < 0) bias[static_cast<size_t>(j)] += kNegInf;
    if (a.left_window >= 0 && before > a.left_window) bias[static_cast<size_t>(j)] += kNegInf;
    if (a.right_window >= 0 && -before > a.right_window) bias[static_cast<size_t>(j)] += kNegInf;
  }
  if (in.nonpad)
    for (int64_t j = std::max<int64_t>(0, in.nonpad[b]); j < total; ++j) bias[static_cast<size_t>(j)] += kNegInf;
}

// Scores, softmax and output of one row. qk_row (total values), when given, receives the QK output.
template <typename T>
void attention_row(const AttentionInputs<T>& in, size_t b, size_t h, size_t i, std::vector<double>& bias,
                   std::vector<double>& score, T* y_row, T* qk_row) {
  const AttentionDims& d = in.d;
  const size_t total = d.total(), kvh = h / d.group();
  bias_row(in, b, h, i, bias);
  const T* q = in.q + d.at(b, h, i, d.q_heads, d.q_len, d.head);
  const T* k = in.present_k + (b * d.kv_heads + kvh) * total * d.head;
  bool all_masked = true;
  for (size_t j = 0; j < total; ++j) {
    double dot = 0;
    for (size_t c = 0; c < d.head; ++c) dot += static_cast<double>(q[c]) * static_cast<double>(k[j * d.head + c]);
    double s = dot * in.scale;
    if (qk_row && in.a.qk_mode == 0) qk_row[j] = static_cast<T>(s);
    // Softcap comes before the bias so that masked scores stay -inf.
    if (in.a.softcap > 0) s = in.a.softcap * std::tanh(s / in.a.softcap);
    if (qk_row && in.a.qk_mode == 1) qk_row[j] = static_cast<T>(s);
    score[j] = s + bias[j];
    if (qk_row && in.a.qk_mode == 2) qk_row[j] = static_cast<T>(score[j]);
    all_masked = all_masked && bias[j] == kNegInf;
  }
  // A row whose bias masks every key attends to nothing: probabilities 0, not the NaN of exp(-inf - -inf).
  if (all_masked) {
    std::fill(score.begin(), score.end(), 0.0);
  } else {
    double m = kNegInf;
    for (double s : score) m = std::max(m, s);
    double sum = 0;
    for (double& s : score) sum += (s = std::exp(s - m));
    for (double& s : score) s /= sum;
  }
  if (qk_row && in.a.qk_mode == 3)
    for (size_t j = 0; j < total; ++j) qk_row[j] = static_cast<T>(score[j]);
  const T* v = in.present_v + (b * d.kv_heads + kvh) * total * d.v_head;
  for (size_t c = 0; c < d.v_head; ++c) {
    double acc = 0;
    for (size_t j = 0; j < total; ++j) acc += score[j] * static_cast<double>(v[j * d.v_head + c]);
    y_row[c] = static_cast<T>(acc);
  }
}

// The cache after this step, [B, kv_heads, total, width]: past positions, then the new ones (from
// 3-D or 4-D `now`).
template <typename T>
void fill_present(const AttentionDims& d, const T* past, const T* now, size_t width, T* out) {
  for (size_t b = 0; b < d.batch; ++b)
    for (size_t h = 0; h < d.kv_heads; ++h) {
      T* o = out + (b * d.kv_heads + h) * d.total() * width;
      if (past) std::copy_n(past + (b * d.kv_heads + h) * d.past_len * width, d.past_len * width, o);
      for (size_t s = 0; s < d.kv_len; ++s)
        std::copy_n(now + d.at(b, h, s, d.kv_heads, d.kv_len, width), width, o + (d.past_len + s) * width);
    }
}

class AttentionKernel : public Kernel {
 public:
  explicit AttentionKernel(AttentionAttrs a) : a_(a) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& q = *ctx.input(0);
    const Tensor& k = *ctx.input(1);
    const Tensor& v = *ctx.input(2);
    const Tensor* mask = ctx.input(3);
    const Tensor* past_key = ctx.input(4);
    const Tensor* past_value = ctx.input(5);
    const Tensor* nonpad = a_.nonpad_input ? ctx.input(6) : nullptr;
    REDUCE_TRY(check_types(q, {&k, &v, past_key, past_value}, mask));
    REDUCE_ASSIGN(AttentionDims d, attention_dims(a_, q.shape(), k.shape(), v.shape(), past_key, past_value));
    if (nonpad && (nonpad->dtype() != DType::Int64 || nonpad->shape() != Shape{static_cast<int64_t>(d.batch)}))
      return make_error("nonpad_kv_seqlen must be int64 of shape [" + std::to_string(d.batch) + "]");
    if (mask) REDUCE_TRY(ctx.reserve(mask->elements() * sizeof(double)));
    REDUCE_ASSIGN(MaskView mv, MaskView::make(mask, d));

    REDUCE_ASSIGN(Tensor wq, widen(q));
    const DType w = wq.dtype();
    const auto dim = [](size_t n) { return static_cast<int64_t>(n); };
    const Shape y_shape = d.three_d ? Shape{dim(d.batch), dim(d.q_len), dim(d.q_heads * d.v_head)}
                                    : Shape{dim(d.batch), dim(d.q_heads), dim(d.q_len), dim(d.v_head)};
    const Shape pk_shape{dim(d.batch), dim(d.kv_heads), dim(d.total()), dim(d.head)};
    const Shape pv_shape{dim(d.batch), dim(d.kv_heads), dim(d.total()), dim(d.v_head)};
    const Shape qk_shape{dim(d.batch), dim(d.q_heads), dim(d.q_len), dim(d.total())};
    uint64_t bytes = 0;
    for (const Shape* s : {&y_shape, &pk_shape, &pv_shape, &qk_shape}) {
      if (s == &qk_shape && !a_.want_qk) continue;
      REDUCE_ASSIGN(uint64_t n, element_count(*s));
      bytes += n * dtype_size(w);
    }
    REDUCE_TRY(ctx.reserve(bytes));
    REDUCE_ASSIGN(Tensor y, Tensor::allocate(w, y_shape));
    REDUCE_ASSIGN(Tensor pk, Tensor::allocate(w, pk_shape));
    REDUCE_ASSIGN(Tensor pv, Tensor::allocate(w, pv_shape));
    Tensor qk;
    if (a_.want_qk) {
      REDUCE_ASSIGN(qk, Tensor::allocate(w, qk_shape));
    }

    Status status = visit_dtype(w, [&]<typename T>() -> Status {
      if constexpr (std::is_floating_point_v<T>) {
        REDUCE_TRY(fill_caches<T>(d, k, v, past_key, past_value, pk, pv));
        const double scale = a_.scale ? *a_.scale : 1.0 / std::sqrt(static_cast<double>(d.head));
        const AttentionInputs<T> in{d,  a_, scale, wq.data<T>().data(), pk.data<T>().data(), pv.data<T>().data(),
                                    mv, nonpad ? nonpad->data<int64_t>().data() : nullptr};
        // Without Y or QK values there is nothing to compute (and the row count is not bounded by any tensor).
        if (y.elements() > 0 || qk.elements() > 0)
          run_rows<T>(in, y.mutable_data<T>().data(), a_.want_qk ? qk.mutable_data<T>().data() : nullptr);
        return {};
      } else {
        return make_error("unsupported input type");
      }
    });
    REDUCE_TRY(status);
    Tensor* results[] = {&y, &pk, &pv, &qk};
    for (size_t i = 0; i < 4 && i < a_.outputs; ++i) {
      if (i == 3 && !a_.want_qk) continue;
      REDUCE_ASSIGN(Tensor out, narrow(*results[i], q.dtype()));
      ctx.set_output(i, std::move(out));
    }
    return {};
  }

 private:
  // Q, K, V and the cache share one floating-point type; a mask is bool or floating-point.
  static Status check_types(const Tensor& q, std::initializer_list<const Tensor*> same, const Tensor* mask) {
    if (!dtype_is_float(q.dtype())) return make_error("unsupported input type " + std::string(dtype_name(q.dtype())));
    for (const Tensor* t : same)
      if (t && t->dtype() != q.dtype())
        return make_error("K, V, past_key and past_value must have Q's type " + std::string(dtype_name(q.dtype())));
    if (mask && mask->dtype() != DType::Bool && !dtype_is_float(mask->dtype()))
      return make_error("attn_mask must be bool or floating-point, got " + std::string(dtype_name(mask->dtype())));
    return {};
  }

  template <typename T>
  static Status fill_caches(const AttentionDims& d, const Tensor& k, const Tensor& v, const Tensor* past_key,
                            const Tensor* past_value, Tensor& pk, Tensor& pv) {
    REDUCE_ASSIGN(Tensor wk, widen(k));
    REDUCE_ASSIGN(Tensor wv, widen(v));
    Tensor wpk, wpv;
    if (past_key) {
      REDUCE_ASSIGN(wpk, widen(*past_key));
      REDUCE_ASSIGN(wpv, widen(*past_value));
    }
    fill_present<T>(d, past_key ? wpk.data<T>().data() : nullptr, wk.data<T>().data(), d.head, pk.mutable_data<T>().data());
    fill_present<T>(d, past_value ? wpv.data<T>().data() : nullptr, wv.data<T>().data(), d.v_head,
                    pv.mutable_data<T>().data());
    return {};
  }

  // Rows are independent: each writes only its own Y and QK values, so any thread count gives the same bits.
  template <typename T>
  static void run_rows(const AttentionInputs<T>& in, T* y, T* qk) {
    const AttentionDims& d = in.d;
    const size_t rows = d.batch * d.q_heads * d.q_len, total = d.total();
    const size_t work = std::max<size_t>(1, total * (d.head + d.v_head));
    parallel_for(rows, std::max<size_t>(1, 32768 / work), [&](size_t begin, size_t end) {
      std::vector<double> bias(total), score(total);
      for (size_t r = begin; r < end; ++r) {
        const size_t b = r / (d.q_heads * d.q_len), h = r / d.q_len % d.q_heads, i = r % d.q_len;
        T* y_row = y + d.at(b, h, i, d.q_heads, d.q_len, d.v_head);
        attention_row<T>(in, b, h, i, bias, score, y_row, qk ? qk + r * total : nullptr);
      }
    });
  }

  AttentionAttrs a_;
};

bool has_output(const Node& node, size_t i) { return i < node.outputs.size() && !node.outputs[i].empty(); }

}  // namespace

Expected<KernelPtr> make_attention(const Node& node, int64_t opset) {
  AttentionAttrs a;
  const int64_t causal = attr_int(node, "is_causal", 0);
  if (causal != 0 && causal != 1) return make_error("is_causal must be 0 or 1");
  a.causal = causal == 1;
  a.q_heads = attr_int(node, "q_num_heads", 0);
  a.kv_heads = attr_int(node, "kv_num_heads", 0);
  if (a.q_heads < 0 || a.kv_heads < 0) return make_error("q_num_heads and kv_num_heads must be positive");
  a.qk_mode = attr_int(node, "qk_matmul_output_mode", 0);
  if (a.qk_mode < 0 || a.qk_mode > 3) return make_error("qk_matmul_output_mode must be 0, 1, 2 or 3");
  if (const Attribute* s = node.attribute("scale")) {
    if (s->kind != Attribute::Kind::Float || !std::isfinite(s->f)) return make_error("scale must be a finite float");
    a.scale = s->f;
  }
  a.softcap = attr_float(node, "softcap", 0.0f);
  if (std::isnan(a.softcap)) return make_error("softcap must be a number");
  // Softmax is computed in double whatever the requested precision; the attribute only has to be valid.
  const int64_t precision = attr_int(node, "softmax_precision", 1);
  if (precision != 1 && precision != 10 && precision != 11 && precision != 16)
    return make_error("softmax_precision must be a floating-point type (1, 10, 11 or 16)");
  a.left_window = attr_int(node, "left_window_size", -1);
  a.right_window = attr_int(node, "right_window_size", -1);
  if (a.left_window < -1 || a.right_window < -1) return make_error("window sizes must be -1 (unbounded) or non-negative");
  if (opset < 25 && (node.attribute("left_window_size") || node.attribute("right_window_size")))
    return make_error("left_window_size and right_window_size need opset 25");
  a.nonpad_input = opset >= 24;
  if (!a.nonpad_input && node.inputs.size() > 6) return make_error("nonpad_kv_seqlen needs opset 24");
  a.outputs = node.outputs.size();
  a.want_qk = has_output(node, 3);
  return KernelPtr(new AttentionKernel(a));
}

}  // namespace reduce::ref
