// Element-wise and statistical comparison of an engine output against the reference.
#include "oracle/comparison.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <span>
#include <vector>

#include "core/half.h"

namespace reduce {

Expected<ErrorStat> parse_error_stat(std::string_view name) {
  if (name == "elemwise") return ErrorStat::Elemwise;
  if (name == "max") return ErrorStat::Max;
  if (name == "mean") return ErrorStat::Mean;
  if (name == "median") return ErrorStat::Median;
  if (name == "quantile") return ErrorStat::Quantile;
  return make_error("unknown error statistic '" + std::string(name) + "' (elemwise, max, mean, median, quantile)");
}

const char* to_string(ErrorStat stat) {
  switch (stat) {
    case ErrorStat::Elemwise: return "elemwise";
    case ErrorStat::Max: return "max";
    case ErrorStat::Mean: return "mean";
    case ErrorStat::Median: return "median";
    case ErrorStat::Quantile: return "quantile";
  }
  return "?";
}

Tolerance default_tolerance(Precision precision) {
  Tolerance t;
  if (precision == Precision::FP16) t.atol = t.rtol = 1e-2;
  if (precision == Precision::BF16) t.atol = t.rtol = 5e-2;
  t.by_element_type = true;
  return t;
}

Tolerance Tolerance::for_element_type(DType t) const {
  if (!by_element_type) return *this;
  Tolerance out = *this;
  const Precision p = t == DType::Float16 ? Precision::FP16 : t == DType::BFloat16 ? Precision::BF16 : Precision::FP32;
  if (p == Precision::FP32) return out;
  const Tolerance typed = default_tolerance(p);
  out.atol = std::max(atol, typed.atol);
  out.rtol = std::max(rtol, typed.rtol);
  return out;
}

std::vector<std::pair<DType, Tolerance>> element_type_tolerances(const Tolerance& t) {
  std::vector<std::pair<DType, Tolerance>> out;
  for (DType d : {DType::Float16, DType::BFloat16}) {
    const Tolerance typed = t.for_element_type(d);
    if (typed.atol != t.atol || typed.rtol != t.rtol) out.emplace_back(d, typed);
  }
  return out;
}

std::string describe_element_type_tolerances(const Tolerance& t) {
  std::string out;
  for (const auto& [d, typed] : element_type_tolerances(t)) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "atol %g rtol %g", typed.atol, typed.rtol);
    out += (out.empty() ? "; " : ", ") + std::string(dtype_name(d)) + " outputs " + buf;
  }
  return out;
}

namespace {

// Reads element i of a tensor as a double, straight from its storage (no converted copy: a
// comparison of an 8 MB output allocates nothing of its size unless a median or quantile decides).
template <typename T, double (*Convert)(T)>
struct Reader {
  std::span<const T> data;
  double operator()(size_t i) const { return Convert(data[i]); }
};
double from_float(float v) { return v; }
double from_double(double v) { return v; }
double from_half(uint16_t v) { return half_to_float(v); }
double from_bfloat16(uint16_t v) { return bfloat16_to_float(v); }
struct GenericReader {
  const Tensor* t;
  double operator()(size_t i) const { return t->element_as_double(i); }
};

// Calls scan(read_actual, read_expected) with readers for the dtype both tensors share.
template <typename Scan>
void with_readers(const Tensor& a, const Tensor& b, Scan&& scan) {
  switch (a.dtype()) {
    case DType::Float: return scan(Reader<float, from_float>{a.data<float>()}, Reader<float, from_float>{b.data<float>()});
    case DType::Double:
      return scan(Reader<double, from_double>{a.data<double>()}, Reader<double, from_double>{b.data<double>()});
    case DType::Float16:
      return scan(Reader<uint16_t, from_half>{a.data<uint16_t>()}, Reader<uint16_t, from_half>{b.data<uint16_t>()});
    case DType::BFloat16:
      return scan(Reader<uint16_t, from_bfloat16>{a.data<uint16_t>()},
                  Reader<uint16_t, from_bfloat16>{b.data<uint16_t>()});
    default: return scan(GenericReader{&a}, GenericReader{&b});
  }
}

// The q-quantile (nearest rank) of `values`, reordering them in place.
double quantile_in_place(std::vector<double>& values, double q) {
  if (values.empty()) return 0;
  const size_t k = std::min(values.size() - 1, static_cast<size_t>(q * (values.size() - 1) + 0.5));
  std::nth_element(values.begin(), values.begin() + k, values.end());
  return values[k];
}

}  // namespace

OutputComparison compare_tensors(std::string_view name, const Tensor& actual, const Tensor& expected,
                                 const Tolerance& tolerance) {
  const Tolerance tol = tolerance.for_element_type(expected.dtype());
  OutputComparison c;
  c.name = std::string(name);
  if (actual.dtype() != expected.dtype() || actual.shape() != expected.shape()) {
    c.passed = false;
    c.ratio = std::numeric_limits<double>::infinity();
    c.dtype_differs = actual.dtype() != expected.dtype();
    c.shape_differs = actual.shape() != expected.shape();
    c.structural_problem = std::string(dtype_name(actual.dtype())) + shape_to_string(actual.shape()) + " on the engine, " +
                           std::string(dtype_name(expected.dtype())) + shape_to_string(expected.shape()) + " on the reference";
    return c;
  }
  c.elements = actual.elements();
  // Only a median or quantile needs every error at once; the other statistics are running sums
  // and maxima, so the comparison of a large output holds nothing of its size.
  const bool rank_stat = tol.stat == ErrorStat::Median || tol.stat == ErrorStat::Quantile;
  std::vector<double> abs_err, rel_err;
  if (rank_stat) {
    abs_err.reserve(c.elements);
    rel_err.reserve(c.elements);
  }
  bool first_set = false;
  auto mark_bad = [&](uint64_t i) {
    if (!first_set) c.first_bad = i, first_set = true;
  };
  double sum_abs = 0, sum_rel = 0;
  uint64_t finite_pairs = 0;
  with_readers(actual, expected, [&](auto read_a, auto read_b) {
    for (size_t i = 0; i < c.elements; ++i) {
      const double a = read_a(i), b = read_b(i);
      const bool fa = std::isfinite(a), fb = std::isfinite(b);
      if (std::isnan(a)) ++c.nan;
      else if (std::isinf(a)) ++c.inf;
      if (!fa || !fb) {
        if (fb) ++c.nonfinite_new, mark_bad(i);
        else if (fa || std::isnan(a) != std::isnan(b) || (!std::isnan(a) && a != b)) ++c.nonfinite_differs, mark_bad(i);
        continue;
      }
      const double d = std::fabs(a - b);
      const double r = b != 0 ? d / std::fabs(b) : (d == 0 ? 0 : std::numeric_limits<double>::infinity());
      if (rank_stat) abs_err.push_back(d), rel_err.push_back(r);
      ++finite_pairs;
      sum_abs += d;
      sum_rel += r;
      c.max_abs = std::max(c.max_abs, d);
      c.max_rel = std::max(c.max_rel, r);
      const double allowed = tol.atol + tol.rtol * std::fabs(b);
      if (d > allowed) ++c.mismatched, mark_bad(i);
      if (tol.stat == ErrorStat::Elemwise) c.ratio = std::max(c.ratio, allowed > 0 ? d / allowed : (d > 0 ? INFINITY : 0));
    }
  });
  if (finite_pairs > 0) c.mean_abs = sum_abs / static_cast<double>(finite_pairs);
  bool values_fail = c.mismatched > 0;
  if (tol.stat != ErrorStat::Elemwise) {
    double sa = 0, sr = 0;  // the statistic of the absolute and relative errors (0 without finite pairs)
    if (tol.stat == ErrorStat::Max) sa = c.max_abs, sr = c.max_rel;
    else if (tol.stat == ErrorStat::Mean && finite_pairs > 0) sa = c.mean_abs, sr = sum_rel / static_cast<double>(finite_pairs);
    else if (rank_stat) {
      const double q = tol.stat == ErrorStat::Median ? 0.5 : tol.quantile;
      sa = quantile_in_place(abs_err, q);
      sr = quantile_in_place(rel_err, q);
    }
    values_fail = sa > tol.atol && sr > tol.rtol;
    c.ratio = std::min(tol.atol > 0 ? sa / tol.atol : INFINITY, tol.rtol > 0 ? sr / tol.rtol : INFINITY);
  }
  c.passed = !values_fail && c.nonfinite_new == 0 && c.nonfinite_differs == 0;
  if (c.nonfinite_differs > 0) c.ratio = std::numeric_limits<double>::infinity();
  return c;
}

}  // namespace reduce
