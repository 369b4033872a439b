// Non-temporal stores for outputs larger than the caches: the lines go to memory without first being
// read into the cache, as a cached store of a line not yet cached reads it (a third of the traffic of a
// sweep that reads one array and writes another of the same size).
#pragma once

#include <cstdint>

namespace grpo::simd {

// An output larger than this is streamed to memory (non-temporal stores): a cached store reads each line first, a
// third of the traffic of a sweep that reads one array and writes another. A smaller output is written through the
// cache, where its reader may still find it.
constexpr int64_t kStreamedOutputBytes = int64_t{16} << 20;

inline bool streams_output(int64_t floats) { return floats * static_cast<int64_t>(sizeof(float)) > kStreamedOutputBytes; }

// out[0, n) = x[0, n) · factor, the same bits as the cached multiply, out written with non-temporal stores.
void stream_scaled(float* out, const float* x, int64_t n, float factor);

// stream_scaled at the store width of grpo_cpu_path() value `path` ("avx512", "avx2", else the baseline's), for
// the tests: the CPU must run that path.
void stream_scaled_on(const char* path, float* out, const float* x, int64_t n, float factor);

// out[0, n) = 0 with non-temporal stores.
void stream_zero(float* out, int64_t n);

// Orders this thread's non-temporal stores before its later loads and stores: call it before reading back
// what was streamed, and before handing it to another thread.
void stream_fence();

}  // namespace grpo::simd
