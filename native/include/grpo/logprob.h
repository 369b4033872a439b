/* Log-prob scoring: log-softmax(logits / temperature) gathered at target tokens, entropy, backward.
 *
 * Shapes (row-major):  logits [rows, vocab]   targets [rows]   logp, entropy [rows]
 * Rows whose target equals ignore_index give logp = entropy = 0 and a zero gradient.
 * -Infinity logits are masked tokens; NaN or +Infinity is GRPO_ERR_NON_FINITE.
 */
#ifndef GRPO_LOGPROB_H
#define GRPO_LOGPROB_H

#include "grpo/grpo.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct grpo_logprob_options {
  float temperature;    /* > 0; logits are divided by it (TRL semantics) */
  int32_t ignore_index; /* target value meaning "no token here", e.g. -100 */
} grpo_logprob_options;

/* entropy may be NULL (not computed). */
grpo_status grpo_logprob_forward(const float* logits, const int32_t* targets, int64_t rows, int64_t vocab,
                                 const grpo_logprob_options* options, float* logp, float* entropy);

/* grpo_logprob_forward that also writes lse [rows] (NULL: not written): the log-sum-exp of each row of
 * logits / temperature (0 on ignored rows), for grpo_logprob_backward_saved. */
grpo_status grpo_logprob_forward_lse(const float* logits, const int32_t* targets, int64_t rows, int64_t vocab,
                                     const grpo_logprob_options* options, float* logp, float* entropy, float* lse);

/* grad_logits [rows, vocab] = d(loss)/d(logits) given grad_logp [rows] and, optionally, grad_entropy [rows].
 * grad_logits may alias logits (in-place backward: the logits are overwritten by their gradient). */
grpo_status grpo_logprob_backward(const float* logits, const int32_t* targets, int64_t rows, int64_t vocab,
                                  const grpo_logprob_options* options, const float* grad_logp,
                                  const float* grad_entropy, float* grad_logits);

/* grpo_logprob_backward with the forward's outputs reused: lse [rows] (required) and entropy [rows] (required
 * when grad_entropy is given, else may be NULL), from grpo_logprob_forward_lse on the same logits, targets and
 * options. Each row is read once (grpo_logprob_backward reads it for its statistics first); the gradients agree
 * with grpo_logprob_backward's to float32 rounding (not bitwise: log p is x/temperature − lse here,
 * (x/temperature − max) − log_sum there). Rows whose target is ignore_index are not read. A non-finite lse or
 * entropy of a counted row, or NaN / +Infinity in its logits, is GRPO_ERR_NON_FINITE. */
grpo_status grpo_logprob_backward_saved(const float* logits, const int32_t* targets, int64_t rows, int64_t vocab,
                                        const grpo_logprob_options* options, const float* lse, const float* entropy,
                                        const float* grad_logp, const float* grad_entropy, float* grad_logits);

/* Fused LM head: logits = hidden · weightᵀ (+ bias), never materialised beyond one
 * [chunk_rows, chunk_vocab] tile; the log-sum-exp is accumulated online across vocab tiles.
 * Shapes: hidden [rows, hidden_size]   weight [vocab, hidden_size]   bias [vocab] or NULL. */
typedef struct grpo_linear_logprob_options {
  float temperature;
  int32_t ignore_index;
  int64_t chunk_rows;  /* rows per tile; 0 = default */
  int64_t chunk_vocab; /* vocab entries per tile; 0 = default */
} grpo_linear_logprob_options;

/* logp [rows]; entropy [rows] or NULL; lse [rows] or NULL (log-sum-exp of logits/temperature, to reuse in backward). */
grpo_status grpo_linear_logprob_forward(const float* hidden, const float* weight, const float* bias,
                                        const int32_t* targets, int64_t rows, int64_t hidden_size, int64_t vocab,
                                        const grpo_linear_logprob_options* options, float* logp, float* entropy,
                                        float* lse);

/* grad_hidden [rows, hidden_size], grad_weight [vocab, hidden_size], grad_bias [vocab] or NULL are overwritten
 * (or added to when accumulate != 0). grad_entropy may be NULL. */
grpo_status grpo_linear_logprob_backward(const float* hidden, const float* weight, const float* bias,
                                         const int32_t* targets, int64_t rows, int64_t hidden_size, int64_t vocab,
                                         const grpo_linear_logprob_options* options, const float* grad_logp,
                                         const float* grad_entropy, float* grad_hidden, float* grad_weight,
                                         float* grad_bias, int accumulate);

/* grpo_linear_logprob_backward with the forward's outputs reused: lse [rows] (required) and entropy [rows] (required
 * when grad_entropy is given, else may be NULL), from grpo_linear_logprob_forward on the same inputs and options.
 * The backward then skips its own pass over the logits for the row statistics (3 matrix products per tile instead
 * of 4); the gradients agree with grpo_linear_logprob_backward's to float32 rounding (not bitwise: log p is
 * x/temperature − lse here, (x/temperature − max) − log_sum there). Rows whose target is ignore_index are not read.
 * A non-finite lse or entropy of a counted row is GRPO_ERR_NON_FINITE. */
grpo_status grpo_linear_logprob_backward_saved(const float* hidden, const float* weight, const float* bias,
                                               const int32_t* targets, int64_t rows, int64_t hidden_size, int64_t vocab,
                                               const grpo_linear_logprob_options* options, const float* lse,
                                               const float* entropy, const float* grad_logp, const float* grad_entropy,
                                               float* grad_hidden, float* grad_weight, float* grad_bias, int accumulate);

/* grpo_linear_logprob_forward that also writes logits [rows, vocab] (required): every tile of hidden · weightᵀ + bias as
 * the forward computed it (before the temperature; the rows of ignored targets too), for
 * grpo_linear_logprob_backward_logits. The caller's memory: rows × vocab floats (268 MB at 2048 × 32768), which the
 * fused forward otherwise never holds. A logits array over 16 MB is written with non-temporal stores. */
grpo_status grpo_linear_logprob_forward_logits(const float* hidden, const float* weight, const float* bias,
                                               const int32_t* targets, int64_t rows, int64_t hidden_size, int64_t vocab,
                                               const grpo_linear_logprob_options* options, float* logp, float* entropy,
                                               float* lse, float* logits);

/* grpo_linear_logprob_backward_saved that reads each tile of logits [rows, vocab] (required) from the
 * grpo_linear_logprob_forward_logits call that gave lse (and entropy) on the same inputs and options, instead of
 * recomputing it: 2 matrix products per tile instead of 3, and bitwise the gradients of
 * grpo_linear_logprob_backward_saved. Rows whose target is ignore_index are not read; NaN or +Infinity in a counted
 * row of logits is GRPO_ERR_NON_FINITE. */
grpo_status grpo_linear_logprob_backward_logits(const float* hidden, const float* weight, const float* bias,
                                                const int32_t* targets, int64_t rows, int64_t hidden_size, int64_t vocab,
                                                const grpo_linear_logprob_options* options, const float* lse,
                                                const float* entropy, const float* logits, const float* grad_logp,
                                                const float* grad_entropy, float* grad_hidden, float* grad_weight,
                                                float* grad_bias, int accumulate);

/* The same two functions with bfloat16 hidden and weight: each uint16_t holds a bfloat16 bit pattern (the high
 * 16 bits of an IEEE float32; round float32 to it to nearest even). bias stays float32 (or NULL); a bf16 NaN or
 * Infinity in hidden or weight is GRPO_ERR_NON_FINITE. The product of two bfloat16 values is exact in float32,
 * so the logits differ from the float32 functions' on the widened inputs only by the order of float32 sums.
 * Outputs (logp, entropy, lse) and all gradients (grad_hidden, grad_weight, grad_bias) are float32.
 * Backward: each [chunk_rows, chunk_vocab] tile of d(loss)/d(logits) is rounded to bfloat16 (nearest even)
 * before it is multiplied with weight and hidden (as a bf16 tensor-core GEMM needs), with float32 sums;
 * grad_bias sums the unrounded tile. */
grpo_status grpo_linear_logprob_forward_bf16(const uint16_t* hidden, const uint16_t* weight, const float* bias,
                                             const int32_t* targets, int64_t rows, int64_t hidden_size, int64_t vocab,
                                             const grpo_linear_logprob_options* options, float* logp, float* entropy,
                                             float* lse);

grpo_status grpo_linear_logprob_backward_bf16(const uint16_t* hidden, const uint16_t* weight, const float* bias,
                                              const int32_t* targets, int64_t rows, int64_t hidden_size, int64_t vocab,
                                              const grpo_linear_logprob_options* options, const float* grad_logp,
                                              const float* grad_entropy, float* grad_hidden, float* grad_weight,
                                              float* grad_bias, int accumulate);

/* grpo_linear_logprob_backward_saved with bfloat16 hidden and weight (lse and entropy from the _bf16 forward). */
grpo_status grpo_linear_logprob_backward_saved_bf16(const uint16_t* hidden, const uint16_t* weight, const float* bias,
                                                    const int32_t* targets, int64_t rows, int64_t hidden_size,
                                                    int64_t vocab, const grpo_linear_logprob_options* options,
                                                    const float* lse, const float* entropy, const float* grad_logp,
                                                    const float* grad_entropy, float* grad_hidden, float* grad_weight,
                                                    float* grad_bias, int accumulate);

/* The _logits pair (above) with bfloat16 hidden and weight; logits stay float32. Backward: as
 * grpo_linear_logprob_backward_saved_bf16, bit for bit. */
grpo_status grpo_linear_logprob_forward_logits_bf16(const uint16_t* hidden, const uint16_t* weight, const float* bias,
                                                    const int32_t* targets, int64_t rows, int64_t hidden_size,
                                                    int64_t vocab, const grpo_linear_logprob_options* options, float* logp,
                                                    float* entropy, float* lse, float* logits);

grpo_status grpo_linear_logprob_backward_logits_bf16(const uint16_t* hidden, const uint16_t* weight, const float* bias,
                                                     const int32_t* targets, int64_t rows, int64_t hidden_size,
                                                     int64_t vocab, const grpo_linear_logprob_options* options,
                                                     const float* lse, const float* entropy, const float* logits,
                                                     const float* grad_logp, const float* grad_entropy,
                                                     float* grad_hidden, float* grad_weight, float* grad_bias,
                                                     int accumulate);

#ifdef __cplusplus
}
#endif

#endif /* GRPO_LOGPROB_H */
