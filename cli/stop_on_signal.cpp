// Signals to a stop request, without a signal handler or a global flag.
#include "stop_on_signal.h"

#include <pthread.h>

#include <iostream>

#include "command.h"

namespace reduce::cli {

sigset_t stop_signals() {
  sigset_t signals;
  sigemptyset(&signals);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) sigaddset(&signals, s);
  return signals;
}

StopOnSignal::StopOnSignal() {
  signals_ = stop_signals();
  pthread_sigmask(SIG_BLOCK, &signals_, &previous_mask_);
  // A signal already pending (it arrived while the signals were blocked, e.g. by the parent
  // process) is a stop request before anything is loaded.
  const timespec now{0, 0};
  if (sigtimedwait(&signals_, nullptr, &now) > 0) source_.request_stop();
  waiter_ = std::thread([this] { wait_for_signals(); });
}

void StopOnSignal::wait_for_signals() {
  while (true) {
    int signal = 0;
    if (sigwait(&signals_, &signal) != 0) continue;
    if (done_.load()) return;
    source_.request_stop();
  }
}

StopOnSignal::~StopOnSignal() {
  done_.store(true);
  pthread_kill(waiter_.native_handle(), SIGTERM);  // wakes sigwait; the thread sees done_
  waiter_.join();
  pthread_sigmask(SIG_SETMASK, &previous_mask_, nullptr);
}

int interrupted(const char* detail) {
  std::cerr << "reduce: interrupted" << detail << "\n";
  return kExitInterrupted;
}

void unblock_stop_signals() {
  const sigset_t signals = stop_signals();
  pthread_sigmask(SIG_UNBLOCK, &signals, nullptr);
}

}  // namespace reduce::cli
