// Probes of this machine's limits, timed by the benchmarks in the same run as the kernels:
// a streaming read (the memory roof) and independent FMA chains (the FLOP roof).
#pragma once

#include <cstdint>

namespace grpo {

// Reads data[0, n) once across the thread pool; returns a checksum so the read cannot be elided.
double stream_read(const float* data, int64_t n);

// Runs `iterations` rounds of 12 independent fused multiply-add chains of kLanes floats on
// every pool thread; returns the number of floating-point operations performed.
double fma_burn(int64_t iterations);

}  // namespace grpo
