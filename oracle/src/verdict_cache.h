// VerdictCache: the verdicts an oracle gave, by candidate hash, and the engine outputs of its latest
// failing runs (bounded in count and bytes, charged to the reduction's memory ledger).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include "core/memory_ledger.h"
#include "engine/engine.h"
#include "oracle/verdict.h"

namespace reduce {

class VerdictCache {
 public:
  using Key = std::pair<uint64_t, uint64_t>;  // candidate_hash
  // Outputs larger than this are never kept: an evaluation need not hold on to more.
  static constexpr uint64_t kKeepableBytes = (uint64_t{16} << 20) / 4;

  explicit VerdictCache(std::shared_ptr<MemoryLedger> ledger) : ledger_(std::move(ledger)) {}
  ~VerdictCache();
  VerdictCache(const VerdictCache&) = delete;
  VerdictCache& operator=(const VerdictCache&) = delete;

  // The cached verdict. With `actual`, only when the outputs of that run are kept too (then copied
  // into `actual`, sharing buffers).
  std::optional<Verdict> find(const Key& key, TensorMap* actual) const;
  // Caches `verdict`; a failing one's `outputs` (when given, every output) are kept when small enough.
  void store(const Key& key, const Verdict& verdict, const TensorMap* outputs = nullptr);
  // Forgets everything (another tolerance makes every verdict stale).
  void clear();

 private:
  const TensorMap* kept_outputs(const Key& key) const;  // mutex_ held
  void keep_outputs(const Key& key, const TensorMap& outputs);

  std::shared_ptr<MemoryLedger> ledger_;
  mutable std::mutex mutex_;
  std::map<Key, Verdict> verdicts_;
  std::deque<std::pair<Key, TensorMap>> kept_;  // oldest first
  size_t kept_bytes_ = 0;
};

}  // namespace reduce
