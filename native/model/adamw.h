// AdamW (decoupled weight decay, bias-corrected moments) with global-norm gradient clipping.
// Weight decay applies to weight matrices and embeddings only, not to norms or biases.
#pragma once

#include "model.h"

namespace grpo::model {

// Returns the global L2 norm of the gradients before clipping; zeroes the gradients afterwards. Under LoRA it steps
// the adapters alone (the base has no gradients).
float adamw_step(Model& m, const grpo_adamw_options& o);

}  // namespace grpo::model
