// CheckParallelism: room for `-j` checks in flight beyond the number of cores. oneTBB caps the threads
// of the whole process at the core count; checks mostly wait (engines in other processes, devices),
// so a reduction's arena of `-j` threads needs a higher cap. The cap is process-wide: the executable's
// main (or a bench driver's) holds one for its lifetime, never a library object.
#pragma once

#include <memory>

namespace reduce {

class CheckParallelism {
 public:
  // Lets arenas have up to `max_threads` threads in all. Arenas still ask only for what they use:
  // the default arena the cores, a reduction's its `-j` (times the ranks of an MPI job).
  explicit CheckParallelism(int max_threads);
  ~CheckParallelism();
  CheckParallelism(const CheckParallelism&) = delete;
  CheckParallelism& operator=(const CheckParallelism&) = delete;

 private:
  struct Control;
  std::unique_ptr<Control> control_;
};

}  // namespace reduce
