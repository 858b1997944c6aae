// Ctrl-C and SIGTERM from the CLI: commands that run engines exit 130 with one line and leave no
// engine process behind; a reduction interrupted at any moment leaves a bundle that can be resumed
// (or says nothing was written).
#include <gtest/gtest.h>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "fault_models.h"
#include "process_support.h"

namespace reduce {
namespace {

namespace fs = std::filesystem;
using testing::read_bytes;
using testing::run_reduce;
using testing::TempDir;
using testing::write_bytes;
using Clock = std::chrono::steady_clock;

// A `reduce` process started in the background, its stdout and stderr in files.
struct Background {
  pid_t pid = 0;
  fs::path out, err;
};

// Starts `reduce ARGS`; with `pending_signal`, the process starts with that signal already
// pending (blocked, then raised before exec): it arrives before anything is loaded.
Background start_reduce(const fs::path& dir, const std::vector<std::string>& args, int pending_signal = 0) {
  Background b{0, dir / "reduce.out", dir / "reduce.err"};
  const std::string bin = std::string(REDUCE_BINARY_DIR) + "/reduce";
  std::vector<std::string> argv{bin};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> c_args;
  for (auto& a : argv) c_args.push_back(a.data());
  c_args.push_back(nullptr);
  const std::string out = b.out.string(), err = b.err.string();
  b.pid = fork();
  if (b.pid == 0) {
    if (!freopen(out.c_str(), "w", stdout) || !freopen(err.c_str(), "w", stderr)) _exit(127);
    if (pending_signal) {
      sigset_t s;
      sigemptyset(&s);
      sigaddset(&s, pending_signal);
      sigprocmask(SIG_BLOCK, &s, nullptr);
      kill(getpid(), pending_signal);
    }
    execv(bin.c_str(), c_args.data());
    _exit(127);
  }
  return b;
}

// Waits for the process to end; its exit code (128 + N when signal N ended it), or -1 when it is
// still running after `limit` (it is then killed).
int wait_exit(pid_t pid, std::chrono::seconds limit = std::chrono::seconds(20)) {
  const auto deadline = Clock::now() + limit;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (Clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Waits (at most 20 s) for a file to have content.
bool wait_for_file(const fs::path& path) {
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while (Clock::now() < deadline) {
    std::error_code ec;
    if (fs::file_size(path, ec) > 0 && !ec) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// The pid a script wrote with write_pid (`echo $$ > FILE.$$; mv FILE.$$ FILE`: whole, since several runs
// of one engine script may write it while the test reads).
pid_t pid_in(const fs::path& file) { return static_cast<pid_t>(std::stol(read_bytes(file))); }

// The shell lines that write `what` ($$, $PPID) into `file` whole.
std::string write_pid(const std::string& what, const fs::path& file) {
  return "echo " + what + " > " + file.string() + ".$$; mv " + file.string() + ".$$ " + file.string() + "\n";
}

// Whether the process still runs (a zombie no longer runs). Kills it when it does, so that a
// failing test leaves nothing behind.
bool still_running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const size_t paren = line.rfind(')');
  const bool running = paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] != 'Z';
  if (running) kill(pid, SIGKILL);
  return running;
}

size_t line_count(const std::string& text) {
  size_t n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

std::string model_in(const TempDir& dir) {
  write_bytes(dir / "m.onnxtxt", testing::kBroadcastChain);
  return (dir / "m.onnxtxt").string();
}

// A `cmd:` engine that writes its pid to PIDFILE and then sleeps (exec: the pid is the sleep's).
std::string sleeping_engine(const TempDir& dir) {
  write_bytes(dir / "engine.sh", "#!/bin/sh\n" + write_pid("$$", dir / "engine.pid") + "exec sleep 1000\n");
  return "cmd:sh " + (dir / "engine.sh").string() + " {model} {inputs} {outputs}";
}

void expect_sigterm_kills_the_engine(const std::string& command, int signal = SIGTERM) {
  TempDir dir;
  Background reduce = start_reduce(dir.path(), {command, model_in(dir), "--engine", sleeping_engine(dir)});
  ASSERT_TRUE(wait_for_file(dir / "engine.pid")) << "the engine never started: " << read_bytes(reduce.err);
  const pid_t engine = pid_in(dir / "engine.pid");
  kill(reduce.pid, signal);
  EXPECT_EQ(wait_exit(reduce.pid), 130) << read_bytes(reduce.err);
  const std::string err = read_bytes(reduce.err);
  EXPECT_EQ(line_count(err), 1u) << err;
  EXPECT_NE(err.find("reduce: interrupted"), std::string::npos) << err;
  EXPECT_FALSE(still_running(engine)) << "the engine outlived `reduce " << command << "`";
}

TEST(InterruptCli, SigtermOnCheckKillsTheCommandEngineAndExits130) { expect_sigterm_kills_the_engine("check"); }

TEST(InterruptCli, SigtermOnCompareKillsTheCommandEngineAndExits130) { expect_sigterm_kills_the_engine("compare"); }

TEST(InterruptCli, SigtermOnRunKillsTheCommandEngineAndExits130) { expect_sigterm_kills_the_engine("run"); }

// A closed terminal or SSH session (SIGHUP), and SIGPIPE sent to the process, stop as SIGTERM does.
TEST(InterruptCli, SighupOnCheckKillsTheCommandEngineAndExits130) { expect_sigterm_kills_the_engine("check", SIGHUP); }

TEST(InterruptCli, SigpipeOnCheckKillsTheCommandEngineAndExits130) { expect_sigterm_kills_the_engine("check", SIGPIPE); }

TEST(InterruptCli, SigintOnCheckKillsTheCommandEngineAndExits130) {
  TempDir dir;
  Background reduce = start_reduce(dir.path(), {"check", model_in(dir), "--engine", sleeping_engine(dir)});
  ASSERT_TRUE(wait_for_file(dir / "engine.pid")) << read_bytes(reduce.err);
  const pid_t engine = pid_in(dir / "engine.pid");
  kill(reduce.pid, SIGINT);
  EXPECT_EQ(wait_exit(reduce.pid), 130) << read_bytes(reduce.err);
  EXPECT_FALSE(still_running(engine));
}

TEST(InterruptCli, SigtermOnCheckKillsTheCommandOfAnIsolatedEngine) {
  TempDir dir;
  Background reduce = start_reduce(dir.path(), {"check", model_in(dir), "--engine", "isolated:" + sleeping_engine(dir)});
  ASSERT_TRUE(wait_for_file(dir / "engine.pid")) << read_bytes(reduce.err);
  const pid_t engine = pid_in(dir / "engine.pid");
  kill(reduce.pid, SIGTERM);
  EXPECT_EQ(wait_exit(reduce.pid), 130) << read_bytes(reduce.err);
  EXPECT_FALSE(still_running(engine)) << "the worker's command outlived `reduce check`";
}

TEST(InterruptCli, ATimeoutOfAnIsolatedCommandKillsTheCommandWithItsWorker) {
  TempDir dir;
  // The limit must leave time for the worker to start and load the model under the sanitizers on a
  // loaded machine (about a second), so that the command starts before the limit.
  auto r = run_reduce({"check", model_in(dir), "--engine", "isolated:" + sleeping_engine(dir), "--timeout", "5"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("FAIL (timeout)"), std::string::npos) << r.out;
  ASSERT_TRUE(fs::exists(dir / "engine.pid"));
  EXPECT_FALSE(still_running(pid_in(dir / "engine.pid"))) << "the command outlived its timed-out worker";
}

TEST(InterruptCli, AnInterruptBeforeLoadingEndsTheReductionWithNothingWritten) {
  TempDir dir;
  Background reduce = start_reduce(dir.path(), {model_in(dir), "-o", (dir / "out").string()}, SIGINT);
  EXPECT_EQ(wait_exit(reduce.pid), 130) << read_bytes(reduce.err);
  EXPECT_EQ(read_bytes(reduce.err), "reduce: interrupted; nothing written\n");
  EXPECT_FALSE(fs::exists(dir / "out"));
}

TEST(InterruptCli, AnInterruptBeforeLoadingEndsCheckWithoutRunningTheEngine) {
  TempDir dir;
  Background reduce = start_reduce(dir.path(), {"check", model_in(dir), "--engine", sleeping_engine(dir)}, SIGTERM);
  EXPECT_EQ(wait_exit(reduce.pid), 130) << read_bytes(reduce.err);
  EXPECT_EQ(read_bytes(reduce.err), "reduce: interrupted\n");
  EXPECT_FALSE(fs::exists(dir / "engine.pid"));
}

// A check: engine: the original (the only candidate with all six op types, as --passes
// node-removal drops at least one node from every candidate) fails; while INTERRUPT exists, a
// candidate waits for the journal (at most 10 s), interrupts `reduce` (its parent) and sleeps. It
// fails on any model: reductions with it take --allow-model-independent.
std::string interrupting_engine(const TempDir& dir, const std::string& signal = "INT") {
  const std::string journal = (dir / "out" / "journal").string(), flag = (dir / "interrupt").string();
  write_bytes(dir / "engine.sh",
              "#!/bin/sh\n"
              "original=1\n"
              "for op in Relu Sigmoid Mul Tanh Abs Neg; do grep -aq $op \"$1\" || original=0; done\n"
              "if [ $original = 0 ] && [ -f " + flag + " ]; then\n"
              "  i=0\n"
              "  while [ ! -s " + journal + " ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done\n"
              "  kill -" + signal + " $PPID\n"
              "  exec sleep 30\n"
              "fi\n"
              "echo 'engine: boom'\nexit 1\n");
  write_bytes(dir / "interrupt", "");
  return "check:sh " + (dir / "engine.sh").string() + " {model}";
}

TEST(InterruptCli, AReductionInterruptedBeforeItsFirstImprovementCanBeResumed) {
  TempDir dir;
  const std::string model = model_in(dir), engine = interrupting_engine(dir), out = (dir / "out").string();
  Background reduce = start_reduce(dir.path(), {model, "--engine", engine, "--passes", "node-removal", "-j", "2", "-o", out,
                                                 "--allow-model-independent"});
  ASSERT_EQ(wait_exit(reduce.pid), 130) << read_bytes(reduce.err);
  // Interrupted with no improvement: the bundle holds the original, and its journal the start.
  EXPECT_NE(read_bytes(dir / "out" / "report.json").find("\"interrupted\": true"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir / "out" / "report.md"));
  EXPECT_EQ(line_count(read_bytes(dir / "out" / "journal")), 1u);
  fs::remove(dir / "interrupt");
  auto resumed = run_reduce({model, "--engine", engine, "--passes", "node-removal", "-o", out, "--resume",
                              "--allow-model-independent"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  EXPECT_NE(resumed.err.find("resuming from 6 nodes"), std::string::npos) << resumed.err;
  EXPECT_NE(resumed.out.find("reduced 6 -> 1 nodes"), std::string::npos) << resumed.out;
}

// SIGHUP (the terminal closed) while a candidate's engine runs: a valid bundle that can be resumed.
TEST(InterruptCli, ASighupDuringAReductionLeavesAResumableBundle) {
  TempDir dir;
  const std::string model = model_in(dir), engine = interrupting_engine(dir, "HUP"), out = (dir / "out").string();
  Background reduce = start_reduce(dir.path(), {model, "--engine", engine, "--passes", "node-removal", "-j", "2", "-o", out,
                                                 "--allow-model-independent"});
  ASSERT_EQ(wait_exit(reduce.pid), 130) << read_bytes(reduce.err);
  EXPECT_NE(read_bytes(dir / "out" / "report.json").find("\"interrupted\": true"), std::string::npos);
  fs::remove(dir / "interrupt");
  auto resumed = run_reduce({model, "--engine", engine, "--passes", "node-removal", "-o", out, "--resume",
                              "--allow-model-independent"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  EXPECT_NE(resumed.out.find("reduced 6 -> 1 nodes"), std::string::npos) << resumed.out;
}

// `reduce ... 2>&1 | head -1`: the pipe closes after the first line. The writes that follow fail
// instead of killing `reduce`, which goes on to write its whole bundle.
TEST(InterruptCli, AClosedOutputPipeDoesNotKillTheReduction) {
  TempDir dir;
  write_bytes(dir / "engine.sh", "#!/bin/sh\nif grep -aq Tanh \"$1\"; then echo 'engine: boom'; exit 1; fi\nexit 0\n");
  const std::string reduce_bin = std::string(REDUCE_BINARY_DIR) + "/reduce";
  const std::string command = "'" + reduce_bin + "' '" + model_in(dir) + "' --engine 'check:sh " + (dir / "engine.sh").string() +
                              " {model}' -v -j 1 -o '" + (dir / "out").string() + "' 2>&1 | head -1";
  auto r = testing::run_process({"sh", "-c", command});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const char* file : {"model.onnx", "report.json", "report.md", "bucket.txt"})
    EXPECT_TRUE(fs::exists(dir / "out" / file)) << file;
  EXPECT_NE(read_bytes(dir / "out" / "report.json").find("\"Tanh\": 1"), std::string::npos);
}

// Two reductions into one -o: the second is refused at once, naming the first's pid; the first's
// bundle is its own. An output that cannot be written is refused before the engine runs at all.
TEST(BundleFolder, ASecondReductionIntoTheSameFolderIsRefusedNamingTheHolder) {
  TempDir dir;
  const std::string out = (dir / "out").string();
  Background first = start_reduce(dir.path(), {model_in(dir), "--engine", sleeping_engine(dir), "-o", out});
  ASSERT_TRUE(wait_for_file(dir / "engine.pid")) << read_bytes(first.err);
  auto second = run_reduce({model_in(dir), "--engine", "opt:fault=broadcast-batch1", "-o", out});
  EXPECT_EQ(second.exit_code, 2) << second.out << second.err;
  EXPECT_NE(second.err.find("another reduce (pid " + std::to_string(first.pid) + ") is writing this bundle"), std::string::npos)
      << second.err;
  kill(first.pid, SIGTERM);
  EXPECT_EQ(wait_exit(first.pid), 130) << read_bytes(first.err);
  // Once the first has ended, the folder is free again.
  auto third = run_reduce({model_in(dir), "--engine", "opt:fault=broadcast-batch1", "-o", out});
  EXPECT_EQ(third.exit_code, 0) << third.out << third.err;
  EXPECT_FALSE(fs::exists(dir / "out" / ".lock"));
}

TEST(BundleFolder, AnUnwritableOutputIsRefusedBeforeTheEngineRuns) {
  TempDir dir;
  auto r = run_reduce({model_in(dir), "--engine", sleeping_engine(dir), "-o", "/proc/nope"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("error: /proc/nope: cannot create the bundle folder"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "engine.pid")) << "the engine ran before the output was checked";
}

TEST(InterruptCli, AnInterruptWhileTheReproducerRunsStillCompletesTheBundle) {
  TempDir dir;
  // Every run of a one-node model (the reproducer, during the search and in the final write)
  // interrupts `reduce`, then fails like every other model (hence --allow-model-independent).
  write_bytes(dir / "engine.sh",
              "#!/bin/sh\n"
              "n=0\n"
              "for op in Relu Sigmoid Mul Tanh Abs Neg; do grep -aq $op \"$1\" && n=$((n+1)); done\n"
              "[ $n = 1 ] && kill -INT $PPID\n"
              "echo 'engine: boom'\nexit 1\n");
  const std::string engine = "check:sh " + (dir / "engine.sh").string() + " {model}", out = (dir / "out").string();
  Background reduce = start_reduce(dir.path(), {model_in(dir), "--engine", engine, "--passes", "node-removal", "-o", out,
                                                 "--allow-model-independent"});
  const int code = wait_exit(reduce.pid);
  EXPECT_TRUE(code == 130 || code == 0) << code << read_bytes(reduce.err);
  for (const char* file : {"model.onnx", "journal", "report.json", "report.md", "bucket.txt"})
    EXPECT_TRUE(fs::exists(dir / "out" / file)) << file;
  // The reproducer still fails (checked without the interrupting part of the engine).
  write_bytes(dir / "plain.sh", "#!/bin/sh\necho 'engine: boom'\nexit 1\n");
  auto check = run_reduce({"check", (dir / "out" / "model.onnx").string(), "--engine",
                           "check:sh " + (dir / "plain.sh").string() + " {model}", "--inputs", (dir / "out" / "inputs").string()});
  EXPECT_EQ(check.exit_code, 1) << check.out << check.err;
  EXPECT_NE(check.out.find("FAIL (error)"), std::string::npos) << check.out;
}

// Ctrl-C on a batch reaches the reduction in progress (its own process): it ends with its engine,
// the batch writes its summary with that model interrupted and the next one not started.
TEST(InterruptCli, SigintOnABatchEndsTheReductionInProgressAndItsEngine) {
  TempDir dir;
  write_bytes(dir / "a.onnxtxt", testing::kBroadcastChain);
  write_bytes(dir / "b.onnxtxt", testing::kBroadcastChain);
  write_bytes(dir / "engine.sh", "#!/bin/sh\n" + write_pid("$PPID", dir / "reduction.pid") +
                                     write_pid("$$", dir / "engine.pid") + "exec sleep 1000\n");
  const std::string engine = "cmd:sh " + (dir / "engine.sh").string() + " {model} {inputs} {outputs}";
  write_bytes(dir / "manifest.tsv", "model\tengine\na.onnxtxt\t" + engine + "\nb.onnxtxt\t" + engine + "\n");
  Background batch = start_reduce(dir.path(), {"batch", (dir / "manifest.tsv").string(), "-o", (dir / "out").string()});
  ASSERT_TRUE(wait_for_file(dir / "engine.pid")) << read_bytes(batch.err);
  const pid_t engine_pid = pid_in(dir / "engine.pid");
  ASSERT_TRUE(wait_for_file(dir / "reduction.pid"));
  const pid_t reduction = pid_in(dir / "reduction.pid");
  kill(batch.pid, SIGINT);
  EXPECT_EQ(wait_exit(batch.pid), 130) << read_bytes(batch.err);
  EXPECT_FALSE(still_running(engine_pid)) << "the engine outlived the batch";
  EXPECT_FALSE(still_running(reduction)) << "the reduction process outlived the batch";
  const std::string summary = read_bytes(dir / "out" / "summary.md");
  EXPECT_NE(summary.find("interrupted"), std::string::npos) << summary;
  EXPECT_NE(summary.find("not started"), std::string::npos) << summary;
}

}  // namespace
}  // namespace reduce
