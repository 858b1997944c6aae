// One-line summaries of tensors for the CLI: type, shape and value statistics.
#pragma once

#include <ostream>
#include <string>

#include "core/tensor.h"

namespace reduce::cli {

// name: dtype[shape]  elements=N  min= max= mean=  nan= inf=   (NaN/Inf counted apart).
void print_tensor(const std::string& name, const Tensor& t, std::ostream& out);

}  // namespace reduce::cli
