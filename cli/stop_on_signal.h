// Ctrl-C (SIGINT), SIGTERM, SIGHUP (a closed terminal or SSH session) and SIGPIPE as a stop request
// that reductions observe: the signals are blocked in every thread and one thread waits for them
// (sigwait) and requests stop on a stop_source owned here. Construct it in `main` before any other
// thread starts (threads inherit the blocked mask). A write to a closed pipe (`reduce ... | head -1`)
// raises SIGPIPE in the writing thread only, where it stays blocked: the write fails and the
// command goes on to its end (a reduction still writes its whole bundle) instead of dying.
#pragma once

#include <signal.h>

#include <atomic>
#include <stop_token>
#include <thread>

namespace reduce::cli {

class StopOnSignal {
 public:
  StopOnSignal();
  ~StopOnSignal();  // ends the waiting thread and restores the signal mask
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;

  std::stop_token token() const { return source_.get_token(); }

 private:
  void wait_for_signals();

  std::stop_source source_;
  sigset_t signals_{};
  sigset_t previous_mask_{};
  std::atomic<bool> done_{false};
  std::thread waiter_;
};

// A stop request as the flag engine runs observe (Oracle::evaluate's cancel, RunOptions::cancel):
// set as soon as `stop` is requested (at once when it already is).
class CancelOnStop {
 public:
  explicit CancelOnStop(std::stop_token stop) : callback_(std::move(stop), Set{&flag_}) {}
  CancelOnStop(const CancelOnStop&) = delete;
  CancelOnStop& operator=(const CancelOnStop&) = delete;

  const std::atomic<bool>* flag() const { return &flag_; }
  bool requested() const { return flag_.load(); }

 private:
  struct Set {
    std::atomic<bool>* flag;
    void operator()() const { flag->store(true); }
  };
  std::atomic<bool> flag_{false};  // before callback_: the callback may run in its constructor
  std::stop_callback<Set> callback_;
};

// Prints the one line of a command stopped by a signal, "reduce: interrupted" + `detail`
// (e.g. "; nothing written"), and returns exit code 130.
int interrupted(const char* detail = "");

// The signals above, as a set.
sigset_t stop_signals();

// Lets those signals end the process again (a worker process inherits the blocked mask).
void unblock_stop_signals();

}  // namespace reduce::cli
