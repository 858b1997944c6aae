// CheckParallelism: oneTBB's process-wide thread cap, raised for the holder's lifetime.
#include "reducer/parallelism.h"

#include <tbb/global_control.h>

namespace reduce {

struct CheckParallelism::Control {
  tbb::global_control cap;
};

CheckParallelism::CheckParallelism(int max_threads)
    : control_(new Control{tbb::global_control(tbb::global_control::max_allowed_parallelism,
                                               static_cast<size_t>(max_threads > 1 ? max_threads : 1))}) {}

CheckParallelism::~CheckParallelism() = default;

}  // namespace reduce
