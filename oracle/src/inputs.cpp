// Seeded random inputs: a splitmix64 stream per input (seed mixed with the input's name), so the
// values are the same on every platform and standard library.
#include "oracle/inputs.h"

#include <cmath>

#include "core/half.h"
#include "core/narrow_types.h"
#include "core/splitmix64.h"
#include "core/tensor_set.h"
#include "input_roles.h"

namespace reduce {

namespace {

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

template <typename T>
void fill_integers(Tensor& t, SplitMix64& rng, ValueRange r) {
  const double lo = std::ceil(r.lo), hi = std::floor(r.hi);
  const uint64_t span = hi >= lo ? static_cast<uint64_t>(hi - lo) + 1 : 1;
  auto d = t.mutable_data<T>();
  for (auto& v : d) v = static_cast<T>(lo + static_cast<double>(rng.next() % span));
}

}  // namespace

Expected<std::vector<NamedTensor>> make_random_inputs(const Graph& graph, const RandomInputOptions& options,
                                                      std::vector<std::string>* notes) {
  std::vector<NamedTensor> out;
  for (const ValueInfo* vi : runtime_inputs(graph)) {
    if (!vi->type.is_tensor()) return make_error("input '" + vi->name + "' is not a tensor (" + vi->type.to_string() + ")");
    const DType dtype = static_cast<DType>(vi->type.elem_type);
    if (dtype == DType::String || dtype_size(dtype) == 0)
      return make_error("input '" + vi->name + "': cannot make random " + vi->type.to_string() + " values");
    // A declared type without a shape would become a scalar, which the model's nodes seldom take.
    if (!vi->type.has_shape)
      return make_error("input '" + vi->name + "' (" + vi->type.to_string() +
                        ") declares no shape, so random values for it would be a scalar: pass --inputs FILE, or "
                        "--input-shape " + vi->name + ":DIMS");
    Shape shape;
    bool defaulted = false;
    for (const auto& d : vi->type.dims) {
      defaulted |= !d.is_static();
      shape.push_back(d.is_static() ? d.value : 1);
    }
    if (defaulted && notes)
      notes->push_back("input '" + vi->name + "' " + vi->type.to_string() + ": dynamic dims taken as 1 (" +
                       shape_to_string(shape) + "); fix them with --input-shape");
    const bool is_float = dtype_is_float(dtype);
    ValueRange range = is_float ? ValueRange{-1, 1} : dtype == DType::Bool ? ValueRange{0, 1} : ValueRange{0, 9};
    const auto given = options.ranges.find(vi->name);
    if (given != options.ranges.end()) {
      range = given->second;
    } else if (!is_float && dtype != DType::Bool) {
      // An integer input some node reads as a shape or axes cannot be random; one read as indices is
      // random within the range the op defines.
      const InputRole role = input_role(graph, vi->name);
      if (!role.shape_reader.empty())
        return make_error("input '" + vi->name + "' (" + vi->type.to_string() + "): " + role.shape_reader +
                          ", which random values are not: pass --inputs FILE (or --input-range " + vi->name +
                          ":LO,HI when any value in it is valid)");
      if (role.index_range && role.index_range->hi < range.hi) {  // narrowed to it, never widened
        range = *role.index_range;
        if (notes)
          notes->push_back("input '" + vi->name + "': random values in [0, " + std::to_string(static_cast<int64_t>(range.hi)) +
                           "], since " + role.index_reader);
      }
    }
    if (range.hi < range.lo) return make_error("input '" + vi->name + "': empty value range");
    REDUCE_ASSIGN(Tensor t, Tensor::allocate(dtype, shape));
    SplitMix64 rng(options.seed * 0x9e3779b97f4a7c15ULL ^ fnv1a(vi->name));
    const double width = range.hi - range.lo;
    switch (dtype) {
      case DType::Float: for (auto& v : t.mutable_data<float>()) v = static_cast<float>(range.lo + width * rng.unit()); break;
      case DType::Double: for (auto& v : t.mutable_data<double>()) v = range.lo + width * rng.unit(); break;
      case DType::Float16:
        for (auto& v : t.mutable_data<uint16_t>()) v = float_to_half(static_cast<float>(range.lo + width * rng.unit()));
        break;
      case DType::BFloat16:
        for (auto& v : t.mutable_data<uint16_t>()) v = float_to_bfloat16(static_cast<float>(range.lo + width * rng.unit()));
        break;
      case DType::Bool: fill_integers<uint8_t>(t, rng, {std::max(range.lo, 0.0), std::min(range.hi, 1.0)}); break;
      case DType::Int8: fill_integers<int8_t>(t, rng, range); break;
      case DType::Int16: fill_integers<int16_t>(t, rng, range); break;
      case DType::Int32: fill_integers<int32_t>(t, rng, range); break;
      case DType::Int64: fill_integers<int64_t>(t, rng, range); break;
      case DType::UInt8: fill_integers<uint8_t>(t, rng, range); break;
      case DType::UInt16: fill_integers<uint16_t>(t, rng, range); break;
      case DType::UInt32: fill_integers<uint32_t>(t, rng, range); break;
      case DType::UInt64: fill_integers<uint64_t>(t, rng, range); break;
      default: {
        // The narrow types: float8/float4/E8M0 values of the range rounded to the type (saturating),
        // int4/uint4/int2/uint2 integers of the range clamped to the type's.
        if (dtype_is_small_float(dtype)) {
          for (auto& v : t.mutable_data<uint8_t>()) v = narrow_float_from_double(dtype, range.lo + width * rng.unit(), true);
        } else if (dtype_is_small_int(dtype)) {
          const double lo = std::max(std::ceil(range.lo), static_cast<double>(narrow_int_min(dtype)));
          const double hi = std::min(std::floor(range.hi), static_cast<double>(narrow_int_max(dtype)));
          if (hi < lo) return make_error("input '" + vi->name + "': the value range holds no " + std::string(dtype_name(dtype)));
          const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
          for (auto& v : t.mutable_data<uint8_t>())
            v = narrow_int_from_int64(dtype, static_cast<int64_t>(lo) + static_cast<int64_t>(rng.next() % span));
        } else {
          return make_error("input '" + vi->name + "': cannot make random " + vi->type.to_string() + " values");
        }
      }
    }
    out.push_back({vi->name, std::move(t)});
  }
  return out;
}

}  // namespace reduce
