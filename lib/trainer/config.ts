// The trainer's configuration: every option with its documented default in one frozen object, and
// the validation that turns a user's JSON (file + flags) into a resolved config with clear errors.
import { DEVICES, type Device } from '../binding/index.js';
import { GrpoError } from '../errors.js';
import type { PolicyLossOptions } from '../kernels/loss.js';
import { resolveLossOptions } from '../kernels/loss.js';
import * as check from '../validate.js';

export const RECIPE_NAMES = ['rank-grpo', 'remark', 'remark-mean', 'ccr', 'grpo'] as const;
export type RecipeName = (typeof RECIPE_NAMES)[number];

/** Sampling of the S candidates of each prompt. */
export interface GenerationConfig {
  /** Completion cap in tokens (CCR: the cap shared by the N packed answers). @defaultValue 160 */
  maxNewTokens: number;
  /** @defaultValue 1 */
  temperature: number;
  /** 0 = off. @defaultValue 0 */
  topK: number;
  /** 1 = off. @defaultValue 1 */
  topP: number;
}

/** Rewards (the recipe picks which fields apply). */
export interface RewardConfig {
  /** Recommendation: K, the ranks scored. @defaultValue 20 */
  ranks: number;
  /** Recommendation: hits → rewards, `"hit"` (Rank-GRPO exp_inf) or `"dcgTail"`. @defaultValue "hit" */
  shape: 'hit' | 'dcgTail';
  /** Recommendation: largest |year difference| that still matches. @defaultValue 2 */
  yearTolerance: number;
  /** Recommendation: catalog of the notInCatalog check: the full shipped index, the benchmark films, or none. @defaultValue "full" */
  catalog: 'full' | 'benchmark' | 'none';
  /** CCR: problems packed per prompt, N (the recipe sets 3 for ccr, 1 for grpo). @defaultValue 3 */
  problems: number;
  /** CCR: weight of the accuracy term. @defaultValue 2 */
  wAcc: number;
  /** CCR: weight of the format term. @defaultValue 1 */
  wFmt: number;
  /**
   * Recommendation: weight of the length reward −min(1, |items − K| / K), added to the rank-1 reward (how Rank-GRPO's
   * `_calculate_rewards` places a scalar reward function). @defaultValue 0 (rank-grpo), 1 (remark, remark-mean)
   */
  lengthWeight: number;
}

/** Advantages (normalisation and placement on tokens). */
export interface AdvantageConfig {
  /** `"group"` std (TRL, Rank-GRPO), `"batch"` std (the ReMaRk comparison's alternative), `"none"` (Dr. GRPO). @defaultValue "group" */
  scale: 'group' | 'batch' | 'none';
  /** Added to the std. @defaultValue 1e-4 */
  stdEpsilon: number;
  /** A group with fewer than two scorable rewards: A = 0 (TRL), mean 0 / std 1 (verl) or NaN (torch.std: Rank-GRPO). @defaultValue "zero" (recommendation recipes "nan") */
  singletonGroup: 'zero' | 'raw' | 'nan';
  /** NaN rewards: excluded from the statistics (TRL HEAD) or counted as 0 (TRL 0.21, Rank-GRPO). @defaultValue "exclude" (recommendation recipes "asZero") */
  nanRewards: 'exclude' | 'asZero';
  /** Recommendation: Rank-GRPO length shaping (end-of-list bonus, overflow and early-stop penalties). @defaultValue true */
  lengthShaping: boolean;
  /** Recommendation: added to the EOS advantage of a list of exactly K items. @defaultValue 0.1 */
  endOfList: number;
  /** Recommendation: added to the advantage of every token of an item past K. @defaultValue -0.1 */
  extraToken: number;
  /** Recommendation: added to the EOS advantage of a list that stopped before K items. @defaultValue -0.1 */
  earlyStop: number;
  /** CCR: loss of truncated completions: keep, drop them, or drop only the unfinished suffix. @defaultValue "keep" (ccr "dropSuffix") */
  truncation: 'keep' | 'dropTruncated' | 'dropSuffix';
  /**
   * CCR with `truncation: "dropSuffix"`: a completion capped before any complete labelled answer (its whole text is
   * the unfinished suffix) `"keep"`s its row in the loss, so its advantage reaches the update, or `"drop"`s it. @defaultValue "keep"
   */
  unanswered: 'keep' | 'drop';
}

/** Validation, checkpoint selection and stopping. */
export interface ValidationConfig {
  /** Validate every this many steps (and at the last step); 0 = never. @defaultValue 250 */
  every: number;
  /** Validation prompts (the first ones of the split); 0 = the whole split. @defaultValue 0 */
  prompts: number;
  /** Metric that selects the best checkpoint (higher is better). @defaultValue "relevantRecall" (recommendation), "accuracy" (CCR) */
  metric: string;
  /** Stop after this many steps without a better validation value; 0 = never. @defaultValue 1500 */
  patience: number;
  /**
   * Stop when the mean KL to the reference at a step exceeds this; 0 = never. The KL is measured against the frozen
   * reference at every step whenever this is set, also with β = 0 (then it is monitored, not added to the loss). @defaultValue 0
   */
  klThreshold: number;
}

/** Data of the run. */
export interface DataConfig {
  /** Folder of a movies-multi style benchmark (train/validation/test.jsonl, catalog files); "" = the shipped one. @defaultValue "" */
  moviesDir: string;
  /** Arithmetic problems generated for training (CCR recipes). @defaultValue 6000 */
  arithmeticTrain: number;
  /** Arithmetic problems generated for validation and for test, each. @defaultValue 300 */
  arithmeticEval: number;
  /** Most operations per arithmetic problem. @defaultValue 4 */
  arithmeticMaxSteps: number;
  /** Seed of the arithmetic problems (fixed apart from the run seed, so runs share their problems). @defaultValue 0 */
  arithmeticSeed: number;
}

/** Everything a run needs besides its policy. */
export interface TrainerConfig {
  recipe: RecipeName;
  /** Seeds the sampler, the generation and the evaluation draws. @defaultValue 0 */
  seed: number;
  /**
   * Where the command line creates and loads the built-in policy: `"cpu"`, `"cuda"` or `"auto"` (CUDA when available).
   * `train()` refuses a policy on another device than this one names. The default stays `"cpu"` because the GPU
   * model has not run on a GPU yet (unverified). @defaultValue "cpu"
   */
  device: Device;
  /** Maximum optimizer steps (batches of rollouts). @defaultValue 2000 */
  steps: number;
  /** G, prompts per step. @defaultValue 48 */
  groups: number;
  /** S, candidates generated per prompt. @defaultValue 8 */
  candidates: number;
  /** μ, policy updates per batch of rollouts (> 1 stores the old log-probs). @defaultValue 1 */
  policyUpdates: number;
  /** Constant learning rate passed to every policy step. @defaultValue 1e-6 */
  learningRate: number;
  /** Save a checkpoint every this many steps (and at the end, and on Ctrl-C). @defaultValue 250 */
  checkpointEvery: number;
  /** Maximum completion tokens at evaluation (greedy). @defaultValue same as generation.maxNewTokens */
  evalMaxNewTokens: number;
  /** Test prompts evaluated at the end; 0 = the whole split. @defaultValue 0 */
  testPrompts: number;
  generation: GenerationConfig;
  rewards: RewardConfig;
  advantages: AdvantageConfig;
  /** Policy-loss options (lib/kernels/loss.ts), on top of the recipe's preset. @defaultValue the recipe's preset */
  loss: PolicyLossOptions;
  validation: ValidationConfig;
  data: DataConfig;
}

/** Paper-scale defaults (ReMaRk / Rank-GRPO: G 48 × S 8, K 20, validation every 250 up to 2,000 steps). */
export const TRAINER_DEFAULTS: Readonly<TrainerConfig> = deepFreeze({
  recipe: 'remark',
  seed: 0,
  device: 'cpu',
  steps: 2000,
  groups: 48,
  candidates: 8,
  policyUpdates: 1,
  learningRate: 1e-6,
  checkpointEvery: 250,
  evalMaxNewTokens: 0,
  testPrompts: 0,
  generation: { maxNewTokens: 160, temperature: 1, topK: 0, topP: 1 },
  rewards: { ranks: 20, shape: 'hit', yearTolerance: 2, catalog: 'full', problems: 3, wAcc: 2, wFmt: 1, lengthWeight: 0 },
  advantages: {
    scale: 'group', stdEpsilon: 1e-4, singletonGroup: 'zero', nanRewards: 'exclude',
    lengthShaping: true, endOfList: 0.1, extraToken: -0.1, earlyStop: -0.1, truncation: 'keep', unanswered: 'keep',
  },
  loss: {},
  validation: { every: 250, prompts: 0, metric: '', patience: 1500, klThreshold: 0 },
  data: { moviesDir: '', arithmeticTrain: 6000, arithmeticEval: 300, arithmeticMaxSteps: 4, arithmeticSeed: 0 },
} as TrainerConfig);

/** A partial config as a user writes it (JSON file, flags). */
export type ConfigInput = { [K in keyof TrainerConfig]?: TrainerConfig[K] extends object ? Partial<TrainerConfig[K]> : TrainerConfig[K] };

const CHOICES: Record<string, readonly string[]> = {
  recipe: RECIPE_NAMES,
  device: DEVICES,
  'rewards.shape': ['hit', 'dcgTail'],
  'rewards.catalog': ['full', 'benchmark', 'none'],
  'advantages.scale': ['group', 'batch', 'none'],
  'advantages.truncation': ['keep', 'dropTruncated', 'dropSuffix'],
  'advantages.singletonGroup': ['zero', 'raw', 'nan'],
  'advantages.nanRewards': ['exclude', 'asZero'],
  'advantages.unanswered': ['keep', 'drop'],
};

/** Number fields that may be negative (advantage shaping terms). */
const SIGNED = new Set(['advantages.endOfList', 'advantages.extraToken', 'advantages.earlyStop']);

/** Integer fields and their smallest value. */
const INTEGERS: Record<string, number> = {
  seed: 0, steps: 1, groups: 1, candidates: 2, policyUpdates: 1, checkpointEvery: 1, evalMaxNewTokens: 0, testPrompts: 0,
  'generation.maxNewTokens': 1, 'generation.topK': 0, 'rewards.ranks': 1, 'rewards.yearTolerance': 0, 'rewards.problems': 1,
  'validation.every': 0, 'validation.prompts': 0, 'validation.patience': 0,
  'data.arithmeticTrain': 1, 'data.arithmeticEval': 1, 'data.arithmeticMaxSteps': 1, 'data.arithmeticSeed': 0,
};

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') Object.values(value).forEach(deepFreeze);
  return Object.freeze(value);
}

/** Checks one value with lib/validate.ts's checkers (one wording for every option of the package). */
function checkLeaf(path: string, value: unknown, fallback: unknown): void {
  const name = `config "${path}"`;
  const choices = CHOICES[path];
  if (choices) check.oneOf(name, value, choices);
  else if (typeof fallback === 'boolean') check.boolean(name, value);
  else if (typeof fallback === 'string') check.string(name, value);
  else if (path in INTEGERS) check.integer(name, value, INTEGERS[path]);
  else if (SIGNED.has(path)) check.number(name, value, Number.isFinite, 'to be finite');
  else check.number(name, value, (v) => v >= 0 && Number.isFinite(v), 'to be finite and >= 0');
}

/** Merges `input` over `base`, checking every key (with a suggestion for typos) and every value's type. */
function mergeChecked(base: Record<string, unknown>, input: unknown, prefix: string): Record<string, unknown> {
  if (input === undefined) return { ...base };
  const name = prefix ? `config "${prefix}"` : 'the config';
  const fields = check.object(name, input);
  check.knownKeys(name, fields, Object.keys(base));
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(fields)) {
    const path = prefix ? `${prefix}.${key}` : key;
    const fallback = base[key];
    if (path === 'loss') out.loss = { ...(fallback as object), ...(value as object) };
    else if (fallback !== null && typeof fallback === 'object') out[key] = mergeChecked(fallback as Record<string, unknown>, value, path);
    else {
      checkLeaf(path, value, fallback);
      out[key] = value;
    }
  }
  return out;
}

/** Applies layers of partial configs over `base` (later layers win), validating each. */
export function mergeConfig(base: TrainerConfig, ...layers: readonly unknown[]): TrainerConfig {
  let merged = base as unknown as Record<string, unknown>;
  for (const layer of layers) merged = mergeChecked(merged, layer, '');
  const config = merged as unknown as TrainerConfig;
  resolveLossOptions(config.loss);
  // every log-prob of the loss is scored at this temperature (logits / T)
  check.number('config "generation.temperature"', config.generation.temperature, (t) => t > 0, 'to be > 0');
  if (config.validation.metric === '') throw new GrpoError('GRPO_INVALID_ARGUMENT', 'config "validation.metric": expected a metric name');
  return config;
}

/**
 * Sets `path` (dotted, e.g. "generation.maxNewTokens") in a partial config to `text`, read as JSON
 * when it parses (numbers, booleans, objects) and as a string otherwise. Used for command-line flags.
 */
export function setPath(target: Record<string, unknown>, path: string, text: string): void {
  let value: unknown = text;
  try {
    value = JSON.parse(text);
  } catch {
    // a bare word such as remark stays a string
  }
  const keys = path.split('.');
  let node = target;
  for (const key of keys.slice(0, -1)) {
    if (node[key] === undefined) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[keys[keys.length - 1]] = value;
}
