// VerdictCache: lookups, and the bounded keeping of failing runs' outputs.
#include "verdict_cache.h"

namespace reduce {

namespace {
// What the outputs of failing runs may hold on to: enough for the reproducers at the end of a
// reduction, not for every marked-output candidate of a large model.
constexpr size_t kKeptRuns = 32;
constexpr size_t kKeptBytes = size_t{16} << 20;
static_assert(VerdictCache::kKeepableBytes == kKeptBytes / 4);

size_t held_bytes(const TensorMap& outputs) {
  size_t bytes = 0;
  for (const auto& [name, tensor] : outputs) bytes += tensor.byte_size() + name.size();
  return bytes;
}
}  // namespace

VerdictCache::~VerdictCache() {
  if (ledger_) ledger_->discharge(kept_bytes_);
}

std::optional<Verdict> VerdictCache::find(const Key& key, TensorMap* actual) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = verdicts_.find(key);
  if (it == verdicts_.end()) return std::nullopt;
  if (actual) {
    const TensorMap* kept = kept_outputs(key);
    if (!kept) return std::nullopt;
    *actual = *kept;
  }
  return it->second;
}

void VerdictCache::store(const Key& key, const Verdict& verdict, const TensorMap* outputs) {
  std::lock_guard<std::mutex> lock(mutex_);
  verdicts_[key] = verdict;
  if (outputs && verdict.fails() && outputs->size() == verdict.outputs.size()) keep_outputs(key, *outputs);
}

void VerdictCache::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  verdicts_.clear();
  kept_.clear();
  if (ledger_) ledger_->discharge(kept_bytes_);
  kept_bytes_ = 0;
}

const TensorMap* VerdictCache::kept_outputs(const Key& key) const {
  for (const auto& [k, outputs] : kept_)
    if (k == key) return &outputs;
  return nullptr;
}

void VerdictCache::keep_outputs(const Key& key, const TensorMap& outputs) {
  const size_t bytes = held_bytes(outputs);
  if (bytes > kKeptBytes / 4 || kept_outputs(key)) return;
  kept_.emplace_back(key, outputs);
  kept_bytes_ += bytes;
  if (ledger_) ledger_->charge(bytes);
  while (kept_.size() > kKeptRuns || kept_bytes_ > kKeptBytes) {
    const size_t dropped = held_bytes(kept_.front().second);
    kept_bytes_ -= dropped;
    if (ledger_) ledger_->discharge(dropped);
    kept_.pop_front();
  }
}

}  // namespace reduce
