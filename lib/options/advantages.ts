// The options of groupAdvantages and rankAdvantages (lib/kernels/advantage.ts), declared once.
import { choice, defaultsOf, device, integer, number, opaque, type OptionsOf } from './schema.js';

export const SCALES = ['group', 'batch', 'none'] as const;
export const SINGLETONS = ['zero', 'raw', 'nan'] as const;
export const NAN_POLICIES = ['exclude', 'asZero'] as const;
export const MULTI_OBJECTIVE = ['sumThenNormalize', 'normalizeThenSum'] as const;

/** How rewards are normalised inside a group. Every option names what it reproduces. */
export const NORMALIZE_OPTIONS = {
  scale: choice(SCALES, 'group', '`"group"`: (r − group mean) / (group std + ε) (TRL `"group"`, verl `norm_adv_by_std_in_grpo`); '
    + '`"batch"`: group mean, std of the whole batch (TRL `"batch"`); `"none"`: r − group mean (Dr. GRPO).'),
  stdEpsilon: number(1e-4, 'Added to the std (not the variance): TRL / Rank-GRPO 1e-4, verl 1e-6, OpenRLHF 1e-9.'),
  singletonGroup: choice(SINGLETONS, 'zero', 'A group with fewer than two scorable rewards: `"zero"` gives A = 0 (TRL), `"raw"` uses '
    + 'mean 0 and std 1 (verl), `"nan"` gives NaN (torch.std of one value: Rank-GRPO, OpenRLHF).'),
  nanRewards: choice(NAN_POLICIES, 'exclude', 'NaN rewards: `"exclude"` from the statistics with A = 0 (TRL HEAD), or `"asZero"` (TRL ≤ 0.21, Rank-GRPO).'),
  device: device(),
};

/** Options of groupAdvantages: rewards [B] or [B, R]. */
export const GROUP_ADVANTAGE_OPTIONS = {
  ...NORMALIZE_OPTIONS,
  groupSize: integer(8, 'Rows per group, contiguous (TRL `view(-1, G)`); ignored when `groupIds` is given.', 1),
  groupIds: opaque<Int32Array>('Int32Array [B]', 'Group id per row in [0, number of groups) (verl `uid`): any order, any group sizes.'),
  objectives: integer(1, 'R: rewards is [B, R] with one column per reward function.', 1),
  rewardWeights: opaque<ArrayLike<number>>('finite numbers [R]', 'Weight per reward function (TRL `reward_weights`), also with one function.', 'all 1'),
  multiObjective: choice(MULTI_OBJECTIVE, 'sumThenNormalize', '`"sumThenNormalize"`: weighted nansum, then normalise (TRL default); '
    + '`"normalizeThenSum"`: normalise each function per group, weighted nansum, then always normalise over the batch (TRL GDPO; '
    + '`scale` is not used). Either way a row whose rewards are all NaN is unscorable: it leaves every statistic and gets A = 0, '
    + 'and the stats\' `rewardMean` / `rewardStd` are those of the weighted raw sum.'),
};

/** Options of rankAdvantages: rewards [G, S, K]. */
export const RANK_ADVANTAGE_OPTIONS = {
  ...NORMALIZE_OPTIONS,
  candidates: integer(undefined, 'S, the candidates (completions) per group.', 1, undefined, { required: true, defaultDoc: 'required' }),
  ranks: integer(undefined, 'K, the rank positions per candidate.', 1, undefined, { required: true, defaultDoc: 'required' }),
};

export type NormalizeOptions = OptionsOf<typeof NORMALIZE_OPTIONS>;
export type GroupAdvantageOptions = OptionsOf<typeof GROUP_ADVANTAGE_OPTIONS>;
export type RankAdvantageOptions = OptionsOf<typeof RANK_ADVANTAGE_OPTIONS> & { candidates: number; ranks: number };

/** The defaults: TRL HEAD behaviour. */
export const ADVANTAGE_DEFAULTS = defaultsOf(GROUP_ADVANTAGE_OPTIONS);
