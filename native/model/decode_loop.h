// The bookkeeping of batched generation, shared by the CPU model (generate.cc) and the CUDA model
// (native/cuda/model/generate.cu): prompt checks and output reset, which rows still run, their penalty
// histories, and the layout of the next decoding step. The forwards and the sampling stay with each backend.
#pragma once

#include <cstdint>
#include <vector>

#include "config.h"
#include "grpo/model.h"
#include "layer.h"
#include "sample.h"

namespace grpo::model {

// The caller's output arrays (grpo_model_generate).
struct DecodeOutputs {
  int32_t* tokens;   // [nseq, max_new_tokens]
  float* logp;       // [nseq, max_new_tokens]
  int64_t* lengths;  // [nseq]
  uint8_t* truncated;
};

// Checks that every prompt of `prompts` leaves room for one token, resets the outputs (-1 / 0) and returns the
// KV-cache length per row, min(longest prompt + max_new_tokens, max_position_embeddings); 0 when max_new_tokens = 0.
int64_t start_decoding(const Config& c, const TokenLayout& prompts, const grpo_generate_options& o, const DecodeOutputs& out);

class DecodeLoop {
 public:
  // After the prefill of `prompts` (ids: the packed prompt tokens): every row runs, its last prompt token is picked.
  DecodeLoop(const grpo_generate_options& o, int64_t nseq, int64_t cache_len, const TokenLayout& prompts, const int32_t* ids);

  // Each row's prompt + completion so far when a penalty is set, else empty.
  History history() const;
  // Records this step's draws (tokens, logp [nseq]) of the running rows; false when every row has stopped.
  // Otherwise next, ids and pick describe the next forward: one token per running row at its cache row.
  bool advance(int64_t step, const DecodeOutputs& out);

  std::vector<int32_t> tokens;  // [nseq] drawn this step (rows that stopped are drawn too and ignored)
  std::vector<float> logp;      // [nseq]
  std::vector<int64_t> active;  // sequences still generating, in order
  std::vector<int64_t> pick;    // [active] the hidden row of the last forward that predicts each running row
  TokenLayout next;
  std::vector<int32_t> ids;     // [next.T] input tokens of the next forward

 private:
  const grpo_generate_options& o_;
  int64_t cache_len_;
  bool penalties_;
  std::vector<int64_t> length_;             // [nseq] tokens in the cache (prompt + generated)
  std::vector<std::vector<int32_t>> text_;  // [nseq] prompt + generated ids (penalties only)
};

}  // namespace grpo::model
