// Exact threshold search for top-k and top-p without sorting the vocabulary.
//
// Both cuts have the form "the largest present y-value v with F(v) >= target", where F(v) is the
// count (top-k) or the w-mass (top-p) of tokens with y >= v. Since w is non-decreasing in y, the
// search bisects on the bits of w with one vectorised counting pass each (tail_at_least), until the
// window [lo, hi) of w holds few tokens; every token above the window then has a larger y than every
// token in it, so an exact weighted selection over the window's (y, w) pairs finishes the job.
#pragma once

#include <cstdint>
#include <vector>

namespace grpo::sampling {

struct Candidate {
  float y, w;
};

enum class Measure { kCount, kMass };

struct SearchInput {
  const float* y;      // [n]
  const float* w;      // [n]
  int64_t n;
  Measure measure;
  double target;       // > 0 and <= F over all tokens with w > 0
  int64_t positive;    // tokens with w > 0
  double mass;         // their Σ w
  float first_pivot;   // a hint in (0, 1] for the first bisection step; 0 = none
};

// The cut: keep tokens with y >= the returned value. `scratch` holds the window's candidates.
float threshold_search(const SearchInput& in, std::vector<Candidate>& scratch);

}  // namespace grpo::sampling
