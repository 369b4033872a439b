// Repetition / frequency / presence penalties against a row's history of generated token ids
// (HF RepetitionPenaltyLogitsProcessor, then OpenAI-style frequency and presence, as vLLM orders them).
#pragma once

#include <cstdint>
#include <vector>

namespace grpo::sampling {

struct Penalties {
  float repetition = 1.0f;  // > 0; 1 = off
  float frequency = 0.0f;   // per occurrence
  float presence = 0.0f;    // once per distinct token
  bool active() const { return repetition != 1.0f || frequency != 0.0f || presence != 0.0f; }
};

// The penalised logit of a token seen `count` > 0 times, in float32 arithmetic and this order.
inline float penalise(float y, int64_t count, const Penalties& p) {
  y = y > 0.0f ? y / p.repetition : y * p.repetition;
  y = y - p.frequency * static_cast<float>(count);
  return y - p.presence;
}

// Applies the penalties to y [vocab] for the ids in history [length] (ids already range-checked).
// Masked tokens (-Infinity) stay masked. Returns false if a penalised logit became NaN or +Infinity
// (its id in *bad_id). `ids` is scratch.
bool apply_penalties(float* y, const int32_t* history, int64_t length, const Penalties& p, std::vector<int32_t>& ids,
                     int32_t* bad_id);

}  // namespace grpo::sampling
