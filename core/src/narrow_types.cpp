// Values, rounding and ONNX packing of the narrow element types (docs/core.md, "Narrow element types").
#include "core/narrow_types.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace reduce {

namespace {

// A small binary float: `bits` wide (8 or 4) with a sign bit, `mbits` mantissa bits and exponent bias
// `bias`. The FNUZ types give up negative zero for a single NaN (0x80) and have no infinity; E4M3FN
// has no infinity and S.1111.111 as NaN; E5M2 is IEEE-like; E2M1 has neither NaN nor infinity.
struct MiniFloat {
  int bits, mbits, bias;
  double max;  // the largest finite value
  enum class Specials { Ieee, FiniteNanAllOnes, Fnuz, None } specials;
};

MiniFloat minifloat(DType t) {
  switch (t) {
    case DType::Float8E4M3FN: return {8, 3, 7, 448.0, MiniFloat::Specials::FiniteNanAllOnes};
    case DType::Float8E4M3FNUZ: return {8, 3, 8, 240.0, MiniFloat::Specials::Fnuz};
    case DType::Float8E5M2: return {8, 2, 15, 57344.0, MiniFloat::Specials::Ieee};
    case DType::Float8E5M2FNUZ: return {8, 2, 16, 57344.0, MiniFloat::Specials::Fnuz};
    default: return {4, 1, 1, 6.0, MiniFloat::Specials::None};  // Float4E2M1
  }
}

double decode_minifloat(const MiniFloat& f, uint8_t b) {
  const uint8_t sign_bit = static_cast<uint8_t>(1u << (f.bits - 1));
  const int ebits = f.bits - 1 - f.mbits;
  const unsigned exp = (b & (sign_bit - 1)) >> f.mbits;
  const unsigned mant = b & ((1u << f.mbits) - 1);
  const bool neg = (b & sign_bit) != 0;
  const unsigned exp_all_ones = (1u << ebits) - 1;
  switch (f.specials) {
    case MiniFloat::Specials::Fnuz:
      if (b == 0x80) return std::numeric_limits<double>::quiet_NaN();
      break;
    case MiniFloat::Specials::FiniteNanAllOnes:
      if (exp == exp_all_ones && mant == (1u << f.mbits) - 1) return std::numeric_limits<double>::quiet_NaN();
      break;
    case MiniFloat::Specials::Ieee:
      if (exp == exp_all_ones)
        return mant ? std::numeric_limits<double>::quiet_NaN()
                    : (neg ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity());
      break;
    case MiniFloat::Specials::None: break;
  }
  const double magnitude = exp == 0 ? std::ldexp(static_cast<double>(mant), 1 - f.bias - f.mbits)
                                    : std::ldexp(static_cast<double>(mant + (1u << f.mbits)), static_cast<int>(exp) - f.bias - f.mbits);
  return neg ? -magnitude : magnitude;
}

// The bits of a finite, exactly representable magnitude `r` (0 < r <= max).
uint8_t encode_magnitude(const MiniFloat& f, double r) {
  const int emin = 1 - f.bias;
  int e = 0;
  std::frexp(r, &e);
  const int exponent = e - 1;  // r = 1.m * 2^exponent
  if (exponent < emin) return static_cast<uint8_t>(std::ldexp(r, f.mbits - emin));  // subnormal
  const auto mant = static_cast<unsigned>(std::ldexp(r, f.mbits - exponent)) - (1u << f.mbits);
  return static_cast<uint8_t>((static_cast<unsigned>(exponent + f.bias) << f.mbits) | mant);
}

uint8_t encode_minifloat(const MiniFloat& f, double v, bool saturate) {
  const uint8_t sign = std::signbit(v) ? static_cast<uint8_t>(1u << (f.bits - 1)) : 0;
  const uint8_t max_code = encode_magnitude(f, f.max);
  auto nan_code = [&]() -> uint8_t {
    switch (f.specials) {
      case MiniFloat::Specials::Fnuz: return 0x80;
      case MiniFloat::Specials::FiniteNanAllOnes: return sign | 0x7f;
      case MiniFloat::Specials::Ieee: return sign | 0x7e;
      case MiniFloat::Specials::None: return 0x8;  // no NaN: ONNX writes negative zero
    }
    return 0;
  };
  auto overflow = [&]() -> uint8_t {
    if (saturate || f.specials == MiniFloat::Specials::None) return sign | max_code;
    if (f.specials == MiniFloat::Specials::Ieee) return sign | 0x7c;
    return nan_code();
  };
  if (std::isnan(v)) return nan_code();
  if (std::isinf(v)) return overflow();
  const double a = std::fabs(v);
  // Round to a multiple of the quantum at a's exponent (the subnormal quantum below the normal range):
  // dividing by a power of two is exact, so rint is the one rounding, half to even.
  int e = 0;
  std::frexp(a, &e);
  const int exponent = std::max(e - 1, 1 - f.bias);
  const double r = std::ldexp(std::rint(std::ldexp(a, f.mbits - exponent)), exponent - f.mbits);
  if (r > f.max) return overflow();
  if (r == 0) return f.specials == MiniFloat::Specials::Fnuz ? 0 : sign;
  return sign | encode_magnitude(f, r);
}

uint8_t encode_e8m0(double v, bool saturate, E8M0Rounding rounding) {
  // Powers of two 2^-127 .. 2^127 (0x00 .. 0xFE) and NaN (0xFF); no sign, no zero.
  if (std::isnan(v)) return 0xff;
  if (std::isinf(v)) return saturate ? 0xfe : 0xff;
  const double a = std::fabs(v);
  if (a == 0) return 0x00;
  int e = 0;
  const double m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  int exponent = e - 1;
  const double fraction = 2 * m - 1;  // a = (1 + fraction) * 2^exponent
  if ((rounding == E8M0Rounding::Up && fraction > 0) || (rounding == E8M0Rounding::Nearest && fraction >= 0.5)) ++exponent;
  const int code = exponent + 127;
  if (code < 0) return 0x00;
  if (code > 0xfe) return saturate ? 0xfe : 0xff;
  return static_cast<uint8_t>(code);
}

}  // namespace

double narrow_to_double(DType t, uint8_t stored) {
  switch (t) {
    case DType::Int4:
    case DType::Int2: return static_cast<int8_t>(stored);
    case DType::UInt4:
    case DType::UInt2: return stored;
    case DType::Float8E8M0: return stored == 0xff ? std::numeric_limits<double>::quiet_NaN() : std::ldexp(1.0, stored - 127);
    case DType::Float8E4M3FN:
    case DType::Float8E4M3FNUZ:
    case DType::Float8E5M2:
    case DType::Float8E5M2FNUZ:
    case DType::Float4E2M1: return decode_minifloat(minifloat(t), stored);
    default: return std::numeric_limits<double>::quiet_NaN();
  }
}

uint8_t narrow_float_from_double(DType t, double v, bool saturate, E8M0Rounding rounding) {
  if (t == DType::Float8E8M0) return encode_e8m0(v, saturate, rounding);
  return encode_minifloat(minifloat(t), v, saturate);
}

uint8_t narrow_int_from_int64(DType t, int64_t v) {
  const unsigned bits = static_cast<unsigned>(dtype_bits(t));
  const auto low = static_cast<unsigned>(static_cast<uint64_t>(v) & ((1u << bits) - 1));
  const bool is_signed = t == DType::Int4 || t == DType::Int2;
  if (is_signed && (low >> (bits - 1)) != 0) return static_cast<uint8_t>(static_cast<int8_t>(static_cast<int>(low) - (1 << bits)));
  return static_cast<uint8_t>(low);
}

int64_t narrow_int_min(DType t) { return t == DType::Int4 ? -8 : t == DType::Int2 ? -2 : 0; }
int64_t narrow_int_max(DType t) {
  switch (t) {
    case DType::Int4: return 7;
    case DType::UInt4: return 15;
    case DType::Int2: return 1;
    default: return 3;  // UInt2
  }
}

void pack_elements(DType t, std::span<const std::byte> unpacked, std::span<std::byte> packed) {
  const size_t bits = dtype_bits(t), per_byte = 8 / bits;
  const unsigned mask = (1u << bits) - 1;
  std::fill(packed.begin(), packed.end(), std::byte{0});
  for (size_t i = 0; i < unpacked.size(); ++i) {
    const unsigned v = std::to_integer<unsigned>(unpacked[i]) & mask;
    packed[i / per_byte] |= static_cast<std::byte>(v << (i % per_byte * bits));
  }
}

void unpack_elements(DType t, std::span<const std::byte> packed, std::span<std::byte> unpacked) {
  const size_t bits = dtype_bits(t), per_byte = 8 / bits;
  const unsigned mask = (1u << bits) - 1;
  const bool is_signed = t == DType::Int4 || t == DType::Int2;
  for (size_t i = 0; i < unpacked.size(); ++i) {
    const unsigned v = (std::to_integer<unsigned>(packed[i / per_byte]) >> (i % per_byte * bits)) & mask;
    unpacked[i] = static_cast<std::byte>(is_signed ? narrow_int_from_int64(t, v) : v);
  }
}

Expected<Tensor> tensor_from_packed(DType t, Shape shape, std::span<const std::byte> packed) {
  REDUCE_ASSIGN(uint64_t n, element_count(shape));
  if (packed.size() != dtype_packed_bytes(t, n))
    return make_error("tensor of shape " + shape_to_string(shape) + " and type " + std::string(dtype_name(t)) +
                      " needs " + std::to_string(dtype_packed_bytes(t, n)) + " packed bytes but " +
                      std::to_string(packed.size()) + " were given");
  REDUCE_ASSIGN(Tensor out, Tensor::allocate_uninitialized(t, std::move(shape)));
  unpack_elements(t, packed, out.mutable_bytes());
  return out;
}

std::string packed_bytes(const Tensor& tensor) {
  std::string out(dtype_packed_bytes(tensor.dtype(), tensor.elements()), '\0');
  pack_elements(tensor.dtype(), tensor.bytes(), std::as_writable_bytes(std::span<char>(out.data(), out.size())));
  return out;
}

Expected<Tensor> retype_as_narrow(const Tensor& t, DType to) {
  if (dtype_size(t.dtype()) != 1 || t.dtype() == DType::Bool)
    return make_error("a " + std::string(dtype_name(t.dtype())) + " tensor cannot hold " + std::string(dtype_name(to)) + " values");
  if (dtype_is_small_int(to)) {
    const bool is_signed = narrow_int_min(to) < 0;
    const DType holder = is_signed ? DType::Int8 : DType::UInt8;
    if (t.dtype() != holder)
      return make_error(std::string(dtype_name(to)) + " values are read from " + std::string(dtype_name(holder)) +
                        " data, not " + std::string(dtype_name(t.dtype())));
    for (std::byte b : t.bytes()) {
      const int64_t v = is_signed ? static_cast<int8_t>(b) : std::to_integer<int64_t>(b);
      if (v < narrow_int_min(to) || v > narrow_int_max(to))
        return make_error("value " + std::to_string(v) + " of a " + std::string(dtype_name(t.dtype())) +
                          " tensor is not a " + std::string(dtype_name(to)));
    }
  } else if (to == DType::Float4E2M1) {
    for (std::byte b : t.bytes())
      if (std::to_integer<unsigned>(b) > 0xf) return make_error("byte " + std::to_string(std::to_integer<unsigned>(b)) + " is not a float4e2m1");
  }
  return Tensor::copy_of(to, t.shape(), t.bytes());
}

}  // namespace reduce
