// EarlyRerun: the bundle's first fresh run of the reproducer, started while certify checks the
// candidate (with several slots), so that it costs no round of waiting after the search when the
// candidate stays the result. A run for a candidate that did not stay is cancelled and thrown away.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <thread>

#include "session/bundle.h"

namespace reduce {

class EarlyRerun {
 public:
  explicit EarlyRerun(Oracle& oracle) : oracle_(oracle) {}
  ~EarlyRerun() { cancel(); }
  EarlyRerun(const EarlyRerun&) = delete;
  EarlyRerun& operator=(const EarlyRerun&) = delete;

  // Starts the run of `candidate` (a run of another one is cancelled first), with `again` more
  // fresh runs and, with `probes`, the neutral probe models beside it (FreshRun::again, probes).
  void start(const Candidate& candidate, size_t rounds, int again = 0, bool probes = false);
  // The run of `candidate`, waited for; nullopt when none was started for it or it was cancelled
  // (a run of another candidate is cancelled).
  std::optional<FreshRun> take(const Candidate& candidate);
  // Runs started for a candidate that did not stay the result (cancelled or thrown away): engine
  // runs spent on trust, counted in the oracle's statistics like the others; of them, probe runs.
  uint64_t discarded() const { return discarded_; }
  uint64_t discarded_probes() const { return discarded_probes_; }

 private:
  void cancel();

  Oracle& oracle_;
  std::unique_ptr<FreshRun> run_;
  std::unique_ptr<std::atomic<bool>> cancel_;
  std::thread thread_;
  uint64_t discarded_ = 0;
  uint64_t discarded_probes_ = 0;
  void discard();
};

}  // namespace reduce
