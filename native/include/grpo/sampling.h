/* Batched sampling from logits: penalties, temperature, top-k, top-p, min-p, allow masks; seeded and deterministic.
 *
 * Shapes (row-major):  logits [rows, vocab]   tokens, logp, logp_raw [rows]   probs [rows, vocab]
 *
 * Processing order for each row r (docs/sampling.md states it with the tie rules):
 *   1. mask:        tokens whose allow bit is 0, and -Infinity logits, get probability 0 and never count below;
 *   2. penalties:   y = x; for a token seen c > 0 times in the row's history (float32 arithmetic, in this order)
 *                   y = y > 0 ? y / repetition : y * repetition;  y = y - frequency * c;  y = y - presence;
 *   3. temperature: w = exp((y - max y) / T); T = 0 is greedy (lowest id among the maxima);
 *   4. top-k:       keep tokens whose y is >= the k-th largest y (every token tied with it is kept);
 *   5. top-p:       keep token i when the mass of kept tokens with y strictly greater than y_i is < top_p · mass kept;
 *   6. min-p:       keep token i when w_i >= min_p · max w  (i.e. p_i >= min_p · p_max);
 *   7. draw:        q_i = floor(w_i · 2^(24+L)) for kept tokens (L = min(26, 40 - bit_length(vocab))), one uniform
 *                   u = (x1 << 32 | x0) from Philox4x32-10(key = seed, counter = (step_lo, step_hi, first_row + r, 0)),
 *                   token = smallest id with Σ_{j<=id} q_j > floor(u · Σ q / 2^64)  (inverse CDF in id order).
 * logp = log-probability of the drawn token under the processed distribution (after step 6),
 * logp_raw = under the distribution of step 3 (after mask and penalties, before truncation).
 * A row whose logits hold NaN or +Infinity is GRPO_ERR_NON_FINITE; a row with no allowed finite logit is
 * GRPO_ERR_VALUE_RANGE; both name the row.
 */
#ifndef GRPO_SAMPLING_H
#define GRPO_SAMPLING_H

#include "grpo/grpo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Per-row parameters: each array holds [rows] values, or is NULL for the default. */
typedef struct grpo_sampling_params {
  const float* temperature;        /* >= 0, finite; 0 = greedy. Default 1 */
  const int32_t* top_k;            /* >= 0; 0 = off. Default 0 */
  const float* top_p;              /* in (0, 1]; 1 = off. Default 1 */
  const float* min_p;              /* in [0, 1]; 0 = off. Default 0 */
  const float* repetition_penalty; /* > 0, finite; 1 = off. Default 1 */
  const float* presence_penalty;   /* finite; 0 = off. Default 0 */
  const float* frequency_penalty;  /* finite; 0 = off. Default 0 */
  const uint32_t* allow_bits;      /* [rows, ceil(vocab / 32)]: bit (t % 32) of word t / 32 set = token t allowed; NULL = all */
  const int32_t* history;          /* token ids [history_offsets[rows]]; row r's are [history_offsets[r], history_offsets[r+1]) */
  const int32_t* history_offsets;  /* [rows + 1], non-decreasing, from 0; NULL = no history */
  uint64_t seed;                   /* Philox key */
  uint64_t step;                   /* advance it for every new draw with the same seed (e.g. the decode position) */
  uint64_t first_row;              /* the rows are rows first_row.. of a larger batch: row r draws with counter row
                                    * first_row + r, as that batch would (first_row + rows <= 2^32). Default 0 */
} grpo_sampling_params;

/* tokens [rows]; logp and logp_raw [rows] or NULL. */
grpo_status grpo_sample(const float* logits, int64_t rows, int64_t vocab, const grpo_sampling_params* params,
                        int32_t* tokens, float* logp, float* logp_raw);

/* The processed distribution the draw uses (after step 6), probs [rows, vocab]; greedy rows are one-hot. */
grpo_status grpo_sampling_probs(const float* logits, int64_t rows, int64_t vocab, const grpo_sampling_params* params,
                                float* probs);

/* Philox4x32-10 (Salmon et al. 2011, Random123 constants): out = the block at counter under key. */
void grpo_philox4x32_10(const uint32_t counter[4], const uint32_t key[2], uint32_t out[4]);

#ifdef __cplusplus
}
#endif

#endif /* GRPO_SAMPLING_H */
