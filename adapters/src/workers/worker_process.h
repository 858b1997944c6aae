// WorkerProcess: one long-lived helper process talking over a socket, with a deadline and a cancel flag
// on every exchange. How it died, timed out or was cancelled is said here once, for every kind of worker.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "external/temp_folder.h"

namespace reduce {

class WorkerProcess {
 public:
  struct Options {
    std::vector<std::string> argv;  // argv[0] is searched in PATH when it has no '/'
    std::vector<std::string> env;   // NAME=VALUE entries added to this process's environment
    // Its own process group with default signals (a Ctrl-C at the terminal reaches only reduce,
    // which stops the worker itself); the whole group is killed with it.
    bool own_group = false;
    std::string who;  // how a death is told: "<who> killed by SIGSEGV: <last lines of its log>"
    // A timeout is told "<timeout_subject> timed out after N s<timeout_note>".
    std::string timeout_subject, timeout_note;
    // Sent (once) when the cancel flag is set while an answer is awaited; the worker then has
    // `grace_seconds` to answer before it is stopped. Empty: a cancel stops it at once.
    std::string cancel_message;
    // A worker that is stopped first sees its socket shut down and has this long to exit before SIGKILL.
    double grace_seconds = 0;
  };

  // Starts the worker with descriptor 3 one end of a socket pair and its output appended to
  // folder/log. The folder is the worker's and goes with it.
  static Expected<std::unique_ptr<WorkerProcess>> start(TempFolder folder, Options options);
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Starts an exchange: what the worker prints from now on explains it, and every send and receive
  // until the next begin() must be done within `timeout_seconds` of now (0: no limit).
  void begin(double timeout_seconds);
  // Each returns an error when the worker died (ErrorKind::Crash), passed the deadline
  // (ErrorKind::Timeout, the worker stopped) or was cancelled ("cancelled", the worker stopped);
  // after any of these alive() is false. A send observes the cancel flag only when there is no
  // cancel message (a message must not cut a request in two).
  Status send(std::string_view data, const std::atomic<bool>* cancel);
  Status receive(char* data, size_t size, const std::atomic<bool>* cancel);
  Expected<std::string> receive_line(const std::atomic<bool>* cancel);  // without its '\n'

  // Ends the worker (its socket shut down, then SIGKILL after the grace period) and returns `why`:
  // for a caller that will not use it again (it answered nonsense).
  Error stop(Error why);

  bool alive() const { return pid_ > 0; }
  const TempFolder& folder() const { return folder_; }

 private:
  WorkerProcess(TempFolder folder, Options options) : folder_(std::move(folder)), options_(std::move(options)) {}
  // Waits until the socket is ready for `events`; an error when the wait ends the worker.
  Status wait(short events, const std::atomic<bool>* cancel, bool may_send_cancel);
  Error died();
  void kill_now();

  TempFolder folder_;
  Options options_;
  int fd_ = -1;
  pid_t pid_ = 0;
  std::string pending_;        // received past the last line given out
  double started_ = 0;         // steady-clock seconds at begin()
  double timeout_ = 0;
  double cancel_deadline_ = 0;  // when a cancel message was sent: the end of its grace period
};

}  // namespace reduce
