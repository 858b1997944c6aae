// RNN, GRU and LSTM: one driver over directions, batches and time steps; the cells differ in their gates.
#include <cmath>
#include <type_traits>

#include "reference/kernel.h"
#include "reference/numeric.h"
#include "reference/parallel.h"
#include "rnn_activation.h"

namespace reduce::ref {

namespace {

enum class Cell { Rnn, Gru, Lstm };

struct RecurrentAttrs {
  Cell cell = Cell::Rnn;
  int64_t hidden = 0;
  size_t directions = 1;
  bool reverse = false;  // direction "reverse" (bidirectional runs forward then reverse)
  std::vector<RnnActivation> act;  // per direction: f[, g[, h]]
  double clip = 0;                 // 0: no clipping
  bool linear_before_reset = false;
  bool input_forget = false;
  bool batch_first = false;  // layout = 1
};

size_t gate_count(Cell c) { return c == Cell::Rnn ? 1 : c == Cell::Gru ? 3 : 4; }

template <typename T>
class Recurrence {
 public:
  Recurrence(const RecurrentAttrs& a, int64_t S, int64_t B, int64_t I) : a_(a), S_(S), B_(B), I_(I), H_(a.hidden) {}

  // Runs one direction for one batch entry; writes Y rows (if any) and the final states.
  void run(size_t d, int64_t b, int64_t len, const T* X, const T* W, const T* R, const T* Bias, const T* P, const T* h0,
           const T* c0, T* Y, T* Yh, T* Yc) const {
    const size_t G = gate_count(a_.cell);
    const int64_t H = H_;
    const RnnActivation* act = &a_.act[d * (a_.cell == Cell::Rnn ? 1 : a_.cell == Cell::Gru ? 2 : 3)];
    std::vector<T> h(h0, h0 + H), c(c0 ? c0 : h0, (c0 ? c0 : h0) + H);
    if (!c0) std::fill(c.begin(), c.end(), T(0));
    std::vector<double> xw(G * static_cast<size_t>(H)), hr(G * static_cast<size_t>(H)), rh(static_cast<size_t>(H));
    const bool backward = a_.reverse || d == 1;
    for (int64_t s = 0; s < len; ++s) {
      const int64_t t = backward ? len - 1 - s : s;
      const T* x = X + (a_.batch_first ? (b * S_ + t) : (t * B_ + b)) * I_;
      for (size_t g = 0; g < G * static_cast<size_t>(H); ++g) {
        double acc = 0;
        const T* w = W + g * static_cast<size_t>(I_);
        for (int64_t i = 0; i < I_; ++i) acc += static_cast<double>(w[i]) * static_cast<double>(x[i]);
        xw[g] = acc + (Bias ? static_cast<double>(Bias[g]) : 0.0);
        double acc2 = 0;
        const T* r = R + g * static_cast<size_t>(H);
        for (int64_t j = 0; j < H; ++j) acc2 += static_cast<double>(r[j]) * static_cast<double>(h[j]);
        hr[g] = acc2 + (Bias ? static_cast<double>(Bias[G * H + g]) : 0.0);
      }
      if (a_.cell == Cell::Rnn) {
        for (int64_t j = 0; j < H; ++j) h[j] = static_cast<T>(act[0](clip(xw[j] + hr[j])));
      } else if (a_.cell == Cell::Gru) {
        // Gate order z, r, h.
        std::vector<double> z(H), r(H);
        for (int64_t j = 0; j < H; ++j) {
          z[j] = act[0](clip(xw[j] + hr[j]));
          r[j] = act[0](clip(xw[H + j] + hr[H + j]));
        }
        if (!a_.linear_before_reset) {
          // The candidate reads (r * h) through the recurrence weights of the h gate.
          for (int64_t j = 0; j < H; ++j) rh[j] = r[j] * static_cast<double>(h[j]);
          for (int64_t g = 0; g < H; ++g) {
            double acc = 0;
            const T* rw = R + (2 * H + g) * H;
            for (int64_t j = 0; j < H; ++j) acc += static_cast<double>(rw[j]) * rh[j];
            hr[2 * H + g] = acc + (Bias ? static_cast<double>(Bias[G * H + 2 * H + g]) : 0.0);
          }
        }
        for (int64_t j = 0; j < H; ++j) {
          const double pre = a_.linear_before_reset ? xw[2 * H + j] + r[j] * hr[2 * H + j] : xw[2 * H + j] + hr[2 * H + j];
          const double cand = act[1](clip(pre));
          h[j] = static_cast<T>((1 - z[j]) * cand + z[j] * static_cast<double>(h[j]));
        }
      } else {
        // Gate order i, o, f, c; peepholes P = [Pi, Po, Pf].
        for (int64_t j = 0; j < H; ++j) {
          const double cprev = static_cast<double>(c[j]);
          const double pi = P ? static_cast<double>(P[j]) : 0, po = P ? static_cast<double>(P[H + j]) : 0,
                       pf = P ? static_cast<double>(P[2 * H + j]) : 0;
          const double ig = act[0](clip(xw[j] + hr[j] + pi * cprev));
          double fg = act[0](clip(xw[2 * H + j] + hr[2 * H + j] + pf * cprev));
          if (a_.input_forget) fg = 1 - ig;
          const double cand = act[1](clip(xw[3 * H + j] + hr[3 * H + j]));
          const T cnew = static_cast<T>(fg * cprev + ig * cand);
          const double og = act[0](clip(xw[H + j] + hr[H + j] + po * static_cast<double>(cnew)));
          c[j] = cnew;
          h[j] = static_cast<T>(og * act[2](static_cast<double>(cnew)));
        }
      }
      if (Y) {
        const int64_t dirs = static_cast<int64_t>(a_.directions);
        T* y = Y + (a_.batch_first ? ((b * S_ + t) * dirs + static_cast<int64_t>(d)) : ((t * dirs + static_cast<int64_t>(d)) * B_ + b)) * H;
        std::copy(h.begin(), h.end(), y);
      }
    }
    if (Yh) std::copy(h.begin(), h.end(), Yh);
    if (Yc) std::copy(c.begin(), c.end(), Yc);
  }

 private:
  double clip(double v) const { return a_.clip > 0 ? std::clamp(v, -a_.clip, a_.clip) : v; }
  const RecurrentAttrs& a_;
  int64_t S_, B_, I_, H_;
};

// The dims of one run: sequence length S, batch B, input size I, hidden size H, directions D, gates G.
struct RecurrentDims {
  int64_t S, B, I, H, D, G;
};

// The optional inputs of the three ops, null when omitted or empty.
struct RecurrentInputs {
  const Tensor *W, *R, *Bias, *lens, *h0, *c0, *P;
};

// W, R, B, the initial states and the peepholes must have X's type and the shapes the dims give.
Status check_recurrent_inputs(const RecurrentAttrs& a, const RecurrentDims& n, DType dt, const RecurrentInputs& in) {
  auto expect = [&](const Tensor* t, const char* name, Shape shape) -> Status {
    if (!t) return {};
    if (t->dtype() != dt) return make_error(std::string(name) + " must have X's type");
    if (t->shape() != shape) return make_error(std::string(name) + " must have shape " + shape_to_string(shape) + ", got " + shape_to_string(t->shape()));
    return {};
  };
  if (!in.W || !in.R) return make_error("W and R are required");
  const Shape state = a.batch_first ? Shape{n.B, n.D, n.H} : Shape{n.D, n.B, n.H};
  REDUCE_TRY(expect(in.W, "W", {n.D, n.G * n.H, n.I}));
  REDUCE_TRY(expect(in.R, "R", {n.D, n.G * n.H, n.H}));
  REDUCE_TRY(expect(in.Bias, "B", {n.D, 2 * n.G * n.H}));
  REDUCE_TRY(expect(in.h0, "initial_h", state));
  REDUCE_TRY(expect(in.c0, "initial_c", state));
  REDUCE_TRY(expect(in.P, "P", {n.D, 3 * n.H}));
  return {};
}

// Steps per batch entry: sequence_lens (int32, within [0, S]) or S for all.
Expected<std::vector<int64_t>> sequence_lengths(const Tensor* lens, int64_t B, int64_t S) {
  std::vector<int64_t> len(static_cast<size_t>(B), S);
  if (!lens) return len;
  if (lens->dtype() != DType::Int32 || lens->elements() != static_cast<uint64_t>(B))
    return make_error("sequence_lens must be int32 with one value per batch entry");
  for (size_t b = 0; b < len.size(); ++b) {
    len[b] = lens->data<int32_t>()[b];
    if (len[b] < 0 || len[b] > S)
      return make_error("sequence_lens value " + std::to_string(len[b]) + " is outside [0, " + std::to_string(S) + "]");
  }
  return len;
}

class RecurrentKernel : public Kernel {
 public:
  explicit RecurrentKernel(RecurrentAttrs a) : a_(std::move(a)) {}

  Status compute(KernelContext& ctx) const override {
    auto in = [&](size_t i) -> const Tensor* {
      const Tensor* t = i < ctx.input_count() ? ctx.input(i) : nullptr;
      return t && !t->empty() ? t : nullptr;
    };
    const Tensor& x = *ctx.input(0);
    const DType dt = x.dtype();
    if (!dtype_is_float(dt)) return make_error("unsupported input type " + std::string(dtype_name(dt)));
    if (x.rank() != 3) return make_error("X must be 3-d, got " + shape_to_string(x.shape()));
    const RecurrentDims n{a_.batch_first ? x.shape()[1] : x.shape()[0], a_.batch_first ? x.shape()[0] : x.shape()[1],
                          x.shape()[2], a_.hidden, static_cast<int64_t>(a_.directions), static_cast<int64_t>(gate_count(a_.cell))};
    const int64_t S = n.S, B = n.B, I = n.I, H = n.H, D = n.D, G = n.G;
    const RecurrentInputs inputs{in(1), in(2), in(3), in(4), in(5), a_.cell == Cell::Lstm ? in(6) : nullptr,
                                 a_.cell == Cell::Lstm ? in(7) : nullptr};
    const Tensor *W = inputs.W, *R = inputs.R, *Bias = inputs.Bias, *h0 = inputs.h0, *c0 = inputs.c0, *P = inputs.P;
    REDUCE_TRY(check_recurrent_inputs(a_, n, dt, inputs));
    const Shape state = a_.batch_first ? Shape{B, D, H} : Shape{D, B, H};
    REDUCE_ASSIGN(const std::vector<int64_t> len, sequence_lengths(inputs.lens, B, S));
    const DType wt = is_half(dt) ? DType::Float : dt;
    const Shape y_shape = a_.batch_first ? Shape{B, S, D, H} : Shape{S, D, B, H};
    REDUCE_ASSIGN(Tensor y, Tensor::allocate(wt, ctx.output_count() > 0 ? y_shape : Shape{0}));
    REDUCE_ASSIGN(Tensor yh, Tensor::allocate(wt, state));
    REDUCE_ASSIGN(Tensor yc, Tensor::allocate(wt, state));
    std::vector<Tensor> wide;
    for (const Tensor* t : {&x, W, R, Bias, P, h0, c0}) {
      if (!t) {
        wide.emplace_back();
        continue;
      }
      REDUCE_ASSIGN(Tensor w, widen(*t));
      wide.push_back(std::move(w));
    }
    REDUCE_ASSIGN(Tensor zero_state, Tensor::allocate(wt, state));
    visit_dtype(wt, [&]<typename T>() {
      if constexpr (std::is_floating_point_v<T>) {
        auto ptr = [](const Tensor& t) -> const T* { return t.empty() ? nullptr : t.data<T>().data(); };
        const T* h_init = wide[5].empty() ? zero_state.data<T>().data() : ptr(wide[5]);
        const T* c_init = wide[6].empty() ? zero_state.data<T>().data() : ptr(wide[6]);
        const Recurrence<T> rec(a_, S, B, I);
        T* yp = y.elements() ? y.mutable_data<T>().data() : nullptr;
        T* yhp = yh.mutable_data<T>().data();
        T* ycp = yc.mutable_data<T>().data();
        // Each (direction, batch) pair writes its own outputs only.
        parallel_for(static_cast<size_t>(D * B), 1, [&](size_t begin, size_t end) {
          for (size_t k = begin; k < end; ++k) {
            const int64_t d = static_cast<int64_t>(k) / B, b = static_cast<int64_t>(k) % B;
            const int64_t st = (a_.batch_first ? b * D + d : d * B + b) * H;
            rec.run(static_cast<size_t>(d), b, len[static_cast<size_t>(b)], ptr(wide[0]), ptr(wide[1]) + d * G * H * I,
                    ptr(wide[2]) + d * G * H * H, wide[3].empty() ? nullptr : ptr(wide[3]) + d * 2 * G * H,
                    wide[4].empty() ? nullptr : ptr(wide[4]) + d * 3 * H, h_init + st, a_.cell == Cell::Lstm ? c_init + st : nullptr, yp,
                    yhp + st, ycp + st);
          }
        });
      }
    });
    Tensor* outs[] = {&y, &yh, &yc};
    for (size_t i = 0; i < ctx.output_count() && i < 3; ++i) {
      REDUCE_ASSIGN(Tensor r, narrow(*outs[i], dt));
      ctx.set_output(i, std::move(r));
    }
    return {};
  }

 private:
  RecurrentAttrs a_;
};

Expected<KernelPtr> make_recurrent(const Node& node, int64_t opset, Cell cell) {
  RecurrentAttrs a;
  a.cell = cell;
  a.hidden = attr_int(node, "hidden_size", 0);
  if (a.hidden <= 0 || a.hidden > (1 << 20)) return make_error("hidden_size must be positive");
  const std::string dir = attr_string(node, "direction", "forward");
  if (dir == "bidirectional") a.directions = 2;
  else if (dir == "reverse") a.reverse = true;
  else if (dir != "forward") return make_error("unknown direction '" + dir + "'");
  std::vector<std::string> defaults = cell == Cell::Rnn ? std::vector<std::string>{"Tanh"}
                                      : cell == Cell::Gru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                          : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  REDUCE_ASSIGN(a.act, read_rnn_activations(node, defaults, a.directions));
  if (const Attribute* c = node.attribute("clip")) {
    a.clip = c->f;
    if (!(a.clip > 0)) return make_error("clip must be positive");
  }
  a.linear_before_reset = attr_int(node, "linear_before_reset", 0) != 0;
  a.input_forget = attr_int(node, "input_forget", 0) != 0;
  const int64_t layout = opset >= 14 ? attr_int(node, "layout", 0) : 0;
  if (layout != 0 && layout != 1) return make_error("layout must be 0 or 1");
  a.batch_first = layout == 1;
  return KernelPtr(new RecurrentKernel(std::move(a)));
}

}  // namespace

Expected<KernelPtr> make_rnn(const Node& node, int64_t opset) { return make_recurrent(node, opset, Cell::Rnn); }
Expected<KernelPtr> make_gru(const Node& node, int64_t opset) { return make_recurrent(node, opset, Cell::Gru); }
Expected<KernelPtr> make_lstm(const Node& node, int64_t opset) { return make_recurrent(node, opset, Cell::Lstm); }

}  // namespace reduce::ref
