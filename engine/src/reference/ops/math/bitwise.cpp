// Integer bit operations with broadcasting: BitShift, BitwiseAnd/Or/Xor, BitwiseNot.
#include <type_traits>

#include "reference/elementwise.h"
#include "reference/kernel.h"

namespace reduce::ref {

namespace {

enum class Bits { ShiftLeft, ShiftRight, And, Or, Xor };

bool is_integer(DType t) {
  switch (t) {
    case DType::Int8: case DType::Int16: case DType::Int32: case DType::Int64:
    case DType::UInt8: case DType::UInt16: case DType::UInt32: case DType::UInt64: return true;
    default: return false;
  }
}

// A shift amount outside [0, width) moves every bit out (C++ leaves it undefined): a left shift gives 0 and
// a right shift leaves only the sign, as repeated single-bit shifts would. Left shifts wrap modulo 2^width.
template <typename T>
bool shift_out_of_range(T s) {
  constexpr T bits = static_cast<T>(sizeof(T) * 8);
  if constexpr (std::is_signed_v<T>) return s < 0 || s >= bits;
  else return s >= bits;
}

template <typename T>
T shift_left(T x, T s) {
  using U = std::make_unsigned_t<T>;
  if (shift_out_of_range(s)) return T(0);
  return static_cast<T>(static_cast<U>(static_cast<U>(x) << s));
}

// Signed values shift arithmetically (the sign bit is copied in), as C++20 defines it.
template <typename T>
T shift_right(T x, T s) {
  if (shift_out_of_range(s)) {
    if constexpr (std::is_signed_v<T>) return x < 0 ? T(-1) : T(0);
    else return T(0);
  }
  return static_cast<T>(x >> s);
}

template <typename T>
void apply(Bits op, const Tensor& a, const Tensor& b, const Shape& out_shape, Tensor& out) {
  auto run = [&](auto f) { map_binary(a.data<T>(), a.shape(), b.data<T>(), b.shape(), out.mutable_data<T>(), out_shape, f); };
  switch (op) {
    case Bits::ShiftLeft: return run([](T x, T s) { return shift_left(x, s); });
    case Bits::ShiftRight: return run([](T x, T s) { return shift_right(x, s); });
    case Bits::And: return run([](T x, T y) { return static_cast<T>(x & y); });
    case Bits::Or: return run([](T x, T y) { return static_cast<T>(x | y); });
    case Bits::Xor: return run([](T x, T y) { return static_cast<T>(x ^ y); });
  }
}

class BitsKernel : public Kernel {
 public:
  explicit BitsKernel(Bits op) : op_(op) {}
  Status compute(KernelContext& ctx) const override {
    const Tensor& a = *ctx.input(0);
    const Tensor& b = *ctx.input(1);
    const DType t = a.dtype();
    if (!is_integer(t)) return make_error("unsupported input type " + std::string(dtype_name(t)));
    if (b.dtype() != t)
      return make_error("inputs have different types (" + std::string(dtype_name(t)) + " and " +
                        std::string(dtype_name(b.dtype())) + ")");
    const Shape shapes[] = {a.shape(), b.shape()};
    REDUCE_ASSIGN(Shape shape, broadcast_shapes(shapes));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(t, shape));
    visit_dtype(t, [&]<typename T>() {
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) apply<T>(op_, a, b, shape, out);
    });
    ctx.set_output(0, std::move(out));
    return {};
  }

 private:
  Bits op_;
};

class BitwiseNotKernel : public Kernel {
 public:
  Status compute(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    if (!is_integer(x.dtype())) return make_error("unsupported input type " + std::string(dtype_name(x.dtype())));
    REDUCE_ASSIGN(Tensor out, Tensor::allocate(x.dtype(), x.shape()));
    visit_dtype(x.dtype(), [&]<typename T>() {
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
        map_unary(x.data<T>(), out.mutable_data<T>(), [](T v) { return static_cast<T>(~v); });
    });
    ctx.set_output(0, std::move(out));
    return {};
  }
};

}  // namespace

Expected<KernelPtr> make_bit_shift(const Node& n, int64_t) {
  const std::string direction = attr_string(n, "direction", "");
  if (direction == "LEFT") return KernelPtr(new BitsKernel(Bits::ShiftLeft));
  if (direction == "RIGHT") return KernelPtr(new BitsKernel(Bits::ShiftRight));
  return make_error("direction must be \"LEFT\" or \"RIGHT\", got \"" + direction + "\"");
}
Expected<KernelPtr> make_bitwise_and(const Node&, int64_t) { return KernelPtr(new BitsKernel(Bits::And)); }
Expected<KernelPtr> make_bitwise_or(const Node&, int64_t) { return KernelPtr(new BitsKernel(Bits::Or)); }
Expected<KernelPtr> make_bitwise_xor(const Node&, int64_t) { return KernelPtr(new BitsKernel(Bits::Xor)); }
Expected<KernelPtr> make_bitwise_not(const Node&, int64_t) { return KernelPtr(new BitwiseNotKernel()); }

}  // namespace reduce::ref
