// How far long work has got, for progress lines: the share done and the time left at the rate so far.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>

namespace reduce {

// "40%, about 12 s left" (or "about 3 min left"): `done` of `total` after `elapsed_seconds`. Only the
// share while nothing is done or less than a second has passed (no rate to go by), and "100%" at the end.
std::string share_and_time_left(size_t done, size_t total, double elapsed_seconds);

// A progress line for a count of runs: `print("WHAT: DONE of TOTAL (40%, about 12 s left)")` at most
// every `every_seconds` from the first call, and at the end (done == total) when a line came before:
// work that ends within the first period prints nothing. Not thread-safe:
// callers serialize their calls (ErrorOriginOptions::on_progress is called one at a time).
class ProgressLine {
 public:
  ProgressLine(std::string what, std::function<void(const std::string&)> print, double every_seconds = 5);
  void operator()(size_t done, size_t total);

 private:
  std::string what_;
  std::function<void(const std::string&)> print_;
  double every_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  double last_ = 0;
  bool printed_ = false;
};

}  // namespace reduce
