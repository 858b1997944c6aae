// WorkerProcess and WorkerPool: line exchanges, how a death, a hang and a cancel are told, and a pool that
// drops dead workers. The workers are `sh` scripts on descriptor 3.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "workers/worker_pool.h"
#include "workers/worker_process.h"

namespace reduce {
namespace {

// An echo worker: answers each line with "got LINE"; "die" exits with code 3 after a message,
// "hang" sleeps, "slow" answers after 0.3 s, "cancel" is answered "stopped".
constexpr const char* kEcho = R"(while read -r line <&3; do
  case "$line" in
    die) echo "about to fail" >&2; exit 3 ;;
    segv) kill -SEGV $$ ;;
    hang) sleep 30 ;;
    slow) sleep 0.3; echo "got slow" >&3 ;;
    cancel) echo stopped >&3 ;;
    *) echo "got $line" >&3 ;;
  esac
done)";

WorkerProcess::Options echo_options() {
  WorkerProcess::Options o;
  o.argv = {"sh", "-c", kEcho};
  o.who = "the echo worker";
  o.timeout_subject = "the echo";
  o.timeout_note = " (test)";
  return o;
}

std::unique_ptr<WorkerProcess> start_echo(WorkerProcess::Options options = echo_options()) {
  auto folder = TempFolder::create("reduce-worker-test-");
  EXPECT_TRUE(folder.ok());
  auto worker = WorkerProcess::start(std::move(folder).value(), std::move(options));
  EXPECT_TRUE(worker.ok()) << (worker.ok() ? "" : worker.error().message());
  return worker.ok() ? std::move(worker).value() : nullptr;
}

Expected<std::string> ask(WorkerProcess& worker, const std::string& line, double timeout = 0,
                          const std::atomic<bool>* cancel = nullptr) {
  worker.begin(timeout);
  REDUCE_TRY(worker.send(line + "\n", cancel));
  return worker.receive_line(cancel);
}

TEST(WorkerProcess, ExchangesLinesUntilItEnds) {
  auto worker = start_echo();
  ASSERT_TRUE(worker);
  for (const std::string word : {"one", "two", "three"}) {
    auto answer = ask(*worker, word);
    ASSERT_TRUE(answer.ok()) << answer.error().message();
    EXPECT_EQ(*answer, "got " + word);
  }
  EXPECT_TRUE(worker->alive());
}

TEST(WorkerProcess, ADeathIsACrashThatQuotesWhatItPrinted) {
  auto worker = start_echo();
  ASSERT_TRUE(worker);
  auto answer = ask(*worker, "die");
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.error().kind, ErrorKind::Crash);
  EXPECT_EQ(answer.error().what, "the echo worker exited with code 3: about to fail");
  EXPECT_FALSE(worker->alive());

  auto killed = start_echo();
  ASSERT_TRUE(killed);
  auto segv = ask(*killed, "segv");
  ASSERT_FALSE(segv.ok());
  EXPECT_EQ(segv.error().kind, ErrorKind::Crash);
  EXPECT_EQ(segv.error().signal, SIGSEGV);
  EXPECT_EQ(segv.error().what, "the echo worker killed by SIGSEGV");
}

TEST(WorkerProcess, AHangPastTheDeadlineIsATimeoutAndTheWorkerIsStopped) {
  auto worker = start_echo();
  ASSERT_TRUE(worker);
  auto answer = ask(*worker, "hang", 0.3);
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.error().kind, ErrorKind::Timeout);
  EXPECT_EQ(answer.error().what, "the echo timed out after 0.3 s (test)");
  EXPECT_FALSE(worker->alive());
}

TEST(WorkerProcess, ACancelSendsItsMessageAndTakesTheAnswer) {
  // A worker busy on a line reads the cancel message next and answers it; the exchange ends with
  // that answer, and the worker stays usable.
  auto options = echo_options();
  options.cancel_message = "cancel\n";
  options.grace_seconds = 5;
  auto worker = start_echo(options);
  ASSERT_TRUE(worker);
  std::atomic<bool> cancel{true};
  auto answer = ask(*worker, "slow", 0, &cancel);
  ASSERT_TRUE(answer.ok()) << answer.error().message();
  EXPECT_EQ(*answer, "got slow");
  cancel = false;
  auto next = ask(*worker, "second");  // the answer to the cancel message comes first
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(*next, "stopped");
  EXPECT_TRUE(worker->alive());
}

TEST(WorkerProcess, ACancelWithoutAMessageStopsTheWorkerAtOnce) {
  auto worker = start_echo();
  ASSERT_TRUE(worker);
  std::atomic<bool> cancel{false};
  std::thread later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    cancel = true;
  });
  auto answer = ask(*worker, "hang", 0, &cancel);
  later.join();
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.error().what, "cancelled");
  EXPECT_FALSE(worker->alive());
}

TEST(WorkerProcess, AProgramThatCannotStartIsAnError) {
  auto options = echo_options();
  options.argv = {"/nonexistent/worker"};
  auto folder = TempFolder::create("reduce-worker-test-");
  ASSERT_TRUE(folder.ok());
  auto worker = WorkerProcess::start(std::move(folder).value(), options);
  ASSERT_FALSE(worker.ok());
  EXPECT_NE(worker.error().message().find("/nonexistent/worker"), std::string::npos) << worker.error().message();
}

struct CountedWorker {
  std::unique_ptr<WorkerProcess> process;
  bool alive() const { return process->alive(); }
};

TEST(WorkerPool, ReusesLiveWorkersAndReplacesDeadOnes) {
  int started = 0;
  WorkerPool<CountedWorker> pool([&]() -> Expected<std::unique_ptr<CountedWorker>> {
    ++started;
    return std::make_unique<CountedWorker>(CountedWorker{start_echo()});
  });
  {
    auto a = pool.acquire();
    ASSERT_TRUE(a.ok());
    auto b = pool.acquire();  // the first is leased: a second one starts
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(started, 2);
  }
  {
    auto again = pool.acquire();  // an idle one
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(started, 2);
    EXPECT_FALSE(ask(*(*again)->process, "die").ok());  // it dies while leased: dropped when given back
  }
  int workers = 0;
  pool.for_each([&](CountedWorker&) { ++workers; });
  EXPECT_EQ(workers, 1);
  {
    auto a = pool.acquire();
    auto b = pool.acquire();
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(started, 3);
  }
}

TEST(WorkerPool, AWorkerThatCannotStartIsTheAcquiresError) {
  WorkerPool<CountedWorker> pool([]() -> Expected<std::unique_ptr<CountedWorker>> { return make_error("no engine here"); });
  auto lease = pool.acquire();
  ASSERT_FALSE(lease.ok());
  EXPECT_EQ(lease.error().what, "no engine here");
}

}  // namespace
}  // namespace reduce
