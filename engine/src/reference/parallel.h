// Parallel loops for kernels. Each index is computed by exactly one chunk and chunks never combine
// partial sums, so results are bit-identical whatever the thread count.
#pragma once

#include <cstddef>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

namespace reduce::ref {

// Calls fn(begin, end) over [0, n) in chunks of at most `grain` indices, possibly in parallel.
// fn must write only the outputs of its own indices.
template <typename Fn>
void parallel_for(size_t n, size_t grain, Fn&& fn) {
  if (n == 0) return;
  if (grain == 0) grain = 1;
  if (n <= grain) {
    fn(size_t{0}, n);
    return;
  }
  tbb::parallel_for(
      tbb::blocked_range<size_t>(0, n, grain),
      [&](const tbb::blocked_range<size_t>& r) { fn(r.begin(), r.end()); }, tbb::simple_partitioner());
}

}  // namespace reduce::ref
