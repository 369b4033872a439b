// Exact threshold search for top-k and top-p without sorting the vocabulary.
//
// Both cuts have the form "keep y >= v*, v* the largest present y-value with F(v*) >= target", where
// F(v) is the count (top-k) or the w-mass (top-p) of tokens with y >= v. Since w is non-decreasing in
// y, the search bisects on the bits of w with one vectorised counting pass per step (tail_at_least)
// until the window [lo, hi) of w holds few tokens. Every token above the window has a larger y than
// every token in it, so an exact weighted selection over the window's (y, w) pairs finds v*; ties are
// decided on y, never on w.
#pragma once

#include <cstdint>
#include <vector>

namespace grpo::sampling {

struct Candidate {
  float y, w;
  int32_t index;
};

enum class Measure { kCount, kMass };

struct SearchInput {
  const float* y;          // [n]
  float* w;                // [n]
  const float* block_max;  // [ceil(n / kMaxBlock)]: upper bounds of w per block (block_maxima)
  int64_t n;
  Measure measure;
  double target;       // > 0 and <= F over the tokens with w > 0
  int64_t positive;    // tokens with w > 0
  double mass;         // their Σ w
  float first_pivot;   // a first bisection point in (0, 1]; 0 = none
  float floor;         // every token with w > 0 has w >= floor (e.g. the top-k threshold); 0 = none
};

// Top-k with small k skips the bisection: the k-th largest block maximum m is a lower bound of the
// k-th largest w (k blocks hold a token >= m), so the window is [m, 1] and only blocks reaching m are read.
//
// The cut as a weight threshold: afterwards the kept set is exactly {w >= threshold} (tokens below v*
// whose weight rounds to the same float as v*'s get w = 0), with its count and mass.
struct SearchScratch {
  std::vector<Candidate> window;
  std::vector<float> block_order;
  std::vector<int32_t> chunks;  // the bisection's chunks that reach its lower bound (tail_at_least)
};

struct Cut {
  float threshold;
  int64_t kept;
  double mass;
};

Cut threshold_search(const SearchInput& in, SearchScratch& scratch);

}  // namespace grpo::sampling
