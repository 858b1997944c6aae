// The generator's seeded random numbers: core's SplitMix64 plus the draws the generator needs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/splitmix64.h"

namespace reduce::corpus {

class Random : public SplitMix64 {
 public:
  explicit Random(uint64_t seed) : SplitMix64(seed) {}

  float uniform(double lo, double hi) { return static_cast<float>(lo + (hi - lo) * unit()); }
  std::vector<float> uniform_values(size_t count, double lo, double hi) {
    std::vector<float> v(count);
    for (auto& x : v) x = uniform(lo, hi);
    return v;
  }
  // Uniform integer in [0, n).
  size_t below(size_t n) { return n ? static_cast<size_t>(next() % n) : 0; }
};

// The seed of one model: depends only on the run's seed, the model family and its size, so a
// model is the same whichever other models are generated with it.
inline uint64_t model_seed(uint64_t seed, std::string_view family, uint64_t size) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : family) h = (h ^ c) * 0x100000001b3ULL;
  Random mix(seed ^ (h * 0x9e3779b97f4a7c15ULL) ^ (size << 32));
  return mix.next();
}

}  // namespace reduce::corpus
