// The generator's own seeded random numbers (splitmix64): the same weights on every platform and
// standard library, which std:: distributions do not promise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace reduce::corpus {

class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}

  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 53 random bits; the float conversion is exact IEEE arithmetic.
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  float uniform(double lo, double hi) { return static_cast<float>(lo + (hi - lo) * unit()); }
  std::vector<float> uniform_values(size_t count, double lo, double hi) {
    std::vector<float> v(count);
    for (auto& x : v) x = uniform(lo, hi);
    return v;
  }
  // Uniform integer in [0, n).
  size_t below(size_t n) { return n ? static_cast<size_t>(next() % n) : 0; }

 private:
  uint64_t state_;
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
