// Counter-based random numbers: each value is a pure function of (seed, stream, index), so any thread can draw any
// element and the results do not depend on the thread count.
#pragma once

#include <cstdint>

namespace grpo::model {

inline uint64_t splitmix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// 64 random bits, number `index` of stream `stream`.
inline uint64_t hash_at(uint64_t seed, uint64_t stream, uint64_t index) {
  return splitmix(seed ^ splitmix(stream * 0x100000001B3ull + index));
}

// Uniform in [0, 1) with 24 random bits (exact in float32).
inline float uniform_at(uint64_t seed, uint64_t stream, uint64_t index) {
  return static_cast<float>(hash_at(seed, stream, index) >> 40) * (1.0f / 16777216.0f);
}

}  // namespace grpo::model
