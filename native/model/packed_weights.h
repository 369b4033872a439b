// The dense weights packed once per generate call into the GEMM's panels, so that every decoding step
// multiplies without re-packing them (same bits as the plain GEMM; costs one more copy of the weights
// while the call runs). bf16 matmuls keep their own per-call packing.
#pragma once

#include <vector>

#include "config.h"
#include "gemm/gemm.h"
#include "params.h"

namespace grpo::model {

struct LayerPacks {
  PackedB wq, wk, wv, wo, gate, up, down;
};

struct ModelPacks {
  std::vector<LayerPacks> layers;  // empty: multiply the plain weights
  PackedB lm_head;
};

ModelPacks pack_weights(const Config& c, const ModelTensors& p);

}  // namespace grpo::model
