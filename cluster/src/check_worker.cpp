// Worker rank: every check runs on its own thread with its own cancel flag, which rank 0's cancel
// message sets (the oracle then kills the engine run).
#include "cluster/check_worker.h"

#include <atomic>
#include <list>
#include <thread>

namespace reduce::cluster {

namespace {

struct Running {
  uint64_t id = 0;
  std::atomic<bool> cancel{false};
  std::atomic<bool> done{false};
  std::thread thread;
};

}  // namespace

bool serve_checks(MpiLink& link, Oracle* oracle, const Hello& hello, std::chrono::milliseconds rank_timeout) {
  link.send(0, kHello, encode_hello(hello));
  std::list<Running> running;
  auto reap = [&](bool all) {
    for (auto it = running.begin(); it != running.end();) {
      if (all) it->cancel.store(true);
      if (all || it->done.load()) {
        it->thread.join();
        it = running.erase(it);
      } else {
        ++it;
      }
    }
  };
  bool rank0_alive = true;
  while (true) {
    auto e = link.receive(std::chrono::milliseconds(100));
    reap(false);
    if (std::chrono::steady_clock::now() - link.heard(0) > rank_timeout) {
      rank0_alive = false;
      link.skip_finalize();  // rank 0 would never join MPI_Finalize's closing fence
      break;
    }
    if (!e || e->peer != 0) continue;
    if (e->tag == kStop) {
      if (decode_stop(e->bytes)) link.skip_finalize();
      break;
    }
    if (e->tag == kCancel) {
      if (auto id = decode_id(e->bytes))
        for (auto& r : running)
          if (r.id == *id) r.cancel.store(true);
    } else if (e->tag == kCheck && oracle) {
      auto check = decode_check(e->bytes);
      if (!check) continue;  // rank 0 hears nothing and drops this rank after its timeout
      Running& r = running.emplace_back();
      r.id = check->first;
      r.thread = std::thread([&link, oracle, &r, c = std::move(check->second)] {
        const Verdict v = oracle->evaluate(c, &r.cancel);
        link.send(0, kVerdict, encode_verdict(r.id, v));
        r.done.store(true);
      });
    }
  }
  reap(true);
  return rank0_alive;
}

}  // namespace reduce::cluster
