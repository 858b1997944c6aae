// Element-wise and statistical comparison of an engine output against the reference.
#include "oracle/comparison.h"

#include <algorithm>
#include <cmath>
#include <limits>
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
  return t;
}

namespace {

// Values of a tensor as doubles (one pass; the comparison then runs on plain arrays).
std::vector<double> as_doubles(const Tensor& t) {
  std::vector<double> out(t.elements());
  switch (t.dtype()) {
    case DType::Float: {
      auto d = t.data<float>();
      for (size_t i = 0; i < out.size(); ++i) out[i] = d[i];
      break;
    }
    case DType::Double: {
      auto d = t.data<double>();
      std::copy(d.begin(), d.end(), out.begin());
      break;
    }
    case DType::Float16: {
      auto d = t.data<uint16_t>();
      for (size_t i = 0; i < out.size(); ++i) out[i] = half_to_float(d[i]);
      break;
    }
    case DType::BFloat16: {
      auto d = t.data<uint16_t>();
      for (size_t i = 0; i < out.size(); ++i) out[i] = bfloat16_to_float(d[i]);
      break;
    }
    default:
      for (size_t i = 0; i < out.size(); ++i) out[i] = t.element_as_double(i);
  }
  return out;
}

double statistic(std::vector<double> values, ErrorStat stat, double q) {
  if (values.empty()) return 0;
  switch (stat) {
    case ErrorStat::Max:
    case ErrorStat::Elemwise: return *std::max_element(values.begin(), values.end());
    case ErrorStat::Mean: {
      double s = 0;
      for (double v : values) s += v;
      return s / values.size();
    }
    case ErrorStat::Median: q = 0.5; [[fallthrough]];
    case ErrorStat::Quantile: {
      const size_t k = std::min(values.size() - 1, static_cast<size_t>(q * (values.size() - 1) + 0.5));
      std::nth_element(values.begin(), values.begin() + k, values.end());
      return values[k];
    }
  }
  return 0;
}

}  // namespace

OutputComparison compare_tensors(std::string_view name, const Tensor& actual, const Tensor& expected,
                                 const Tolerance& tol) {
  OutputComparison c;
  c.name = std::string(name);
  if (actual.dtype() != expected.dtype() || actual.shape() != expected.shape()) {
    c.passed = false;
    c.ratio = std::numeric_limits<double>::infinity();
    c.structural_problem = "engine gives " + std::string(dtype_name(actual.dtype())) + shape_to_string(actual.shape()) +
                           ", reference " + std::string(dtype_name(expected.dtype())) + shape_to_string(expected.shape());
    return c;
  }
  const std::vector<double> a = as_doubles(actual), b = as_doubles(expected);
  c.elements = a.size();
  std::vector<double> abs_err, rel_err;
  abs_err.reserve(a.size());
  rel_err.reserve(a.size());
  bool first_set = false;
  auto mark_bad = [&](uint64_t i) {
    if (!first_set) c.first_bad = i, first_set = true;
  };
  double sum_abs = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const bool fa = std::isfinite(a[i]), fb = std::isfinite(b[i]);
    if (std::isnan(a[i])) ++c.nan;
    else if (std::isinf(a[i])) ++c.inf;
    if (!fa || !fb) {
      if (fb) ++c.nonfinite_new, mark_bad(i);
      else if (fa || std::isnan(a[i]) != std::isnan(b[i]) || (!std::isnan(a[i]) && a[i] != b[i]))
        ++c.nonfinite_differs, mark_bad(i);
      continue;
    }
    const double d = std::fabs(a[i] - b[i]);
    const double r = b[i] != 0 ? d / std::fabs(b[i]) : (d == 0 ? 0 : std::numeric_limits<double>::infinity());
    abs_err.push_back(d);
    rel_err.push_back(r);
    sum_abs += d;
    c.max_abs = std::max(c.max_abs, d);
    c.max_rel = std::max(c.max_rel, r);
    const double allowed = tol.atol + tol.rtol * std::fabs(b[i]);
    if (d > allowed) ++c.mismatched, mark_bad(i);
    if (tol.stat == ErrorStat::Elemwise) c.ratio = std::max(c.ratio, allowed > 0 ? d / allowed : (d > 0 ? INFINITY : 0));
  }
  if (!abs_err.empty()) {
    c.mean_abs = sum_abs / abs_err.size();
    c.median_abs = statistic(abs_err, ErrorStat::Median, 0.5);
    c.quantile_abs = statistic(abs_err, ErrorStat::Quantile, tol.quantile);
  }
  bool values_fail = c.mismatched > 0;
  if (tol.stat != ErrorStat::Elemwise) {
    const double sa = statistic(abs_err, tol.stat, tol.quantile);
    const double sr = statistic(rel_err, tol.stat, tol.quantile);
    values_fail = sa > tol.atol && sr > tol.rtol;
    c.ratio = std::min(tol.atol > 0 ? sa / tol.atol : INFINITY, tol.rtol > 0 ? sr / tol.rtol : INFINITY);
  }
  c.passed = !values_fail && c.nonfinite_new == 0 && c.nonfinite_differs == 0;
  if (c.nonfinite_differs > 0) c.ratio = std::numeric_limits<double>::infinity();
  return c;
}

}  // namespace reduce
