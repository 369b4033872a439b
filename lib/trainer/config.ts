// The trainer's configuration: every option declared once (type, range, default, description) in
// TRAINER_OPTIONS, and the validation that turns a user's JSON (file + flags) into a resolved config.
import { DEVICES } from '../binding/index.js';
import { GrpoError } from '../errors.js';
import { resolveLossOptions, type PolicyLossOptions, type ResolvedLossOptions } from '../kernels/loss.js';
import { NORMALIZE_OPTIONS } from '../options/advantages.js';
import { LORA_DEFAULTS, LORA_START_OPTIONS, type LoraStartSettings } from '../options/lora.js';
import { PROMPT_OPTIONS } from '../options/prompt.js';
import { endpointList, REMOTE_OPTIONS } from '../rollout/options.js';
import {
  boolean, choice, defaultsOf, integer, nested, nullable, number, POSITIVE, string, type Field, type Naming, type ValuesOf, checkOptions } from '../options/schema.js';
import { LENGTH_SHAPING_OPTIONS, TOKEN_ADVANTAGE_OPTIONS } from '../options/token-advantages.js';
import { TITLE_NORMALIZATIONS } from '../text/normalize.js';
import { ITEM_KEYS } from '../text/title.js';
import * as check from '../validate.js';
import { checkMicroBatchLoss } from './micro-batch.js';

export const RECIPE_NAMES = ['rank-grpo', 'remark', 'remark-mean', 'rank-grpo-requests', 'ccr', 'grpo'] as const;
export type RecipeName = (typeof RECIPE_NAMES)[number];

/** What a run trains on: list recommendation, multi-answer questions (both rank-wise) or verifiable math (CCR). */
export const TASK_KINDS = ['recommend', 'qa', 'math'] as const;
export type TaskKind = (typeof TASK_KINDS)[number];

const GENERATION_OPTIONS = {
  maxNewTokens: integer(160, 'Completion cap in tokens (CCR: the cap shared by the N packed answers).', 1),
  temperature: number(1, 'Sampling temperature; also the one every loss and KL log-prob is scored at (logits / T).', POSITIVE),
  topK: integer(0, 'Top-k of the sampler; 0 = off.', 0),
  topP: number(1, 'Top-p of the sampler; 1 = off.'),
  maxRows: integer(0, 'Rows per native generate call of the rollout and the evaluation (Policy.generate `maxRows`); 0 = all in one '
    + 'call. The same completions either way; the KV cache holds only this many rows (docs/trainer.md, "Generation in row chunks").', 0),
};

/** Rewards (the recipe picks which fields apply). */
const REWARD_OPTIONS = {
  ranks: integer(20, 'Recommendation and QA: K, the ranks scored (`task: "qa"` sets 10).', 1),
  shape: choice(['hit', 'dcgTail'] as const, 'hit', 'Recommendation and QA: hits → rewards, `"hit"` (Rank-GRPO exp_inf) or `"dcgTail"`.'),
  yearTolerance: integer(2, 'Recommendation: largest |year difference| that still matches.', 0),
  catalog: choice(['full', 'benchmark', 'none'] as const, 'full', 'Recommendation: catalog of the notInCatalog check: the full shipped index, the benchmark films, or none. '
    + 'On your own files (`data.recommend`) `"full"` and `"benchmark"` both mean `data.catalog` (no check without one).'),
  normalization: choice(TITLE_NORMALIZATIONS, 'default', 'Recommendation: how titles are normalised before they are compared (docs/recommendation.md): '
    + '`"default"` (NFKC, lower case, punctuation collapsed, a leading article dropped), `"rankGrpo"` (upstream\'s) or `"none"` (exact strings).'),
  problems: integer(3, 'CCR: problems packed per prompt, N.', 1),
  order: choice(['fixed', 'shuffled'] as const, 'shuffled', 'CCR: how the training problems are packed N at a time: `"shuffled"` (a '
    + 'permutation seeded by `seed`) or `"fixed"` (consecutive problems in file order); a final partial group is dropped.'),
  wAcc: number(2, 'CCR: weight of the accuracy term.'),
  wFmt: number(1, 'CCR: weight of the format term.'),
  threads: integer(0, 'Recommendation and math: compute each step\'s rewards on this many worker threads (RewardPool: the same values, '
    + 'docs/scale-out.md); 0 = on the main thread. The threads run from the built package (dist/).', 0),
  lengthWeight: number(0, 'Recommendation and QA: weight of the length reward −min(1, |items − K| / K), added to the rank-1 reward (how '
    + 'Rank-GRPO\'s `_calculate_rewards` places a scalar reward function).'),
};

/** Advantages (normalisation and placement on tokens). */
const ADVANTAGE_OPTIONS = {
  scale: NORMALIZE_OPTIONS.scale,
  stdEpsilon: NORMALIZE_OPTIONS.stdEpsilon,
  singletonGroup: NORMALIZE_OPTIONS.singletonGroup,
  nanRewards: NORMALIZE_OPTIONS.nanRewards,
  lengthShaping: boolean(true, 'Recommendation and QA: Rank-GRPO length shaping (end-of-list bonus, overflow and early-stop penalties).'),
  endOfList: LENGTH_SHAPING_OPTIONS.endOfList,
  extraToken: LENGTH_SHAPING_OPTIONS.extraToken,
  earlyStop: LENGTH_SHAPING_OPTIONS.earlyStop,
  truncation: TOKEN_ADVANTAGE_OPTIONS.truncation,
  unanswered: choice(['keep', 'drop'] as const, 'keep', 'CCR with `truncation: "dropSuffix"`: a completion capped before any complete '
    + 'labelled answer (its whole text is the unfinished suffix) `"keep"`s its row in the loss, so its advantage reaches the update, or `"drop"`s it.'),
};

/** endpointList that also takes [] (its default: the policy backend needs none; mergeConfig asks for one with "remote"). */
function optionalEndpoints(doc: string): Field<string[]> {
  const list = endpointList(doc);
  return { ...list, default: [], required: false, read: (v, path, naming, base) => (Array.isArray(v) && v.length === 0 ? [] : list.read(v, path, naming, base)) };
}

/**
 * Where the rollouts come from: the policy itself, or inference servers over vLLM's or SGLang's protocol
 * (docs/scale-out.md), with the policy pushed every `pushEvery` steps and TRL's vLLM importance-sampling correction.
 */
const ROLLOUT_OPTIONS = {
  backend: choice(['policy', 'remote'] as const, 'policy', '`"policy"`: the trained policy generates; `"remote"`: the servers of `endpoints` do '
    + '(RemoteRollouts), and the trainer scores their tokens itself.'),
  endpoints: optionalEndpoints('Remote: the servers\' base URLs, all speaking `protocol`.'),
  protocol: REMOTE_OPTIONS.protocol,
  failover: REMOTE_OPTIONS.failover,
  model: string('policy', 'Remote: the served model\'s name, sampled until the first push; pushed adapters are named `<model>-step-<N>`.'),
  maxInFlight: REMOTE_OPTIONS.maxInFlight,
  timeoutMs: REMOTE_OPTIONS.timeoutMs,
  retries: REMOTE_OPTIONS.retries,
  backoffMs: REMOTE_OPTIONS.backoffMs,
  pushEvery: integer(1, 'Remote: every this many steps, push the policy to every server and check it serves it: LoRA saves the adapter '
    + '(vLLM /v1/load_lora_adapter, SGLang /load_lora_adapter), full fine-tuning the checkpoint folder (SGLang /update_weights_from_disk; '
    + 'vLLM has no reload from disk: set 0); 0 = never (the servers keep sampling `model`).', 0),
  adapterPath: string('', 'Remote: the run folder as the servers see it (a shared mount), prefixed to `adapters/step-<N>` or `weights/step-<N>`; "" = the trainer\'s own path.'),
  correction: choice(['tokenTruncate', 'tokenMask', 'sequenceTruncate', 'sequenceMask', 'none'] as const, 'tokenTruncate', 'Remote: TRL\'s vLLM '
    + 'importance-sampling correction (`vllm_importance_sampling_mode`): each token\'s (or sequence\'s) weight exp(trainer log-prob − engine log-prob) '
    + 'multiplies its loss, clamped into [`clipMin`, `clipMax`] (`*Truncate`) or set to 0 outside it (`*Mask`); `"none"` = off.'),
  clipMax: number(3, 'Remote: the upper bound of the importance weight (TRL `vllm_importance_sampling_clip_max`, formerly `vllm_importance_sampling_cap`).', POSITIVE),
  clipMin: number(0, 'Remote: the lower bound of the importance weight (TRL `vllm_importance_sampling_clip_min`); 0 = none.'),
};

/** Validation, checkpoint selection and stopping. */
const VALIDATION_OPTIONS = {
  every: integer(250, 'Validate every this many steps (and at the last step); 0 = never.', 0),
  prompts: integer(0, 'Validation prompts (the first ones of the split); 0 = the whole split.', 0),
  metric: string('', 'Metric that selects the best checkpoint (higher is better); every recipe sets one, and `task: "qa"` sets `"respondentRecall"`.'),
  patience: integer(1500, 'Stop after this many steps without a better validation value (judged at validation steps); 0 = never.', 0),
  klThreshold: number(0, 'Stop when the mean KL to the reference at a step exceeds this; 0 = never. The KL is measured against the '
    + 'frozen reference at every step whenever this is set, also with β = 0 (then it is monitored, not added to the loss).'),
};

/** Data of the run. */
const DATA_OPTIONS = {
  moviesDir: string('', 'Folder of a movies-multi style benchmark (train/validation/test.jsonl, catalog files); "" = the shipped one.'),
  arithmeticTrain: integer(6000, 'Arithmetic problems generated for training (CCR recipes).', 1),
  arithmeticEval: integer(300, 'Arithmetic problems generated for validation and for test, each.', 1),
  arithmeticMaxSteps: integer(4, 'Most operations per arithmetic problem.', 1),
  arithmeticSeed: integer(0, 'Seed of the arithmetic problems (fixed apart from the run seed, so runs share their problems).', 0),
  math: string('', 'Math task: `math/1` JSONL of the training problems (docs/datasets.md); "" = the generated arithmetic.'),
  mathValidation: string('', 'Math task: `math/1` JSONL of the validation problems; "" = held out of `math` (`heldOut`, `splitSeed`).'),
  mathTest: string('', 'Math task: `math/1` JSONL of the test problems; "" = held out of `math` (`heldOut`, `splitSeed`).'),
  qa: string('', 'QA task: `qa/1` JSONL of the training questions (docs/datasets.md); "" = the bundled ProtoQA dev set (data/protoqa).'),
  qaValidation: string('', 'QA task: `qa/1` JSONL of the validation questions; "" = held out of `qa` (`heldOut`, `splitSeed`).'),
  qaTest: string('', 'QA task: `qa/1` JSONL of the test questions; "" = held out of `qa` (`heldOut`, `splitSeed`).'),
  recommend: string('', 'Recommendation task: your `recommend/1` requests, a folder (train.jsonl, and validation.jsonl, test.jsonl and '
    + 'catalog.jsonl where present) or a train file; "" = the movies-multi benchmark of `moviesDir`.'),
  recommendValidation: string('', 'Recommendation task: `recommend/1` JSONL of the validation requests; "" = the folder\'s, else held out of the train file.'),
  recommendTest: string('', 'Recommendation task: `recommend/1` JSONL of the test requests; "" = the folder\'s, else held out of the train file.'),
  catalog: string('', 'Recommendation task: the `catalog/1` JSONL of the notInCatalog check on your own files; "" = the folder\'s catalog.jsonl, else no check.'),
  itemKey: choice(ITEM_KEYS, 'year', 'Recommendation task on your own files: what tells items of one title apart, `"year"` (films: "Title (Year)", '
    + 'the `rewards.yearTolerance` rule) or `"creator"` (books, music: "Title (Creator)", compared exactly after normalisation).'),
  itemNoun: string('films', 'Recommendation prompt: what the items are called ("Recommend K films, …").'),
  creatorLabel: string('Creator', 'Recommendation prompt with `itemKey: "creator"`: the word in the line format asked for ("rank. Title (Author)").'),
  heldOut: integer(0, 'Records held out of the training file for validation and for test, each, when their own file is not given; '
    + '0 = 10% of the file each (at least 1).', 0),
  splitSeed: integer(0, 'Seed of the permutation that picks the held-out records (the same seed, file and `heldOut`, the same splits).', 0),
};

/** Policy-loss options on top of the recipe's preset: merged layer over layer, checked whole by resolveLossOptions. */
const LOSS_LAYER: Field<PolicyLossOptions> = {
  type: 'PolicyLossOptions', doc: 'Policy-loss options (the table of docs/advantages-and-loss.md), on top of the recipe\'s preset.',
  default: {}, defaultDoc: 'the recipe\'s preset',
  read: (value, path, naming, base) => ({ ...base, ...check.object(naming.object(path), value) }),
};

const LORA_NESTED = nested(LORA_START_OPTIONS, 'LoRA adapters: the command line loads the starting policy with them (only they train; checkpoints '
  + 'are adapter-only, docs/policy.md "LoRA adapters"); null = full fine-tuning. Given fields go over the `lora` table\'s defaults; with '
  + '`lora.from` the run takes the adapter\'s settings (the fields given beside it must repeat them, `dropout` aside).');

/** LoRA settings over LORA_DEFAULTS (no `from`), or null (full fine-tuning). */
const LORA_FIELD: Field<LoraStartSettings | null> = {
  ...nullable(LORA_NESTED), schema: undefined, type: 'object (the `lora` table) or null',
  read: (v, path, naming, base) => (v === null ? null : LORA_NESTED.read(v, path, naming, base ?? { ...LORA_DEFAULTS, from: null })),
};

/** Everything a run needs besides its policy. Paper-scale defaults (ReMaRk / Rank-GRPO: G 48 × S 8, K 20, validation every 250 up to 2,000 steps). */
export const TRAINER_OPTIONS = {
  recipe: choice(RECIPE_NAMES, 'remark', 'One of the six recipes (docs/trainer.md).'),
  task: choice(['recipe', ...TASK_KINDS] as const, 'recipe', 'What the run trains on (docs/trainer.md, "Tasks"): `"recommend"`, `"qa"` or '
    + '`"math"`; `"recipe"` = the recipe\'s own (`"recommend"` for the recommendation recipes, `"math"` for `ccr` and `grpo`). The '
    + 'recommendation recipes also train on `"qa"`.'),
  seed: integer(0, 'Seeds the sampler, the generation and the evaluation draws.', 0),
  device: choice(DEVICES, 'cpu', 'Where the command line creates and loads the built-in policy: `"cpu"`, `"cuda"` or `"auto"` (CUDA '
    + 'when available). `train()` refuses a policy on another device than this one names. The default stays `"cpu"` because the GPU '
    + 'model has not run on a GPU yet (unverified).'),
  steps: integer(2000, 'Maximum optimizer steps (batches of rollouts).', 1),
  groups: integer(48, 'G, prompts per step.', 1),
  candidates: integer(8, 'S, candidates generated per prompt.', 2),
  policyUpdates: integer(1, 'μ, policy updates per batch of rollouts (> 1 stores the old log-probs).', 1),
  learningRate: number(1e-6, 'Constant learning rate of every policy optimizer step.'),
  microBatchTokens: integer(0, 'Prompt + completion tokens per micro-batch: each update (and the old and reference scoring) runs '
    + 'the batch in consecutive runs of sequences holding at most this many, adding their gradients up before one optimizer step, '
    + 'with the loss divided by the whole batch\'s counts (docs/trainer.md, "Memory: micro-batches"); a longer sequence is refused; '
    + '0 = the whole batch at once.', 0),
  recompute: boolean(false, 'Per-layer activation recomputation in each update\'s training forwards: only each decoder layer\'s input is '
    + 'kept and the backward recomputes the layer\'s activations from it, for about one more forward of compute; the gradients are '
    + 'bitwise the same (docs/trainer.md, "Per-layer activation recomputation"). The CPU built-in model only (GRPO_UNSUPPORTED on CUDA).'),
  checkpointEvery: integer(250, 'Save a checkpoint every this many steps (and at the end, and on Ctrl-C).', 1),
  evalMaxNewTokens: integer(0, 'Maximum completion tokens at evaluation (greedy); 0 = generation.maxNewTokens.', 0),
  testPrompts: integer(0, 'Test prompts evaluated at the end; 0 = the whole split.', 0),
  lora: LORA_FIELD,
  prompt: nested(PROMPT_OPTIONS, 'How prompts reach the policy: through its tokenizer\'s chat template (docs/policy.md).'),
  generation: nested(GENERATION_OPTIONS, 'Sampling of the S candidates of each prompt.'),
  rollouts: nested(ROLLOUT_OPTIONS, 'Where the rollouts come from (docs/scale-out.md, "The trainer on remote rollouts").'),
  rewards: nested(REWARD_OPTIONS, 'Rewards (the recipe picks which fields apply).'),
  advantages: nested(ADVANTAGE_OPTIONS, 'Advantages (normalisation and placement on tokens).'),
  loss: LOSS_LAYER,
  validation: nested(VALIDATION_OPTIONS, 'Validation, checkpoint selection and stopping.'),
  data: nested(DATA_OPTIONS, 'Data of the run.'),
};

export type TrainerConfig = ValuesOf<typeof TRAINER_OPTIONS>;
export type GenerationConfig = TrainerConfig['generation'];
export type RolloutsConfig = TrainerConfig['rollouts'];
export type PromptConfig = TrainerConfig['prompt'];
export type RewardConfig = TrainerConfig['rewards'];
export type AdvantageConfig = TrainerConfig['advantages'];
export type ValidationConfig = TrainerConfig['validation'];
export type DataConfig = TrainerConfig['data'];

export const TRAINER_DEFAULTS: Readonly<TrainerConfig> = defaultsOf(TRAINER_OPTIONS);

/** A partial config as a user writes it (JSON file, flags). */
export type ConfigInput = { [K in keyof TrainerConfig]?: TrainerConfig[K] extends object ? Partial<TrainerConfig[K]> : TrainerConfig[K] };

/** Config errors name the dotted path: `config "generation.topK"`. */
const CONFIG_NAMING: Naming = {
  field: (path) => `config "${path}"`,
  object: (path) => (path ? `config "${path}"` : 'the config'),
};

/** Refuses up front a budget no capped completion fits in (with a one-token prompt), and a loss micro-batches cannot split. */
function checkMicroBatches(config: TrainerConfig, loss: ResolvedLossOptions): void {
  const budget = config.microBatchTokens;
  if (budget === 0) return;
  const least = config.generation.maxNewTokens + 1;
  if (budget < least) {
    throw new GrpoError('GRPO_VALUE_RANGE', `config "microBatchTokens": expected 0 or at least generation.maxNewTokens + 1 = ${least} (a prompt and a capped completion) but received ${budget}`);
  }
  checkMicroBatchLoss(loss);
}

/** Applies layers of partial configs over `base` (later layers win), validating each. */
export function mergeConfig(base: TrainerConfig, ...layers: readonly unknown[]): TrainerConfig {
  let config = base;
  for (const layer of layers) {
    if (layer !== undefined) config = checkOptions(TRAINER_OPTIONS, CONFIG_NAMING, check.object('the config', layer), config);
  }
  const loss = resolveLossOptions(config.loss);
  checkMicroBatches(config, loss);
  if (config.rollouts.clipMin >= config.rollouts.clipMax) {
    throw new GrpoError('GRPO_VALUE_RANGE', `config "rollouts.clipMin": expected less than rollouts.clipMax = ${config.rollouts.clipMax} but received ${config.rollouts.clipMin}`);
  }
  if (config.rollouts.backend === 'remote' && config.rollouts.correction !== 'none' && (loss.lossType === 'vespo' || loss.lossType === 'geoMean')) {
    throw new GrpoError('GRPO_UNSUPPORTED', `config "rollouts.correction": loss.lossType "${loss.lossType}" is not a sum of per-token terms `
      + 'linear in the advantage (TRL folds the weight into VESPO\'s own), so the per-token weight is not wired for it; set rollouts.correction to "none" or choose another loss.lossType');
  }
  if (config.rollouts.backend === 'remote' && config.rollouts.endpoints.length === 0) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', 'config "rollouts.endpoints": expected at least one server URL with rollouts.backend "remote"');
  }
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
