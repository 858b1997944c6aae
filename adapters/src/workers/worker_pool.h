// WorkerPool: the idle workers of one engine. A run leases one (or starts one) and gives it back when
// the lease ends; a worker that is no longer alive (died, hung, cancelled) is dropped then.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "core/status.h"

namespace reduce {

// Worker: anything with `bool alive() const`.
template <class Worker>
class WorkerPool {
 public:
  using Start = std::function<Expected<std::unique_ptr<Worker>>()>;
  explicit WorkerPool(Start start) : start_(std::move(start)) {}
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  class Lease {
   public:
    Lease(WorkerPool* pool, std::unique_ptr<Worker> worker) : pool_(pool), worker_(std::move(worker)) {}
    Lease(Lease&& other) noexcept = default;
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (worker_) pool_->give_back(std::move(worker_));
    }
    Worker& operator*() const { return *worker_; }
    Worker* operator->() const { return worker_.get(); }

   private:
    WorkerPool* pool_;
    std::unique_ptr<Worker> worker_;
  };

  // An idle worker, or a new one when none is idle (the start's error when it cannot start).
  Expected<Lease> acquire() {
    for (;;) {
      std::unique_ptr<Worker> worker;
      {
        std::lock_guard lock(mutex_);
        if (idle_.empty()) break;
        worker = std::move(idle_.back());
        idle_.pop_back();
        if (worker->alive()) return Lease(this, std::move(worker));
        std::erase(all_, worker.get());  // it died while idle; it is ended outside the lock
      }
    }
    REDUCE_ASSIGN(std::unique_ptr<Worker> worker, start_());
    std::lock_guard lock(mutex_);
    all_.push_back(worker.get());
    return Lease(this, std::move(worker));
  }

  // Runs `f` under the pool's lock: for state of the workers that other runs read or change.
  template <class F>
  decltype(auto) locked(F&& f) {
    std::lock_guard lock(mutex_);
    return f();
  }
  // Calls `f(worker)` for every worker, idle or leased, under the pool's lock.
  template <class F>
  void for_each(F&& f) {
    std::lock_guard lock(mutex_);
    for (Worker* w : all_) f(*w);
  }

 private:
  // A dead worker is ended (its destructor reaps the process) outside the lock.
  void give_back(std::unique_ptr<Worker> worker) {
    {
      std::lock_guard lock(mutex_);
      if (worker->alive()) {
        idle_.push_back(std::move(worker));
        return;
      }
      std::erase(all_, worker.get());
    }
  }

  const Start start_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Worker>> idle_;
  std::vector<Worker*> all_;  // idle and leased
};

}  // namespace reduce
