// One-line summaries of tensors for the CLI: type, shape and value statistics.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "core/tensor.h"

namespace reduce::cli {

// Over the finite elements (NaN and Inf counted apart); min, max and mean are 0 when none is finite.
struct TensorStats {
  uint64_t finite = 0, nan = 0, inf = 0;
  double min = 0, max = 0, mean = 0;
};
TensorStats tensor_stats(const Tensor& t);

// name: dtype[shape]  elements=N  min= max= mean=  nan= inf=   (NaN/Inf counted apart).
void print_tensor(const std::string& name, const Tensor& t, std::ostream& out);

}  // namespace reduce::cli
