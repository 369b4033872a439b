// parallel_for covers every index once, propagates exceptions, and allows nested calls.
#include <atomic>
#include <stdexcept>
#include <vector>

#include "check.h"
#include "grpo/grpo.h"
#include "thread_pool.h"

int main() {
  for (int threads : {1, 2, 3}) {
    grpo_set_num_threads(threads);
    std::vector<std::atomic<int>> hits(1001);
    grpo::parallel_for(1001, 10, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) hits[i]++;
      grpo::parallel_for(4, 1, [](int64_t, int64_t) {});  // nested: runs serially, must not deadlock
    });
    bool once = true;
    for (auto& h : hits) once = once && h.load() == 1;
    CHECK(once);
    bool caught = false;
    try {
      grpo::parallel_for(100, 1, [](int64_t b, int64_t) {
        if (b == 57) throw std::runtime_error("block 57");
      });
    } catch (const std::runtime_error&) {
      caught = true;
    }
    CHECK(caught);
  }
  CHECK(grpo_set_num_threads(5000) == GRPO_ERR_VALUE_RANGE);
  return grpo::test::report("test_runtime");
}
