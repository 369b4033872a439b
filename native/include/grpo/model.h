/* The built-in policy: a Llama/Qwen-family decoder (RMSNorm, rotary positions, SwiGLU MLP,
 * grouped-query attention, optional QKV bias, tied or untied embeddings).
 *
 * A batch is a list of sequences packed end to end: tokens [T] with seq_offsets [nseq + 1]
 * (sequence s is tokens[seq_offsets[s] .. seq_offsets[s+1]); positions restart at 0 per sequence).
 * targets [T] give the next token to score at each position (ignore_index = no score there).
 * Parameters live in one float32 buffer under Hugging Face tensor names
 * ("model.embed_tokens.weight", "model.layers.0.self_attn.q_proj.weight", ..., "lm_head.weight");
 * with qk_norm also "model.layers.{i}.self_attn.q_norm.weight" and "k_norm.weight" [head_dim].
 * A model handle is not thread-safe: callers serialise calls on one handle.
 */
#ifndef GRPO_MODEL_H
#define GRPO_MODEL_H

#include "grpo/grpo.h"
#include "grpo/sampling.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct grpo_model grpo_model;

typedef struct grpo_model_config {
  int64_t vocab_size, hidden_size, intermediate_size, num_hidden_layers, num_attention_heads, num_key_value_heads,
      head_dim, max_position_embeddings;
  float rms_norm_eps, rope_theta;
  int32_t tie_word_embeddings, attention_bias; /* booleans */
  int32_t qk_norm; /* boolean: RMSNorm over head_dim on each query and key head before RoPE (Qwen3) */
} grpo_model_config;

typedef enum grpo_rope_type { GRPO_ROPE_DEFAULT = 0, GRPO_ROPE_LINEAR = 1, GRPO_ROPE_YARN = 2, GRPO_ROPE_LLAMA3 = 3 } grpo_rope_type;

/* RoPE scaling, Hugging Face "rope_scaling" (ABI 1.1). Zero-initialised = plain RoPE; a type ignores the fields it does not use. */
typedef struct grpo_rope_scaling {
  int32_t type;                                 /* grpo_rope_type */
  float factor;                                 /* linear, yarn, llama3: >= 1 */
  float low_freq_factor, high_freq_factor;      /* llama3 */
  int64_t original_max_position_embeddings;     /* llama3, yarn: the pre-training context */
  float beta_fast, beta_slow;                   /* yarn */
  float mscale, mscale_all_dim;                 /* yarn: the attention factor is their mscale ratio when both are > 0 */
  float attention_factor;                       /* yarn: the cos/sin scale; 0 = derived from factor (and mscale) */
  int32_t truncate;                             /* yarn: boolean, floor/ceil the correction range */
} grpo_rope_scaling;

/* A model whose parameters are all zero (to be filled by grpo_model_init or grpo_model_set_tensor). */
grpo_status grpo_model_create(const grpo_model_config* config, grpo_model** out);
/* grpo_model_create with RoPE scaling (rope NULL: plain RoPE). ABI 1.1. */
grpo_status grpo_model_create_scaled(const grpo_model_config* config, const grpo_rope_scaling* rope, grpo_model** out);
/* Parameters drawn from N(0, 0.02²) (norm weights 1, biases 0), keyed by seed only: same seed, same bits. */
grpo_status grpo_model_init(grpo_model* model, uint64_t seed);
/* A copy of the parameters (no gradients, optimizer state or activations). */
grpo_status grpo_model_clone(const grpo_model* model, grpo_model** out);
void grpo_model_destroy(grpo_model* model);

int64_t grpo_model_num_parameters(const grpo_model* model);
int64_t grpo_model_num_tensors(const grpo_model* model);
/* Name and shape (ndim 1 or 2) of tensor `index`; name stays valid while the model lives. */
grpo_status grpo_model_tensor_info(const grpo_model* model, int64_t index, const char** name, int64_t* ndim,
                                   int64_t shape[2]);
/* Copies between a caller buffer of exactly `numel` floats and the named parameter tensor. */
grpo_status grpo_model_get_tensor(const grpo_model* model, const char* name, float* out, int64_t numel);
grpo_status grpo_model_set_tensor(grpo_model* model, const char* name, const float* values, int64_t numel);

/* Dense layers (q/k/v/o, MLP) multiply bfloat16-rounded inputs with float32 sums where the CPU has
 * AVX512_BF16 (about twice as fast); attention and the LM head stay float32. Off by default. */
grpo_status grpo_model_set_bf16_matmuls(grpo_model* model, int32_t enabled);

/* Per-layer activation recomputation of training scores (ABI 1.3; the CPU model only). On, a training score keeps
 * only each decoder layer's input [T, hidden] (and the final norm's input) instead of every activation of every layer,
 * and grpo_model_backward recomputes each layer's activations from its input, layer by layer from the last, into one
 * reused set: about one more forward of compute for a layer's activations instead of all the layers'. Gradients are
 * bitwise those without it (the same code on the same inputs; LoRA dropout masks are redrawn from the same key).
 * The recomputation reads the parameters at backward time. Changing the setting drops the last training score's
 * activations (a backward then needs a new one). Off by default. */
grpo_status grpo_model_set_recompute(grpo_model* model, int32_t enabled);

typedef struct grpo_score_options {
  float temperature;    /* > 0 */
  int32_t ignore_index; /* target meaning "no score here" */
} grpo_score_options;

/* logp [T], entropy [T] or NULL. When `train` is set the activations are kept for grpo_model_backward. */
grpo_status grpo_model_score(grpo_model* model, const int32_t* tokens, const int64_t* seq_offsets, int64_t nseq,
                             const int32_t* targets, const grpo_score_options* options, int32_t train, float* logp,
                             float* entropy);
/* Full logits [T, vocab] (tests and fixtures; memory grows with T·vocab). */
grpo_status grpo_model_logits(grpo_model* model, const int32_t* tokens, const int64_t* seq_offsets, int64_t nseq,
                              float* logits);
/* Backward of the last training score: grad_logp [T], grad_entropy [T] or NULL. Adds into the gradients. */
grpo_status grpo_model_backward(grpo_model* model, const float* grad_logp, const float* grad_entropy);
grpo_status grpo_model_zero_grad(grpo_model* model);

typedef struct grpo_adamw_options {
  float lr, beta1, beta2, eps, weight_decay;
  float max_grad_norm; /* <= 0: no clipping */
} grpo_adamw_options;

/* One AdamW step on the accumulated gradients (then zeroed). grad_norm: the global L2 norm before clipping. */
grpo_status grpo_model_adamw_step(grpo_model* model, const grpo_adamw_options* options, float* grad_norm);
/* Optimizer state: m and v [num_parameters] each plus the step count (copies in or out). */
grpo_status grpo_model_get_optimizer(const grpo_model* model, float* m, float* v, int64_t* step);
grpo_status grpo_model_set_optimizer(grpo_model* model, const float* m, const float* v, int64_t step);

/* LoRA adapters (ABI 1.2; the CPU model only). Target modules of every decoder layer, as bits of `targets`. */
typedef enum grpo_lora_module {
  GRPO_LORA_Q = 1, GRPO_LORA_K = 2, GRPO_LORA_V = 4, GRPO_LORA_O = 8, GRPO_LORA_GATE = 16, GRPO_LORA_UP = 32, GRPO_LORA_DOWN = 64
} grpo_lora_module;

/* The type a frozen base keeps its decoder-layer matrices in (grpo_lora_config.base16). */
typedef enum grpo_base16 {
  GRPO_BASE16_NONE = 0, /* float32 */
  GRPO_BASE16_BF16 = 1, /* bfloat16 */
  GRPO_BASE16_F16 = 2   /* IEEE float16 (ABI 1.4) */
} grpo_base16;

typedef struct grpo_lora_config {
  int64_t rank;     /* r >= 1 */
  float scale;      /* the factor on B·A: lora_alpha / r (or lora_alpha / sqrt(r) for rsLoRA), > 0 */
  float dropout;    /* probability in [0, 1) of zeroing an adapter input element in a training score */
  uint32_t targets; /* grpo_lora_module bits, at least one */
  uint64_t seed;    /* keys A's initialisation and the dropout masks */
  int32_t base16;   /* grpo_base16: keep the frozen base's decoder-layer matrices (q/k/v/o/gate/up/down) in bfloat16 or
                     * float16, rounded to nearest even (lossless for a checkpoint stored in that type) and widened exactly
                     * to float32 where each product uses them: the same results in half their memory. grpo_model_init is
                     * then refused, and so is a tensor value beyond the type's range (GRPO_ERR_VALUE_RANGE: in
                     * set_tensor, or in the attach itself, which then leaves the model without adapters). Named
                     * base_bf16 (0 or 1) before ABI 1.4: same offset, same values. */
} grpo_lora_config;

/* Adds adapters: every target module's y = x·W^T + b becomes y + scale · dropout(x)·A^T·B^T, with A [r, in] drawn
 * from PEFT's kaiming-uniform (a = sqrt(5): U(-1/sqrt(in), 1/sqrt(in))) keyed by seed and B [out, r] zero. From then on
 * the base (and the LM head and embeddings) is frozen: backward computes gradients of A and B only, the base gets
 * no gradient buffers, and grpo_model_adamw_step updates the adapters. Their tensors are read and written by
 * grpo_model_get_tensor / set_tensor under PEFT's names without its prefix:
 * "model.layers.{i}.self_attn.q_proj.lora_A.weight" [r, in], "….lora_B.weight" [out, r] ("mlp." for gate/up/down).
 * Once per model (GRPO_ERR_INVALID_ARGUMENT the second time). Dropout masks are keyed by (seed, optimizer step,
 * training scores since that step), so a run resumed from its optimizer state draws the same masks. */
grpo_status grpo_model_lora_attach(grpo_model* model, const grpo_lora_config* config);
/* Switches the adapters off (0) or on: off, every call computes the base exactly (the KL reference). */
grpo_status grpo_model_lora_set_enabled(grpo_model* model, int32_t enabled);
/* Number of adapter parameters (0 without adapters). */
int64_t grpo_model_lora_num_parameters(const grpo_model* model);
/* The adapters' AdamW moments, m and v [grpo_model_lora_num_parameters] each, and the step count. */
grpo_status grpo_model_lora_get_optimizer(const grpo_model* model, float* m, float* v, int64_t* step);
grpo_status grpo_model_lora_set_optimizer(grpo_model* model, const float* m, const float* v, int64_t step);

typedef struct grpo_generate_options {
  int64_t max_new_tokens;
  /* The sampler's per-row parameters (grpo/sampling.h) with rows = nseq. The model sets `step` to the
   * decoding step and, when a penalty is set, `history` to each row's prompt + completion so far. */
  const grpo_sampling_params* sampling;
  const int32_t* stop_tokens; /* a row ends after sampling any of these (kept in the output) */
  int64_t num_stop_tokens;
} grpo_generate_options;

/* Batched generation with a KV cache; every step samples all rows with grpo_sample (row = sequence index).
 * prompts packed like tokens above. out_tokens, out_logp [nseq, max_new_tokens] (rows padded with -1 / 0
 * past out_lengths[s]); out_logp is the sampler's logp_raw (log-softmax of the penalised logits / temperature
 * at the drawn token), or log-softmax(logits) at the argmax for greedy rows;
 * truncated[s] = 1 when row s hit max_new_tokens (or the context) without a stop token. */
grpo_status grpo_model_generate(grpo_model* model, const int32_t* prompts, const int64_t* prompt_offsets, int64_t nseq,
                                const grpo_generate_options* options, int32_t* out_tokens, float* out_logp,
                                int64_t* out_lengths, uint8_t* truncated);

#ifdef __cplusplus
}
#endif

#endif /* GRPO_MODEL_H */
