// Packing of a batch of sequences into one token layout (shared by the CPU model and the CUDA model).
#pragma once

#include <cstdint>

#include "config.h"
#include "layer.h"

namespace grpo::model {

// Packs sequences (offsets [nseq + 1] into tokens) into a layout; checks ids and lengths.
TokenLayout pack_sequences(const Config& c, const int32_t* tokens, const int64_t* offsets, int64_t nseq);

}  // namespace grpo::model
