// Progress lines' share done and time left (progress_estimate.h).
#include "core/progress_estimate.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace reduce {

std::string share_and_time_left(size_t done, size_t total, double elapsed_seconds) {
  if (total == 0) return "100%";
  done = std::min(done, total);
  const int percent = static_cast<int>(100.0 * static_cast<double>(done) / static_cast<double>(total));
  std::string out = std::to_string(percent) + "%";
  if (done == 0 || done == total || !(elapsed_seconds >= 1)) return out;
  const double left = elapsed_seconds / static_cast<double>(done) * static_cast<double>(total - done);
  if (left < 120) return out + ", about " + std::to_string(static_cast<long>(std::ceil(left))) + " s left";
  return out + ", about " + std::to_string(static_cast<long>(std::ceil(left / 60))) + " min left";
}

ProgressLine::ProgressLine(std::string what, std::function<void(const std::string&)> print, double every_seconds)
    : what_(std::move(what)), print_(std::move(print)), every_(every_seconds) {}

void ProgressLine::operator()(size_t done, size_t total) {
  if (!print_) return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  // Work that ends within the first period says nothing; after a line, the end is said too.
  if (elapsed - last_ < every_ && !(done >= total && printed_)) return;
  last_ = elapsed;
  printed_ = true;
  print_(what_ + ": " + std::to_string(done) + " of " + std::to_string(total) + " (" +
         share_and_time_left(done, total, elapsed) + ")");
}

}  // namespace reduce
