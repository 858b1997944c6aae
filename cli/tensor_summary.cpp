// One-line tensor summaries for the CLI.
#include "tensor_summary.h"

#include <cmath>

namespace reduce::cli {

void print_tensor(const std::string& name, const Tensor& t, std::ostream& out) {
  out << name << ": " << dtype_name(t.dtype()) << shape_to_string(t.shape()) << "  elements=" << t.elements();
  uint64_t nan = 0, inf = 0, finite = 0;
  double lo = 0, hi = 0, sum = 0;
  for (uint64_t i = 0; i < t.elements(); ++i) {
    const double v = t.element_as_double(i);
    if (std::isnan(v)) {
      ++nan;
    } else if (std::isinf(v)) {
      ++inf;
    } else {
      lo = finite ? std::min(lo, v) : v;
      hi = finite ? std::max(hi, v) : v;
      sum += v;
      ++finite;
    }
  }
  if (finite) out << "  min=" << lo << " max=" << hi << " mean=" << sum / static_cast<double>(finite);
  if (nan) out << "  nan=" << nan;
  if (inf) out << "  inf=" << inf;
  out << "\n";
}

}  // namespace reduce::cli
