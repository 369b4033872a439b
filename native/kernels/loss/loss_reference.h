// Plain double-precision forward of the policy loss (native/kernels/loss/loss*.cc), one token at a
// time; test_loss.cc differentiates it numerically to check the analytic backward. Entropy
// masking is left to the TypeScript reference (lib/reference/loss.ts).
#pragma once

#include <cstdint>

#include "grpo/loss.h"

namespace grpo::reference {

struct LossInput {
  const double *logp, *old_logp, *ref_logp, *advantages;  // old/ref may be NULL
  const uint8_t* mask;
  const int32_t* segments;
  bool advantages_per_token;
  int64_t rows, cols;
};

double policy_loss(const LossInput& in, const grpo_loss_options& o);

}  // namespace grpo::reference
