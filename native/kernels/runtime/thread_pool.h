// The kernel thread pool. One process-wide pool; its size is set by grpo_set_num_threads.
//
// Determinism contract: parallel_for splits [0, n) into fixed blocks of `grain` items that
// do not depend on the number of threads. Kernels that reduce across blocks must write one
// partial result per block and combine the partials in block order, so results are bitwise
// identical for any thread count.
#pragma once

#include <cstdint>
#include <functional>

namespace grpo {

using RangeFn = std::function<void(int64_t begin, int64_t end)>;

// Calls fn(begin, end) for the blocks [k·grain, min((k+1)·grain, n)), concurrently.
// Exceptions thrown by fn are rethrown in the caller (the first one wins).
// Calls from inside a running block run serially (no nested parallelism).
void parallel_for(int64_t n, int64_t grain, const RangeFn& fn);

// Number of blocks parallel_for(n, grain, ...) makes: size partial-result arrays with it.
inline int64_t block_count(int64_t n, int64_t grain) { return grain <= 0 ? 0 : (n + grain - 1) / grain; }

int num_threads();
void set_num_threads(int n);

}  // namespace grpo
