// A session's log and progress line on the console: whole lines written at once (two threads log),
// a redrawn progress line on a terminal, one progress line every 5 s otherwise.
#pragma once

#include <atomic>
#include <mutex>
#include <string>

#include "reducer/reducer.h"
#include "session/session.h"

namespace reduce {

class SessionLog {
 public:
  explicit SessionLog(const SessionConsole& console) : console_(console) {}
  void line(const std::string& text);
  void progress(const ReduceProgress& p);
  // Clears the progress line (a terminal) before the caller prints its result.
  void finish();
  // The reduction is called off: its closing lines mean nothing.
  void silence() { quiet_.store(true); }

 private:
  SessionConsole console_;
  std::atomic<bool> quiet_{false};
  std::mutex mutex_;
  double last_progress_ = -10;
};

}  // namespace reduce
