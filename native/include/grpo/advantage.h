/* Advantages: group-normalised outcome rewards (TRL / verl / OpenRLHF), rank-wise advantages
 * (Rank-GRPO), and their scatter onto tokens.
 *
 * Statistics are computed in double precision, ddof = 1, epsilon added to the standard deviation.
 * NaN rewards are legal (an unscorable completion); +-Infinity is GRPO_ERR_NON_FINITE.
 */
#ifndef GRPO_ADVANTAGE_H
#define GRPO_ADVANTAGE_H

#include "grpo/grpo.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum grpo_adv_scale {
  GRPO_ADV_SCALE_GROUP = 0, /* (r - group mean) / (group std + eps)            TRL "group", verl norm_adv_by_std */
  GRPO_ADV_SCALE_BATCH = 1, /* (r - group mean) / (std of the whole batch + eps) TRL "batch" */
  GRPO_ADV_SCALE_NONE = 2   /* r - group mean                                   Dr. GRPO */
} grpo_adv_scale;

typedef enum grpo_adv_singleton {
  GRPO_ADV_SINGLETON_ZERO = 0, /* a group with < 2 scorable rewards gets A = 0 (TRL) */
  GRPO_ADV_SINGLETON_RAW = 1,  /* mean 0, std 1: A = r / (1 + eps) or r (verl) */
  GRPO_ADV_SINGLETON_NAN = 2   /* A = NaN (torch.std of one value: Rank-GRPO, OpenRLHF) */
} grpo_adv_singleton;

typedef enum grpo_adv_nan {
  GRPO_ADV_NAN_EXCLUDE = 0, /* NaN rewards leave the statistics and get A = 0 (TRL HEAD) */
  GRPO_ADV_NAN_AS_ZERO = 1  /* NaN rewards count as 0 (TRL <= 0.21, Rank-GRPO) */
} grpo_adv_nan;

typedef struct grpo_advantage_options {
  int32_t scale;     /* grpo_adv_scale */
  int32_t singleton; /* grpo_adv_singleton */
  int32_t nan_rewards; /* grpo_adv_nan */
  double std_epsilon;  /* >= 0, added to the std */
} grpo_advantage_options;

typedef struct grpo_advantage_stats {
  double reward_mean;         /* mean of the scorable rewards */
  double reward_std;          /* std (ddof 1) of the scorable rewards over the whole batch */
  double frac_zero_std;       /* fraction of samples whose scaling std is ~0 (TRL frac_reward_zero_std) */
  double frac_cells_equal;    /* rank-wise only: fraction of (group, rank) cells whose rewards are all equal */
  double frac_cells_zero;     /* rank-wise only: fraction of (group, rank) cells whose rewards are all 0 */
} grpo_advantage_stats;

/* rewards [n] -> advantages [n]. Groups are contiguous runs of group_size rows when group_ids is NULL,
 * otherwise group_ids [n] holds a group index in [0, num_groups) per row (any order, any sizes). */
grpo_status grpo_group_advantages(const float* rewards, int64_t n, int64_t group_size, const int32_t* group_ids,
                                  int64_t num_groups, const grpo_advantage_options* options, float* advantages,
                                  grpo_advantage_stats* stats);

/* rewards [groups, candidates, ranks] -> advantages of the same shape, normalised per (group, rank)
 * across the candidates (Rank-GRPO). */
grpo_status grpo_rank_advantages(const float* rewards, int64_t groups, int64_t candidates, int64_t ranks,
                                 const grpo_advantage_options* options, float* advantages, grpo_advantage_stats* stats);

typedef struct grpo_length_shaping {
  int32_t enabled;
  float end_of_list;  /* added at the EOS of a row that emitted exactly K items (Rank-GRPO +0.1) */
  float extra_token;  /* added on every overflow token (segment >= K) (-0.1) */
  float early_stop;   /* added at the EOS of a row that emitted fewer than K items (-0.1) */
} grpo_length_shaping;

/* Rank-GRPO token advantages: out[b,t] = item_advantages[b, segments[b,t]] where mask[b,t] and
 * 0 <= segments[b,t] < ranks and t != eos_positions[b]; 0 elsewhere; then length shaping.
 * item_advantages [rows, ranks]; segments [rows, cols] (-1 = none); mask [rows, cols] (0/1);
 * eos_positions [rows] (the EOS token's column, or -1 when the row was truncated). */
grpo_status grpo_scatter_item_advantages(const float* item_advantages, const int32_t* segments, const uint8_t* mask,
                                         const int32_t* eos_positions, int64_t rows, int64_t cols, int64_t ranks,
                                         const grpo_length_shaping* shaping, float* out);

typedef enum grpo_truncation {
  GRPO_TRUNCATION_KEEP = 0,          /* truncated completions keep their loss */
  GRPO_TRUNCATION_DROP = 1,          /* truncated completions leave the loss (TRL mask_truncated_completions) */
  GRPO_TRUNCATION_DROP_SUFFIX = 2    /* only tokens at or after prefix_end[b] of a truncated row leave the loss */
} grpo_truncation;

/* Sequence advantages [rows] broadcast over mask [rows, cols]: out[b,t] = advantages[b] where the
 * resulting loss mask is 1, else 0. loss_mask [rows, cols] receives the mask after the truncation policy.
 * truncated [rows] may be NULL with GRPO_TRUNCATION_KEEP; prefix_end [rows] is needed for DROP_SUFFIX. */
grpo_status grpo_broadcast_advantages(const float* advantages, const uint8_t* mask, const uint8_t* truncated,
                                      const int32_t* prefix_end, int64_t rows, int64_t cols, int32_t truncation,
                                      float* out, uint8_t* loss_mask);

#ifdef __cplusplus
}
#endif

#endif /* GRPO_ADVANTAGE_H */
