// LinearAttention (opset 27): recurrent linear attention over packed [B, T, H*D] inputs with a
// [B, H_kv, d_k, d_v] state per KV head, updated by the linear, gated, delta or gated_delta rule.
#include <cmath>
#include <optional>

#include "reference/float_values.h"
#include "reference/kernel.h"
#include "reference/parallel.h"

namespace reduce::ref {

namespace {

enum class UpdateRule { Linear, Gated, Delta, GatedDelta };

bool uses_decay(UpdateRule r) { return r == UpdateRule::Gated || r == UpdateRule::GatedDelta; }
bool uses_beta(UpdateRule r) { return r == UpdateRule::Delta || r == UpdateRule::GatedDelta; }

struct LinearAttentionAttrs {
  UpdateRule rule = UpdateRule::GatedDelta;
  int64_t q_heads = 0, kv_heads = 0;
  std::optional<double> scale;  // default 1/sqrt(d_k)
};

// The sizes of one call, checked against every input.
struct Dims {
  size_t batch = 0, steps = 0, q_heads = 0, kv_heads = 0, dk = 0, dv = 0;
  size_t decay_width = 0;  // per step and batch: kv_heads * dk (per key channel) or kv_heads (per head)
  size_t beta_width = 0;   // per step and batch: kv_heads, or 1 (shared by all heads)
};

class LinearAttentionKernel : public Kernel {
 public:
  explicit LinearAttentionKernel(LinearAttentionAttrs a) : a_(a) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& q = *ctx.input(0);
    const Tensor* past = ctx.input(3);
    const Tensor* decay = uses_decay(a_.rule) ? ctx.input(4) : nullptr;
    const Tensor* beta = uses_beta(a_.rule) ? ctx.input(5) : nullptr;
    if (uses_decay(a_.rule) && !decay) return make_error("this update_rule needs the decay input");
    if (uses_beta(a_.rule) && !beta) return make_error("this update_rule needs the beta input");
    REDUCE_ASSIGN(Dims d, dims(q, *ctx.input(1), *ctx.input(2), past, decay, beta));
    const int64_t b = static_cast<int64_t>(d.batch), t = static_cast<int64_t>(d.steps);
    const Shape out_shape{b, t, static_cast<int64_t>(d.q_heads * d.dv)};
    const Shape state_shape{b, static_cast<int64_t>(d.kv_heads), static_cast<int64_t>(d.dk), static_cast<int64_t>(d.dv)};
    // Every input and both outputs are held as doubles while computing (and once more as outputs).
    REDUCE_ASSIGN(uint64_t doubles, element_count(out_shape));
    REDUCE_ASSIGN(uint64_t state_elements, element_count(state_shape));
    doubles += state_elements;
    for (const Tensor* in : {&q, ctx.input(1), ctx.input(2), past, decay, beta})
      if (in) doubles += in->elements();
    REDUCE_TRY(ctx.reserve(doubles * 2 * sizeof(double)));
    REDUCE_ASSIGN(std::vector<double> qv, float_values(q, "query"));
    REDUCE_ASSIGN(std::vector<double> kv, float_values(*ctx.input(1), "key"));
    REDUCE_ASSIGN(std::vector<double> vv, float_values(*ctx.input(2), "value"));
    std::vector<double> state(d.batch * d.kv_heads * d.dk * d.dv, 0.0), gv, bv;
    if (past) {
      REDUCE_ASSIGN(state, float_values(*past, "past_state"));
    }
    if (decay) {
      REDUCE_ASSIGN(gv, float_values(*decay, "decay"));
    }
    if (beta) {
      REDUCE_ASSIGN(bv, float_values(*beta, "beta"));
    }
    std::vector<double> out(d.batch * d.steps * d.q_heads * d.dv);
    const double scale = a_.scale ? *a_.scale : 1.0 / std::sqrt(static_cast<double>(d.dk));
    parallel_for(d.batch * d.kv_heads, 1, [&](size_t begin, size_t end) {
      for (size_t p = begin; p < end; ++p) run_head(d, p / d.kv_heads, p % d.kv_heads, scale, qv, kv, vv, gv, bv, state, out);
    });
    REDUCE_ASSIGN(Tensor y, tensor_from_doubles(q.dtype(), out_shape, out));
    ctx.set_output(0, std::move(y));
    if (ctx.output_count() > 1) {
      REDUCE_ASSIGN(Tensor s, tensor_from_doubles(past ? past->dtype() : q.dtype(), state_shape, state));
      ctx.set_output(1, std::move(s));
    }
    return {};
  }

 private:
  Expected<Dims> dims(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* past, const Tensor* decay,
                      const Tensor* beta) const {
    for (const Tensor* t : {&q, &k, &v, decay, beta})
      if (t && (t->rank() != 3 || t->shape()[0] != q.shape()[0] || t->shape()[1] != q.shape()[1]))
        return make_error("query, key, value, decay and beta must be 3-D [B, T, ...] with the same B and T");
    for (const Tensor* t : {&k, &v, decay, beta})
      if (t && t->dtype() != q.dtype()) return make_error("key, value, decay and beta must have the type of query");
    Dims d;
    d.batch = static_cast<size_t>(q.shape()[0]);
    d.steps = static_cast<size_t>(q.shape()[1]);
    d.q_heads = static_cast<size_t>(a_.q_heads);
    d.kv_heads = static_cast<size_t>(a_.kv_heads);
    if (q.shape()[2] % a_.q_heads != 0 || v.shape()[2] % a_.kv_heads != 0 || q.shape()[2] == 0 || v.shape()[2] == 0)
      return make_error("query's last dim must be a positive multiple of q_num_heads and value's of kv_num_heads");
    d.dk = static_cast<size_t>(q.shape()[2] / a_.q_heads);
    d.dv = static_cast<size_t>(v.shape()[2] / a_.kv_heads);
    if (k.shape()[2] != static_cast<int64_t>(d.kv_heads * d.dk))
      return make_error("key must have kv_num_heads * d_k = " + std::to_string(d.kv_heads * d.dk) + " features, got " +
                        shape_to_string(k.shape()));
    const Shape state_shape{q.shape()[0], a_.kv_heads, static_cast<int64_t>(d.dk), static_cast<int64_t>(d.dv)};
    if (past && past->shape() != state_shape)
      return make_error("past_state must have shape " + shape_to_string(state_shape) + ", got " + shape_to_string(past->shape()));
    if (decay) {
      d.decay_width = static_cast<size_t>(decay->shape()[2]);
      if (d.decay_width != d.kv_heads * d.dk && d.decay_width != d.kv_heads)
        return make_error("decay must have kv_num_heads * d_k or kv_num_heads features, got " + shape_to_string(decay->shape()));
    }
    if (beta) {
      d.beta_width = static_cast<size_t>(beta->shape()[2]);
      if (d.beta_width != d.kv_heads && d.beta_width != 1)
        return make_error("beta must have kv_num_heads or 1 features, got " + shape_to_string(beta->shape()));
    }
    return d;
  }

  // Steps the state S (d_k x d_v) of KV head h of batch b through time and writes the outputs of the
  // query heads that share it: S = exp(g) * S (gated), then S += k ⊗ v (linear, gated) or
  // S += k ⊗ beta * (v - S^T k) (delta rules, with the decayed S), and o = scale * q^T S.
  void run_head(const Dims& d, size_t b, size_t h, double scale, const std::vector<double>& q, const std::vector<double>& k,
                const std::vector<double>& v, const std::vector<double>& g, const std::vector<double>& beta,
                std::vector<double>& state, std::vector<double>& out) const {
    double* s = state.data() + (b * d.kv_heads + h) * d.dk * d.dv;
    const size_t group = d.q_heads / d.kv_heads;
    std::vector<double> write(d.dv);
    for (size_t t = 0; t < d.steps; ++t) {
      const size_t bt = b * d.steps + t;
      const double* kt = k.data() + (bt * d.kv_heads + h) * d.dk;
      const double* vt = v.data() + (bt * d.kv_heads + h) * d.dv;
      if (uses_decay(a_.rule)) {
        for (size_t i = 0; i < d.dk; ++i) {
          const size_t gi = d.decay_width == d.kv_heads ? bt * d.kv_heads + h : (bt * d.kv_heads + h) * d.dk + i;
          const double f = std::exp(g[gi]);
          for (size_t j = 0; j < d.dv; ++j) s[i * d.dv + j] *= f;
        }
      }
      for (size_t j = 0; j < d.dv; ++j) write[j] = vt[j];
      if (uses_beta(a_.rule)) {
        const double bh = beta[d.beta_width == 1 ? bt : bt * d.kv_heads + h];
        for (size_t j = 0; j < d.dv; ++j) {
          double retrieved = 0;
          for (size_t i = 0; i < d.dk; ++i) retrieved += s[i * d.dv + j] * kt[i];
          write[j] = bh * (vt[j] - retrieved);
        }
      }
      for (size_t i = 0; i < d.dk; ++i)
        for (size_t j = 0; j < d.dv; ++j) s[i * d.dv + j] += kt[i] * write[j];
      for (size_t qh = h * group; qh < (h + 1) * group; ++qh) {
        const double* qt = q.data() + (bt * d.q_heads + qh) * d.dk;
        double* o = out.data() + (bt * d.q_heads + qh) * d.dv;
        for (size_t j = 0; j < d.dv; ++j) {
          double sum = 0;
          for (size_t i = 0; i < d.dk; ++i) sum += qt[i] * s[i * d.dv + j];
          o[j] = scale * sum;
        }
      }
    }
  }

  LinearAttentionAttrs a_;
};

}  // namespace

Expected<KernelPtr> make_linear_attention(const Node& node, int64_t) {
  LinearAttentionAttrs a;
  const std::string rule = attr_string(node, "update_rule", "gated_delta");
  if (rule == "linear") a.rule = UpdateRule::Linear;
  else if (rule == "gated") a.rule = UpdateRule::Gated;
  else if (rule == "delta") a.rule = UpdateRule::Delta;
  else if (rule == "gated_delta") a.rule = UpdateRule::GatedDelta;
  else return make_error("update_rule must be linear, gated, delta or gated_delta, got '" + rule + "'");
  a.q_heads = attr_int(node, "q_num_heads", 0);
  a.kv_heads = attr_int(node, "kv_num_heads", 0);
  if (a.q_heads <= 0 || a.kv_heads <= 0 || a.q_heads % a.kv_heads != 0)
    return make_error("q_num_heads and kv_num_heads must be positive, q_num_heads a multiple of kv_num_heads");
  if (const Attribute* s = node.attribute("scale")) {
    if (s->kind != Attribute::Kind::Float || !std::isfinite(s->f)) return make_error("scale must be a finite float");
    a.scale = s->f;
  }
  return KernelPtr(new LinearAttentionKernel(a));
}

}  // namespace reduce::ref
