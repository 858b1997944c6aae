// Console output of a session.
#include "session_log.h"

#include <algorithm>
#include <cstdio>

namespace reduce {

void SessionLog::line(const std::string& text) {
  if (!console_.err || quiet_.load()) return;
  std::string out = console_.tty ? "\r\033[K" : "";
  out += text;
  out += '\n';
  std::lock_guard<std::mutex> lock(mutex_);
  *console_.err << out << std::flush;
}

namespace {

// What is done and what is left: the share of the start's nodes removed, and the fewest seconds
// left: certifying 1-minimality checks each remaining node once more, at the rate so far.
std::string progress_share(const ReduceProgress& p) {
  char buf[128];
  const double removed = p.start_size ? 100.0 * static_cast<double>(p.start_size - std::min(p.size, p.start_size)) / p.start_size : 0;
  if (p.rate > 0)
    std::snprintf(buf, sizeof buf, "%.0f%% removed, at least %.0f s left", removed, static_cast<double>(p.size) / p.rate);
  else
    std::snprintf(buf, sizeof buf, "%.0f%% removed", removed);
  return buf;
}

}  // namespace

void SessionLog::progress(const ReduceProgress& p) {
  if (!console_.err) return;
  std::lock_guard<std::mutex> lock(mutex_);
  char buf[640];
  if (!console_.tty && p.elapsed - last_progress_ < 5) return;  // a log file gets a line every 5 s
  const std::string share = progress_share(p);
  if (console_.tty) {
    std::snprintf(buf, sizeof buf, "\r\033[K%zu nodes (%s) | %zu checks (%zu cached) | %.1f/s | %.0f s | %s", p.size,
                  share.c_str(), p.checks, p.cache_hits, p.rate, p.elapsed, p.pass.c_str());
  } else {
    last_progress_ = p.elapsed;
    std::snprintf(buf, sizeof buf, "progress: %zu nodes (%s), %zu checks (%zu cached), %.1f checks/s, %.0f s, %s\n", p.size,
                  share.c_str(), p.checks, p.cache_hits, p.rate, p.elapsed, p.pass.c_str());
  }
  *console_.err << buf << std::flush;
}

void SessionLog::finish() {
  if (!console_.err || !console_.tty) return;
  std::lock_guard<std::mutex> lock(mutex_);
  *console_.err << "\r\033[K" << std::flush;
}

}  // namespace reduce
