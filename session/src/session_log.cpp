// Console output of a session.
#include "session_log.h"

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

void SessionLog::progress(const ReduceProgress& p) {
  if (!console_.err) return;
  std::lock_guard<std::mutex> lock(mutex_);
  char buf[512];
  if (console_.tty) {
    std::snprintf(buf, sizeof buf, "\r\033[K%zu nodes | %zu checks (%zu cached) | %.1f/s | %.0f s | %s", p.size,
                  p.checks, p.cache_hits, p.rate, p.elapsed, p.pass.c_str());
  } else {
    if (p.elapsed - last_progress_ < 5) return;
    last_progress_ = p.elapsed;
    std::snprintf(buf, sizeof buf, "progress: %zu nodes, %zu checks (%zu cached), %.1f checks/s, %.0f s, %s\n", p.size,
                  p.checks, p.cache_hits, p.rate, p.elapsed, p.pass.c_str());
  }
  *console_.err << buf << std::flush;
}

void SessionLog::finish() {
  if (!console_.err || !console_.tty) return;
  std::lock_guard<std::mutex> lock(mutex_);
  *console_.err << "\r\033[K" << std::flush;
}

}  // namespace reduce
