#include "config.h"

#include <cmath>

#include "runtime/error.h"

namespace grpo::model {

namespace {

void positive(const char* name, int64_t value, int64_t max) {
  if (value < 1 || value > max)
    fail(GRPO_ERR_VALUE_RANGE, "config %s must be in [1, %lld] (got %lld)", name, static_cast<long long>(max),
         static_cast<long long>(value));
}

void finite_at_least(const char* name, float value, float min) {
  if (!(value >= min) || !std::isfinite(value)) fail(GRPO_ERR_VALUE_RANGE, "config rope_scaling %s must be finite and >= %g (got %g)", name, min, value);
}

// Checks the fields the type uses (the others are ignored).
RopeScaling make_rope_scaling(const grpo_rope_scaling& c) {
  RopeScaling r;
  if (c.type < GRPO_ROPE_DEFAULT || c.type > GRPO_ROPE_LLAMA3)
    fail(GRPO_ERR_VALUE_RANGE, "config rope_scaling type must be in [0, 3] (got %d)", c.type);
  r.type = static_cast<grpo_rope_type>(c.type);
  if (r.type == GRPO_ROPE_DEFAULT) return r;
  finite_at_least("factor", c.factor, 1.0f);
  r.factor = c.factor;
  if (r.type == GRPO_ROPE_LINEAR) return r;
  positive("rope_scaling original_max_position_embeddings", c.original_max_position_embeddings, int64_t{1} << 24);
  r.original_max_positions = c.original_max_position_embeddings;
  if (r.type == GRPO_ROPE_LLAMA3) {
    finite_at_least("low_freq_factor", c.low_freq_factor, 0.0f);
    finite_at_least("high_freq_factor", c.high_freq_factor, 0.0f);
    if (!(c.high_freq_factor > c.low_freq_factor) || !(c.low_freq_factor > 0.0f))
      fail(GRPO_ERR_VALUE_RANGE, "config rope_scaling needs 0 < low_freq_factor < high_freq_factor (got %g, %g)",
           c.low_freq_factor, c.high_freq_factor);
    r.low_freq_factor = c.low_freq_factor;
    r.high_freq_factor = c.high_freq_factor;
    return r;
  }
  finite_at_least("beta_fast", c.beta_fast, 0.0f);
  finite_at_least("beta_slow", c.beta_slow, 0.0f);
  finite_at_least("mscale", c.mscale, 0.0f);
  finite_at_least("mscale_all_dim", c.mscale_all_dim, 0.0f);
  finite_at_least("attention_factor", c.attention_factor, 0.0f);
  if (!(c.beta_fast > 0.0f) || !(c.beta_slow > 0.0f))
    fail(GRPO_ERR_VALUE_RANGE, "config rope_scaling beta_fast and beta_slow must be > 0 (got %g, %g)", c.beta_fast, c.beta_slow);
  r.beta_fast = c.beta_fast;
  r.beta_slow = c.beta_slow;
  r.mscale = c.mscale;
  r.mscale_all_dim = c.mscale_all_dim;
  r.attention_factor = c.attention_factor;
  r.truncate = c.truncate != 0;
  return r;
}

}  // namespace

Config make_config(const grpo_model_config& c, const grpo_rope_scaling* rope) {
  positive("vocab_size", c.vocab_size, int64_t{1} << 24);
  positive("hidden_size", c.hidden_size, 65536);
  positive("intermediate_size", c.intermediate_size, 1 << 20);
  positive("num_hidden_layers", c.num_hidden_layers, 1024);
  positive("num_attention_heads", c.num_attention_heads, 1024);
  positive("num_key_value_heads", c.num_key_value_heads, c.num_attention_heads);
  positive("head_dim", c.head_dim, 4096);
  positive("max_position_embeddings", c.max_position_embeddings, int64_t{1} << 24);
  if (c.num_attention_heads % c.num_key_value_heads != 0)
    fail(GRPO_ERR_VALUE_RANGE, "config num_attention_heads (%lld) must be a multiple of num_key_value_heads (%lld)",
         static_cast<long long>(c.num_attention_heads), static_cast<long long>(c.num_key_value_heads));
  if (c.head_dim % 2 != 0) fail(GRPO_ERR_VALUE_RANGE, "config head_dim must be even (got %lld)", static_cast<long long>(c.head_dim));
  if (!(c.rms_norm_eps > 0.0f) || !std::isfinite(c.rms_norm_eps))
    fail(GRPO_ERR_VALUE_RANGE, "config rms_norm_eps must be finite and > 0 (got %g)", c.rms_norm_eps);
  if (!(c.rope_theta > 1.0f) || !std::isfinite(c.rope_theta))
    fail(GRPO_ERR_VALUE_RANGE, "config rope_theta must be finite and > 1 (got %g)", c.rope_theta);
  Config m;
  m.vocab = c.vocab_size;
  m.hidden = c.hidden_size;
  m.intermediate = c.intermediate_size;
  m.layers = c.num_hidden_layers;
  m.heads = c.num_attention_heads;
  m.kv_heads = c.num_key_value_heads;
  m.head_dim = c.head_dim;
  m.max_positions = c.max_position_embeddings;
  m.eps = c.rms_norm_eps;
  m.rope_theta = c.rope_theta;
  if (rope) m.rope_scaling = make_rope_scaling(*rope);
  m.tie_embeddings = c.tie_word_embeddings != 0;
  m.qkv_bias = c.attention_bias != 0;
  m.qk_norm = c.qk_norm != 0;
  return m;
}

}  // namespace grpo::model
