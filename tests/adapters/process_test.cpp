// run_process: exit codes, signals, captured output, time limits that kill whole process groups, no fd leaks.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "adapters/process.h"
#include "test_support.h"

namespace reduce {
namespace {

ProcessResult sh(const std::string& script, ProcessOptions options = {}) {
  auto r = run_process({"sh", "-c", script}, options);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
  return r.ok() ? *r : ProcessResult{};
}

// A process is gone when /proc has no entry for it or only a zombie.
bool process_gone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  const size_t paren = line.rfind(')');
  return paren != std::string::npos && line.size() > paren + 2 && line[paren + 2] == 'Z';
}

TEST(Process, ReportsTheExitCode) {
  const ProcessResult r = sh("exit 3");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.signal, 0);
  EXPECT_FALSE(r.timed_out);
  EXPECT_FALSE(r.exited_ok());
}

TEST(Process, CapturesStdoutAndStderrInOrder) {
  const ProcessResult r = sh("echo one; echo two >&2; echo three");
  EXPECT_TRUE(r.exited_ok());
  EXPECT_EQ(r.output, "one\ntwo\nthree\n");
}

// Errors come last (a build log, then the failure): the first and the last half of the budget are
// kept, with a line saying how much of the middle was left out.
TEST(Process, KeepsTheFirstAndTheLastBytesOfALargeOutput) {
  ProcessOptions o;
  o.max_output_bytes = 10;
  const ProcessResult r = sh("printf head; head -c 1000000 /dev/zero | tr '\\0' x; printf tail; exit 0", o);
  EXPECT_TRUE(r.exited_ok());
  EXPECT_EQ(r.output, "headx\n[... 999998 bytes of output left out ...]\nxtail");
  EXPECT_TRUE(r.output_truncated);
  const ProcessResult small = sh("printf 0123456789", o);
  EXPECT_EQ(small.output, "0123456789");
  EXPECT_FALSE(small.output_truncated);
}

TEST(Process, ACrashIsReportedWithItsSignal) {
  const ProcessResult r = sh("kill -SEGV $$");
  EXPECT_EQ(r.signal, SIGSEGV);
  EXPECT_EQ(r.crash_signal(), SIGSEGV);
  EXPECT_EQ(r.describe({}), "killed by SIGSEGV");
}

TEST(Process, AShellReportingAKilledCommandCountsAsThatSignal) {
  const ProcessResult r = sh("sh -c 'kill -ABRT $$'; exit $?");
  EXPECT_EQ(r.exit_code, 128 + SIGABRT);
  EXPECT_EQ(r.crash_signal(), SIGABRT);
}

TEST(Process, TimeoutKillsTheScriptAndItsChildren) {
  testing::TempDir dir;
  const std::string pid_file = (dir / "child.pid").string();
  ProcessOptions o;
  o.timeout_seconds = 1;
  const ProcessResult r = sh("sleep 60 & echo $! > '" + pid_file + "'; sleep 60", o);
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(r.seconds, 30) << "waited for the script instead of killing it";
  EXPECT_EQ(r.describe(o), "timed out after 1 s");
  const pid_t child = std::stoi(testing::read_bytes(pid_file));
  for (int i = 0; i < 100 && !process_gone(child); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(process_gone(child)) << "background child " << child << " survived the timeout";
}

TEST(Process, CancellingKillsTheRunAtOnce) {
  std::atomic<bool> cancel{false};
  ProcessOptions o;
  o.cancel = &cancel;
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    cancel = true;
  });
  const ProcessResult r = sh("sleep 60 & sleep 60", o);
  canceller.join();
  EXPECT_TRUE(r.cancelled);
  EXPECT_FALSE(r.timed_out);
  EXPECT_LT(r.seconds, 30) << "waited for the script instead of killing it";
}

TEST(Process, AScriptIgnoringSigtermIsKilledAfterTheGracePeriod) {
  ProcessOptions o;
  o.timeout_seconds = 0.5;
  o.kill_grace_seconds = 0.5;
  const ProcessResult r = sh("trap '' TERM; while :; do sleep 0.05; done", o);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.signal, SIGKILL);
}

TEST(Process, BackgroundChildrenDoNotOutliveANormalExit) {
  testing::TempDir dir;
  const std::string pid_file = (dir / "child.pid").string();
  const ProcessResult r = sh("sleep 60 > /dev/null 2>&1 & echo $! > '" + pid_file + "'; exit 0");
  EXPECT_TRUE(r.exited_ok());
  EXPECT_LT(r.seconds, 30) << "waited for the background child";
  const pid_t child = std::stoi(testing::read_bytes(pid_file));
  for (int i = 0; i < 100 && !process_gone(child); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(process_gone(child));
}

TEST(Process, ExtraEnvironmentEntriesReachTheProgram) {
  ProcessOptions o;
  o.env = {"REDUCE_TEST_DEVICE=slot 3", "HOME=/nowhere"};
  EXPECT_EQ(sh("printf '%s|%s' \"$REDUCE_TEST_DEVICE\" \"$HOME\"", o).output, "slot 3|/nowhere");
}

TEST(Process, StartsInTheGivenWorkingDirectory) {
  testing::TempDir dir;
  ProcessOptions o;
  o.working_directory = dir.path();
  EXPECT_EQ(sh("pwd -P", o).output, std::filesystem::canonical(dir.path()).string() + "\n");
}

TEST(Process, InheritsNoOpenDescriptors) {
  const int leaked = ::open("/dev/null", O_RDONLY);  // deliberately without O_CLOEXEC
  ASSERT_GE(leaked, 3);
  const ProcessResult r = sh("test -e /proc/$$/fd/" + std::to_string(leaked) + " && echo leaked || echo clean");
  ::close(leaked);
  EXPECT_EQ(r.output, "clean\n");
}

TEST(Process, AMissingProgramIsAnError) {
  auto r = run_process({"/nonexistent/program"});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("cannot start"), std::string::npos) << r.error().message();
  EXPECT_FALSE(run_process({}).ok());
}

TEST(Process, AProgramThatCannotStartIsAnErrorNamingWhy) {
  testing::TempDir dir;
  const auto script = dir / "not_executable.sh";
  testing::write_bytes(script, "#!/bin/sh\nexit 0\n");
  auto not_executable = run_process({script.string()});
  ASSERT_FALSE(not_executable.ok());
  EXPECT_NE(not_executable.error().message().find("Permission denied"), std::string::npos)
      << not_executable.error().message();
  ProcessOptions o;
  o.working_directory = dir / "missing";
  auto no_folder = run_process({"true"}, o);
  ASSERT_FALSE(no_folder.ok());
  EXPECT_NE(no_folder.error().message().find("No such file"), std::string::npos) << no_folder.error().message();
  auto not_in_path = run_process({"reduce-test-no-such-program"});
  ASSERT_FALSE(not_in_path.ok());
  EXPECT_NE(not_in_path.error().message().find("cannot start"), std::string::npos);
}

// SIGKILL cannot be caught: the child learns of it from the kernel (PR_SET_PDEATHSIG), so an
// engine run does not outlive a `reduce` that was killed (by the OOM killer, a scheduler's kill -9).
TEST(Process, TheProgramDiesWhenTheProcessThatRunsItIsKilled) {
  testing::TempDir dir;
  const std::string pid_file = (dir / "engine.pid").string();
  const pid_t runner = ::fork();
  ASSERT_GE(runner, 0);
  if (runner == 0) {
    (void)run_process({"sh", "-c", "echo $$ > '" + pid_file + ".tmp'; mv '" + pid_file + ".tmp' '" + pid_file +
                                        "'; exec sleep 120"});
    ::_exit(0);
  }
  for (int i = 0; i < 1000 && !std::filesystem::exists(pid_file); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(std::filesystem::exists(pid_file));
  const pid_t engine = std::stoi(testing::read_bytes(pid_file));
  EXPECT_FALSE(process_gone(engine));
  ::kill(runner, SIGKILL);
  ::waitpid(runner, nullptr, 0);
  for (int i = 0; i < 500 && !process_gone(engine); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const bool gone = process_gone(engine);
  if (!gone) ::kill(engine, SIGKILL);
  EXPECT_TRUE(gone) << "the engine process outlived the killed runner";
}

TEST(Process, ConcurrentRunsKeepTheirOwnOutput) {
  std::vector<std::thread> threads;
  std::vector<std::string> outputs(8);
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      auto r = run_process({"sh", "-c", "sleep 0.1; echo " + std::to_string(i)});
      if (r.ok()) outputs[i] = r->output;
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < 8; ++i) EXPECT_EQ(outputs[i], std::to_string(i) + "\n");
}

TEST(Process, LastOutputLinesAreTrimmedAndJoined) {
  EXPECT_EQ(last_output_lines("noise\n  first  \n\nsecond\n\n", 2), "first | second");
  EXPECT_EQ(last_output_lines("", 3), "");
}

TEST(Process, AMegabyteLineIsCutToItsStart) {
  const std::string line = "error: " + std::string(size_t{1} << 20, 'x');
  const std::string tail = last_output_lines("before\n" + line + "\n", 2);
  EXPECT_EQ(tail, "before | " + line.substr(0, 400) + " [line truncated]");
}

}  // namespace
}  // namespace reduce
