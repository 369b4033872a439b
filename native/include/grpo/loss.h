/* The clipped GRPO policy loss family with its analytic backward (dL/dlogp), reproducing
 * TRL, verl, OpenRLHF and Rank-GRPO (../shared/reference/grpo-implementations.md §1.4–1.8, §2.2–2.4, §4.8).
 *
 * Four independent choices, one field each: the surrogate (loss type), the importance-sampling
 * level, the KL estimator, and the aggregation with its token-count scope.
 *
 * Shapes (row-major): logp, old_logp, ref_logp, mask, segments, entropy, grad_logp [rows, cols];
 * advantages [rows, cols] or [rows]. mask is 0/1. Masked-out tokens get a zero gradient and are
 * never read for their values, so padding may hold anything finite or not.
 */
#ifndef GRPO_LOSS_H
#define GRPO_LOSS_H

#include "grpo/grpo.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum grpo_loss_type {
  GRPO_LOSS_CLIP = 0,        /* -min(r·A, clamp(r, 1-εl, 1+εh)·A) (+TRL delta, +verl dual clip): TRL grpo/bnpo/dr_grpo/dapo/luspo, verl vanilla/gspo */
  GRPO_LOSS_CISPO_CAP = 1,   /* -sg(min(r, cap))·A·logp (TRL cispo) */
  GRPO_LOSS_CISPO_CLAMP = 2, /* -sg(clamp(r, 1-εl, 1+εh))·A·logp (verl cispo) */
  GRPO_LOSS_SAPO = 3,        /* -σ(τ(r-1))·4/τ·A, τ = τ+ if A>0 else τ- (TRL, verl sapo) */
  GRPO_LOSS_VESPO = 4,       /* -φ·A·logp, φ = exp(λ + k·log w - λ·w) per sequence (TRL vespo) */
  GRPO_LOSS_GPG = 5,         /* -A·logp (verl gpg) */
  GRPO_LOSS_GEO_MEAN = 6,    /* GMPO: -A_i·exp(mean of sign-clipped log-ratios), mean over rows (verl geo_mean) */
  GRPO_LOSS_NONE = 7         /* no policy term: the aggregated KL term alone (verl agg_loss(kl_penalty(...))) */
} grpo_loss_type;

typedef enum grpo_is_level {
  GRPO_IS_TOKEN = 0,          /* r_t = exp(logp_t - old_t) */
  GRPO_IS_SEQUENCE = 1,       /* r_i = exp(mean_t(logp - old)), gradient through the mean (TRL GSPO) */
  GRPO_IS_SEQUENCE_TOKEN = 2, /* value of SEQUENCE, gradient per token (verl gspo, TRL gspo_token) */
  GRPO_IS_ITEM = 3            /* r = exp(mean over the item's tokens), items from segments (Rank-GRPO) */
} grpo_is_level;

typedef enum grpo_kl_estimator { GRPO_KL_K1 = 0, GRPO_KL_ABS = 1, GRPO_KL_K2 = 2, GRPO_KL_K3 = 3 } grpo_kl_estimator;

typedef enum grpo_kl_clamp {
  GRPO_KL_CLAMP_NONE = 0,    /* TRL */
  GRPO_KL_CLAMP_VERL = 1,    /* k3 only: log-ratio in [-20, 20], value in [-10, 10] */
  GRPO_KL_CLAMP_OPENRLHF = 2 /* every estimator's value in [-10, 10] */
} grpo_kl_clamp;

typedef enum grpo_aggregation {
  GRPO_AGG_GLOBAL_TOKEN_MEAN = 0,    /* Σ m·ℓ / token_count (TRL dapo/cispo/vespo, verl engine token-mean); not divided by accumulation_steps */
  GRPO_AGG_LOCAL_TOKEN_MEAN = 1,     /* Σ m·ℓ / Σ m of this call (TRL bnpo, verl legacy token-mean) */
  GRPO_AGG_SEQ_MEAN_TOKEN_MEAN = 2,  /* Σ_i (Σ_t m·ℓ / max(Σ_t m, 1)) / sequence_count (TRL grpo/sapo) */
  GRPO_AGG_SEQ_MEAN_TOKEN_SUM = 3,   /* Σ_i Σ_t m·ℓ / sequence_count (verl; TRL luspo with sequence IS) */
  GRPO_AGG_TOKEN_SUM_OVER_BL = 4,    /* Σ m·ℓ / (sequence_count · max_completion_length) (TRL dr_grpo) */
  GRPO_AGG_TOKEN_SUM_OVER_L = 5,     /* Σ m·ℓ / loss_scale_factor (verl seq-mean-token-sum-norm) */
  GRPO_AGG_ALL_POSITIONS_LENGTH_WEIGHTED = 6 /* Σ over all B·T positions, padding included, of ℓ·(Σ_t m) / (sequence_count·cols):
                                                TRL luspo's mean when its per-token loss is [B, T]; padding's logp, old, ref and
                                                advantage are read (must be finite) and get a gradient; not at the item level */
} grpo_aggregation;

typedef struct grpo_surrogate {
  int32_t type;            /* grpo_loss_type */
  double epsilon_low;      /* clip range [1 - epsilon_low, 1 + epsilon_high] */
  double epsilon_high;
  double delta;            /* TRL delta: r := min(r, delta) after the clamp is formed; 0 = off */
  double dual_clip_c;      /* verl clip_ratio_c: for A < 0 the loss is at most -A·c; 0 = off */
  double log_ratio_clamp;  /* log r clamped to [-x, x] before exp (verl/OpenRLHF 20); 0 = off */
  double cispo_cap;        /* GRPO_LOSS_CISPO_CAP: absolute cap of r */
  double sapo_tau_pos, sapo_tau_neg;
  double vespo_k_pos, vespo_lambda_pos, vespo_k_neg, vespo_lambda_neg;
} grpo_surrogate;

typedef struct grpo_kl_options {
  int32_t estimator;       /* grpo_kl_estimator */
  int32_t clamp;           /* grpo_kl_clamp */
  int32_t bias_correction; /* TRL use_bias_correction_kl: KL·r (gradient through r) */
  double beta;             /* 0 = no KL term (ref_logp may be NULL) */
  int32_t k2_gradient;     /* verl "k1+", "k3+", "low_var_kl+": this estimator's value, the k2 gradient (logp - ref) */
} grpo_kl_options;

typedef struct grpo_aggregate_options {
  int32_t mode;                  /* grpo_aggregation */
  int32_t empty_is_nan;          /* no token in the mask: loss NaN (verl) instead of 0 (TRL clamps counts at 1) */
  double token_count;            /* GLOBAL_TOKEN_MEAN denominator, e.g. TRL num_items_in_batch / processes; 0 = Σ mask of this call */
  double sequence_count;         /* sequences in the mean; 0 = rows of this call */
  double max_completion_length;  /* TOKEN_SUM_OVER_BL */
  double loss_scale_factor;      /* TOKEN_SUM_OVER_L; 0 = cols */
  double accumulation_steps;     /* every mode but GLOBAL_TOKEN_MEAN is divided by it (TRL ÷ GA); >= 1 */
} grpo_aggregate_options;

typedef struct grpo_loss_options {
  grpo_surrogate surrogate;
  int32_t is_level;              /* grpo_is_level */
  int32_t num_items;             /* GRPO_IS_ITEM: K; segments >= K share one overflow ratio */
  grpo_kl_options kl;
  grpo_aggregate_options aggregate;
  double top_entropy_quantile;   /* < 1: the policy term keeps only tokens with entropy >= the (1 - q) quantile (needs entropy) */
} grpo_loss_options;

/* Token-weighted means are over the masked tokens of this call. At GRPO_IS_SEQUENCE with [rows]
 * advantages (not GEO_MEAN) the three clip ratios are means over the rows of each row's flag, as TRL
 * logs a [B, 1] coef_1. */
typedef struct grpo_loss_stats {
  double loss;              /* the aggregated loss (policy + beta·KL) */
  double policy_loss;       /* the aggregated policy term alone */
  double kl_mean;           /* mean KL per token (TRL "kl"), KL·r with bias_correction as TRL logs it; NaN without ref_logp */
  double clip_ratio_low;    /* TRL clip_ratio/low_mean: r < 1-εl and A < 0 */
  double clip_ratio_high;   /* TRL clip_ratio/high_mean: r > 1+εh and A > 0 (CISPO: r above the cap, A > 0) */
  double clip_ratio_region; /* either of the two */
  double dual_clip_ratio;   /* verl pg_clipfrac_lower: tokens held by the dual clip */
  double ratio_mean, ratio_min, ratio_max;
  double entropy_mean;      /* NaN without entropy */
  double ppo_kl;            /* verl ppo_kl: mean(-log r), log r clamped by log_ratio_clamp at GRPO_IS_TOKEN (verl ±20) */
  double tokens;            /* Σ mask */
  double phi_seq_mean;      /* GRPO_LOSS_VESPO: TRL vespo/phi_seq_mean, the mean of φ over rows ([rows] advantages) or
                               masked tokens ([rows, cols]); NaN for other types */
} grpo_loss_stats;

/* advantages_per_token: 1 when advantages is [rows, cols], 0 when it is [rows].
 * old_logp NULL = on-policy (ratio exactly 1, old = sg(logp)); ref_logp may be NULL when kl.beta == 0;
 * segments is needed for GRPO_IS_ITEM, entropy for top_entropy_quantile < 1 (else both may be NULL).
 * grad_logp receives dloss/dlogp. */
grpo_status grpo_policy_loss(const float* logp, const float* old_logp, const float* ref_logp, const float* advantages,
                             int32_t advantages_per_token, const uint8_t* mask, const int32_t* segments,
                             const float* entropy, int64_t rows, int64_t cols, const grpo_loss_options* options,
                             float* grad_logp, grpo_loss_stats* stats);

#ifdef __cplusplus
}
#endif

#endif /* GRPO_LOSS_H */
