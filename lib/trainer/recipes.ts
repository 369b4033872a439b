// The six recipes: presets over the trainer defaults that a user overrides field by field.
import { GrpoError } from '../errors.js';
import type { SamplerUnit } from '../data/samplers.js';
import type { NormalizeOptions } from '../kernels/advantage.js';
import type { PolicyLossOptions } from '../kernels/loss.js';
import * as presets from '../kernels/presets.js';
import type { Preset } from '../kernels/presets.js';
import type { TokenAdvantageOptions } from '../kernels/token-advantages.js';
import type { RankTarget } from '../rewards/recommend.js';
import { mergeConfig, RECIPE_NAMES, TRAINER_DEFAULTS, type ConfigInput, type RecipeName, type TaskKind, type TrainerConfig } from './config.js';

export type { TaskKind } from './config.js';

/** The tasks of the rank-wise recipes (a list per prompt, an advantage per rank) and of the group-wise ones (CCR). */
const RANKED_TASKS: readonly TaskKind[] = ['recommend', 'qa'];
const MATH_TASKS: readonly TaskKind[] = ['math'];

export interface Recipe {
  name: RecipeName;
  /** The tasks the recipe trains on; the first is its own (config `task: "recipe"`). */
  tasks: readonly TaskKind[];
  /** What one sampler draw is: a (request, respondent) row or a request. */
  unit: SamplerUnit;
  /** Recommendation: whose items are the ground truth. */
  target?: RankTarget;
  /** Overrides of the trainer defaults (loss preset included). */
  defaults: ConfigInput;
  /** What the recipe reproduces, in one line. */
  reproduces: string;
}

/** The trainer options that reproduce `preset` whole: its loss, its advantage normalisation and its length shaping. */
export function presetDefaults(preset: Preset): ConfigInput {
  const { scale, stdEpsilon, singletonGroup, nanRewards } = preset.advantages;
  const shaping = preset.tokenAdvantages?.lengthShaping;
  const advantages = { scale, stdEpsilon, singletonGroup, nanRewards, ...(shaping && {
    lengthShaping: shaping.enabled, endOfList: shaping.endOfList, extraToken: shaping.extraToken, earlyStop: shaping.earlyStop,
  }) };
  const defined = Object.fromEntries(Object.entries(advantages).filter(([, v]) => v !== undefined));
  return { loss: preset.loss, advantages: defined as ConfigInput['advantages'] };
}

/**
 * The recommendation recipes: Rank-GRPO's released settings whole (presets.remark = presets.rankGrpo: TRL 0.21
 * group scaling with NaN rewards as 0, item-level ratios, ε 0.06 / 0.08, k3 KL with β 1e-3, Σℓ / Σmask, length
 * shaping ±0.1). The item count follows K (numItems null): overflow tokens carry segment K and share one ratio.
 */
function recommend(preset: Preset, lengthWeight: number): ConfigInput {
  const whole = presetDefaults(preset);
  return {
    ...whole,
    loss: { ...whole.loss, numItems: null },
    rewards: { lengthWeight } as ConfigInput['rewards'],
    validation: { metric: 'relevantRecall' } as ConfigInput['validation'],
  };
}

/**
 * The CCR pair: TRL's current GRPO defaults whole (group scaling ε 1e-4, clip ε 0.2, global token mean, β 0); they
 * differ only in problems per prompt, truncation policy and completion cap.
 */
function arithmetic(problems: number, truncation: 'keep' | 'dropSuffix', maxNewTokens: number): ConfigInput {
  const whole = presetDefaults(presets.trl);
  return {
    ...whole,
    rewards: { problems } as ConfigInput['rewards'],
    advantages: { ...whole.advantages, truncation } as ConfigInput['advantages'],
    generation: { maxNewTokens } as ConfigInput['generation'],
    validation: { metric: 'accuracy' } as ConfigInput['validation'],
  };
}

export const RECIPES: Readonly<Record<RecipeName, Recipe>> = Object.freeze({
  'rank-grpo': {
    name: 'rank-grpo', tasks: RANKED_TASKS, unit: 'rows', target: 'respondent', defaults: recommend(presets.rankGrpo, 0),
    reproduces: 'Rank-GRPO: rows sampled uniformly (requests weighted by their respondent count), rewards from the drawn respondent, rank-wise advantages, item-level ratios',
  },
  'rank-grpo-requests': {
    name: 'rank-grpo-requests', tasks: RANKED_TASKS, unit: 'requestRespondent', target: 'respondent', defaults: recommend(presets.rankGrpo, 0),
    reproduces: 'ReMaRk\'s sampling ablation: requests sampled uniformly, rewards from one respondent drawn uniformly per draw, otherwise Rank-GRPO (isolates the sampling change)',
  },
  remark: {
    name: 'remark', tasks: RANKED_TASKS, unit: 'requests', target: 'union', defaults: recommend(presets.remark, 1),
    reproduces: 'ReMaRk: requests sampled uniformly, rewards against the union of all respondents, rank-wise advantages, the Rank-GRPO loss',
  },
  'remark-mean': {
    name: 'remark-mean', tasks: RANKED_TASKS, unit: 'requests', target: 'mean', defaults: recommend(presets.remark, 1),
    reproduces: 'ReMaRk ablation: requests sampled uniformly, rewards averaged over respondents (items named by more respondents are worth more)',
  },
  ccr: {
    name: 'ccr', tasks: MATH_TASKS, unit: 'requests', defaults: arithmetic(3, 'dropSuffix', 192),
    reproduces: 'CCR: N = 3 problems packed per prompt under one shared cap, R = 2·accuracy + 1·format with every answer before the cap credited, group advantages, only the unfinished suffix of an answered completion dropped from the loss (one capped before any answer keeps its row)',
  },
  grpo: {
    name: 'grpo', tasks: MATH_TASKS, unit: 'requests', defaults: arithmetic(1, 'keep', 96),
    reproduces: 'GRPO baseline of CCR: one problem per prompt with its own cap, the same reward and group advantages, truncated completions kept (TRL default)',
  },
});

/** The recipe named `name`, or a typed error listing the recipes. */
export function recipeOf(name: string): Recipe {
  if (!(RECIPE_NAMES as readonly string[]).includes(name)) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Unknown recipe "${name}"; expected one of ${RECIPE_NAMES.join(', ')}`);
  }
  return RECIPES[name as RecipeName];
}

/** The task a config trains on (`task: "recipe"` = its recipe's own), or a typed error when its recipe cannot train it. */
export function taskOf(config: Pick<TrainerConfig, 'recipe' | 'task'>): TaskKind {
  const { tasks, name } = recipeOf(config.recipe);
  if (config.task === 'recipe') return tasks[0];
  if (!tasks.includes(config.task)) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `config "task": recipe "${name}" trains on ${tasks.map((t) => `"${t}"`).join(' or ')} but received "${config.task}"`);
  }
  return config.task;
}

/**
 * What a task sets over the recipe's preset when a run names it: QA lists are scored at K = 10 (ProtoQA's
 * recall@10) and the best checkpoint is the one of highest recall per respondent.
 */
const TASK_DEFAULTS: Readonly<Partial<Record<TaskKind, ConfigInput>>> = Object.freeze({
  qa: { rewards: { ranks: 10 } as ConfigInput['rewards'], validation: { metric: 'respondentRecall' } as ConfigInput['validation'] },
});

/**
 * The resolved config of a run: trainer defaults ← the recipe's preset ← the named task's defaults (TASK_DEFAULTS)
 * ← each layer (a JSON file, then command-line flags). The recipe and the task are read from the last layer that
 * names one (default "remark", and the recipe's own task).
 */
export function resolveConfig(...layers: readonly ConfigInput[]): TrainerConfig {
  const last = <K extends 'recipe' | 'task'>(key: K) => [...layers].reverse().find((l) => l && typeof l === 'object' && key in l)?.[key];
  const recipe = recipeOf(String(last('recipe') ?? TRAINER_DEFAULTS.recipe));
  const task = TASK_DEFAULTS[(last('task') ?? 'recipe') as TaskKind] ?? {};
  const config = mergeConfig(TRAINER_DEFAULTS, { ...recipe.defaults, recipe: recipe.name }, task, ...layers);
  taskOf(config);
  return config;
}

/** The kernel options a config resolves to: what the task and the loss receive. */
export interface ResolvedOptions {
  /** of rankAdvantages (recommendation, QA) or groupAdvantages (math) */
  advantages: NormalizeOptions;
  loss: PolicyLossOptions;
  /** of tokenAdvantages: the Rank-GRPO scatter with its length shaping (recommendation, QA), or the CCR truncation policy (math) */
  tokenAdvantages: TokenAdvantageOptions;
}

export function resolvedOptions(config: TrainerConfig): ResolvedOptions {
  const a = config.advantages;
  const tokenAdvantages: TokenAdvantageOptions = taskOf(config) !== 'math'
    ? { ranks: config.rewards.ranks, lengthShaping: { enabled: a.lengthShaping, endOfList: a.endOfList, extraToken: a.extraToken, earlyStop: a.earlyStop } }
    : { truncation: a.truncation };
  return {
    advantages: { scale: a.scale, stdEpsilon: a.stdEpsilon, singletonGroup: a.singletonGroup, nanRewards: a.nanRewards },
    loss: config.loss,
    tokenAdvantages,
  };
}
