// One-line tensor summaries for the CLI.
#include "tensor_summary.h"

#include <algorithm>
#include <cmath>

namespace reduce::cli {

TensorStats tensor_stats(const Tensor& t) {
  TensorStats s;
  double sum = 0;
  for (uint64_t i = 0; i < t.elements(); ++i) {
    const double v = t.element_as_double(i);
    if (std::isnan(v)) {
      ++s.nan;
    } else if (std::isinf(v)) {
      ++s.inf;
    } else {
      s.min = s.finite ? std::min(s.min, v) : v;
      s.max = s.finite ? std::max(s.max, v) : v;
      sum += v;
      ++s.finite;
    }
  }
  if (s.finite) s.mean = sum / static_cast<double>(s.finite);
  return s;
}

void print_tensor(const std::string& name, const Tensor& t, std::ostream& out) {
  out << name << ": " << dtype_name(t.dtype()) << shape_to_string(t.shape()) << "  elements=" << t.elements();
  const TensorStats s = tensor_stats(t);
  if (s.finite) out << "  min=" << s.min << " max=" << s.max << " mean=" << s.mean;
  if (s.nan) out << "  nan=" << s.nan;
  if (s.inf) out << "  inf=" << s.inf;
  out << "\n";
}

}  // namespace reduce::cli
