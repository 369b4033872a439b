// One GRPO step over the Policy interface, in the seven phases of docs/architecture.md: sample prompts → generate →
// rewards → advantages → score (old and reference log-probs) → loss → backward and optimizer step, the last two
// μ times per batch of rollouts. Each phase returns what the next one takes.
import { mixSeed } from '../data/rng.js';
import { GrpoError } from '../errors.js';
import { resolveLossOptions, type PolicyLossOptions, type PolicyLossStats } from '../kernels/loss.js';
import type { LossFunction, Policy, ScoreResult, SequenceBatch } from '../policy/policy.js';
import type { TrainerConfig } from './config.js';
import { importanceWeights, weightAdvantages, type SamplingMetrics } from './importance.js';
import { remoteRollout, type RemoteSource, type RemoteStepRollout } from './remote-source.js';
import { generateRollout, padRows, type Rollout } from './rollout.js';
import type { Signal, StepStats, Task } from './task.js';
import { trlStepMetrics, type TrlStepMetrics } from './trl-metrics.js';
import { accumulateGradients, rolloutLoss, scoreInMicroBatches, type StoredScores } from './update.js';

/** Seconds spent in each phase of a step (wall time). */
export interface PhaseTimes {
  generate: number;
  reward: number;
  advantage: number;
  /** old (μ > 1) and reference (β > 0 or a KL stop) log-probs */
  score: number;
  /** the policy's training forward of each update */
  forward: number;
  /** the policy loss (its kernel runs in the trainer) */
  loss: number;
  backward: number;
  optimizer: number;
  total: number;
}

/** The trainer's own fields of a metrics.jsonl row. */
export interface StepFields {
  step: number;
  epoch: number;
  /** Where the policy ran this step ('cpu', 'cuda'; 'unknown' for a Policy that does not say): a resumed run may move. */
  device: string;
  /** task statistics: reward mean/std, zero-reward fractions, accuracy, informative groups, … */
  stats: StepStats;
  loss: number;
  gradNorm: number;
  learningRate: number;
  /** loss statistics of the last update: clip ratios, KL, ratio, entropy */
  lossStats: PolicyLossStats;
  tokens: { prompt: number; completion: number };
  completionLength: { mean: number; max: number };
  truncationRate: number;
  time: PhaseTimes;
  /** training seconds since the run began (resumes included) */
  elapsed: number;
  /** Remote rollouts: the served model or adapter (`<model>-step-<N>`) that sampled every rollout of the step. */
  policyVersion?: string;
}

/**
 * One row of metrics.jsonl: the trainer's fields and the same quantities under TRL's flat names (lib/trainer/trl-metrics.ts).
 * Everything but `time` and `elapsed` is a deterministic function of (config, seed, step).
 */
export type StepRecord = StepFields & TrlStepMetrics & Partial<SamplingMetrics>;

/** What a step needs. */
export interface StepContext {
  config: TrainerConfig;
  policy: Policy;
  /** Frozen reference for the KL term and the KL stop (needed when {@link needsReference}). */
  reference?: Policy;
  task: Task;
  lossOptions: PolicyLossOptions;
  /** Inference servers that sample the rollouts (config.rollouts.backend "remote"); absent: the policy samples. */
  rollouts?: RemoteSource;
}

class Stopwatch {
  private last = performance.now();
  /** Seconds since the previous lap. */
  lap(): number {
    const now = performance.now();
    const seconds = (now - this.last) / 1000;
    this.last = now;
    return seconds;
  }
}

/** {@link rolloutLoss} as a {@link LossFunction} (for policyStep); `stats` receives its statistics. */
export function grpoLoss(
  signal: Signal, rollout: Rollout, options: PolicyLossOptions, stored: StoredScores, stats: (s: PolicyLossStats) => void,
): LossFunction {
  return (scores: ScoreResult) => {
    const { stats: lossStats, ...out } = rolloutLoss(signal, rollout, options, stored, scores);
    stats(lossStats);
    return out;
  };
}

/**
 * True when a run needs the frozen reference: a KL term (β > 0), or a KL stop (validation.klThreshold > 0), which
 * measures the KL to the reference at every step without adding it to the loss when β = 0.
 */
export function needsReference(config: TrainerConfig, loss: PolicyLossOptions = config.loss): boolean {
  return (resolveLossOptions(loss).beta as number) > 0 || config.validation.klThreshold > 0;
}

/** The trainer scores the old log-probs: for μ > 1, and for the importance weights of remote rollouts (as TRL with vLLM). */
function needsOld(ctx: StepContext): boolean {
  return ctx.config.policyUpdates > 1 || (ctx.rollouts !== undefined && ctx.rollouts.settings.correction !== 'none');
}

/**
 * Old and reference log-probs [B, T] of the rollout (when needed), scored at the rollout temperature as TRL and verl
 * score every log-prob of the loss and the KL (logits / T).
 */
async function storedScores(ctx: StepContext, batch: SequenceBatch, rollout: Rollout): Promise<StoredScores> {
  const pad = (s: ScoreResult) => padRows(s.logp, rollout.width, (n) => new Float32Array(n));
  const options = { temperature: ctx.config.generation.temperature };
  const score = (policy: Policy) => scoreInMicroBatches(policy, batch, ctx.config.microBatchTokens, options).then(pad);
  return {
    old: needsOld(ctx) ? await score(ctx.policy) : undefined,
    ref: ctx.reference && needsReference(ctx.config, ctx.lossOptions) ? await score(ctx.reference) : undefined,
  };
}

function rolloutShape(rollout: Rollout, lengths: readonly number[]) {
  const completion = lengths.reduce((a, b) => a + b, 0);
  return {
    tokens: { prompt: rollout.promptIds.reduce((n, p) => n + p.length, 0), completion },
    completionLength: { mean: completion / lengths.length, max: Math.max(0, ...lengths) },
    truncationRate: rollout.truncated.reduce((a, b) => a + b, 0) / lengths.length,
  };
}

/** The device a policy reports, or 'unknown'. */
export function policyDevice(policy: Policy): string {
  return policy.device ?? 'unknown';
}

/**
 * Phases 6 and 7 of one update: the policy's training forward, the loss in the trainer and backward (micro-batch by
 * micro-batch under `microBatchTokens`), then one optimizer step; `time` gathers the seconds of each.
 */
async function policyUpdate(
  ctx: StepContext, batch: SequenceBatch, rollout: Rollout, signal: Signal, stored: StoredScores, time: PhaseTimes, clock: Stopwatch,
) {
  const { config, policy } = ctx;
  const loss = await accumulateGradients(policy, { batch, rollout, signal, stored }, {
    loss: ctx.lossOptions, microBatchTokens: config.microBatchTokens, recompute: config.recompute, temperature: config.generation.temperature,
    lap: (phase) => void (time[phase] += clock.lap()),
  });
  const step = await policy.optimizerStep({ learningRate: config.learningRate });
  time.optimizer += clock.lap();
  return { loss: loss.loss, lossStats: loss.stats, gradNorm: step.gradNorm, learningRate: step.learningRate };
}

/** What one step produced, for its metrics row. */
interface StepOutcome {
  rollout: Rollout | RemoteStepRollout;
  sampling?: SamplingMetrics;
  rewards: Awaited<ReturnType<Task['rewards']>>;
  advantages: ReturnType<Task['advantages']>;
  update: Awaited<ReturnType<typeof policyUpdate>>;
  time: PhaseTimes;
}

/** The metrics row of step `step` (0-based) from what it produced. */
function stepRecord(ctx: StepContext, step: number, outcome: StepOutcome, elapsedBefore: number, tokensBefore: number): StepRecord {
  const { rollout, rewards, advantages, update, time, sampling } = outcome;
  const lengths = rollout.completions.map((c) => c.length);
  const shape = rolloutShape(rollout, lengths);
  const trl = trlStepMetrics({
    rewards: rewards.trl ?? {}, lossStats: update.lossStats, lengths, truncated: rollout.truncated, loss: update.loss, gradNorm: update.gradNorm,
    learningRate: update.learningRate, numTokens: tokensBefore + shape.tokens.prompt + shape.tokens.completion,
  });
  return {
    step: step + 1,
    epoch: ctx.task.epochOf(step),
    device: policyDevice(ctx.policy),
    stats: { ...rewards.stats, ...advantages.stats },
    gradNorm: update.gradNorm,
    learningRate: update.learningRate,
    lossStats: update.lossStats,
    ...shape,
    time,
    elapsed: elapsedBefore + time.total,
    ...trl, // `loss` among them: one field, the same value under both names
    ...('policyVersion' in rollout && { policyVersion: rollout.policyVersion }),
    ...sampling,
  };
}

/** Remote rollouts with a correction: the signal's advantages weighted by the truncated importance weights (importance.ts). */
function correctMismatch(ctx: StepContext, rollout: Rollout | RemoteStepRollout, stored: StoredScores, signal: Signal): { signal: Signal; sampling?: SamplingMetrics } {
  if (!ctx.rollouts || ctx.rollouts.settings.correction === 'none' || !('sampling' in rollout)) return { signal };
  const lengths = rollout.completions.map((c) => c.length);
  const { weights, metrics } = importanceWeights(stored.old!, rollout.sampling, lengths, rollout.width, ctx.rollouts.settings);
  return { signal: { ...signal, advantages: weightAdvantages(signal.advantages, weights) }, sampling: metrics };
}

/**
 * Runs training step `step` (0-based) and returns its metrics; `elapsedBefore` and `tokensBefore` are the run's
 * training time and prompt + completion tokens so far.
 */
export async function trainStep(ctx: StepContext, step: number, elapsedBefore: number, tokensBefore = 0): Promise<StepRecord> {
  const { config, policy, task } = ctx;
  if (needsReference(config, ctx.lossOptions) && !ctx.reference) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', 'trainStep: loss.beta > 0 or validation.klThreshold > 0 needs a frozen reference policy (StepContext.reference)');
  }
  const clock = new Stopwatch();
  const time: PhaseTimes = { generate: 0, reward: 0, advantage: 0, score: 0, forward: 0, loss: 0, backward: 0, optimizer: 0, total: 0 };
  const prompts = task.prompts(step); // 1. sample prompts
  const seed = mixSeed(config.seed, step) >>> 0;
  const rollout = ctx.rollouts // 2. generate
    ? await remoteRollout(ctx.rollouts, policy, prompts.texts, config.candidates, config.generation, seed, step)
    : await generateRollout(policy, prompts.texts, config.candidates, config.generation, seed);
  time.generate = clock.lap();
  const rewards = await task.rewards(prompts, rollout); // 3. rewards, with the token spans they fall on
  time.reward = clock.lap();
  const advantages = task.advantages(rewards.rewards, rollout); // 4. advantages on tokens
  time.advantage = clock.lap();
  const batch: SequenceBatch = { prompts: rollout.promptIds, completions: rollout.completions };
  const stored = await storedScores(ctx, batch, rollout); // 5. old and reference log-probs
  const corrected = correctMismatch(ctx, rollout, stored, advantages.signal); // and the engine/trainer mismatch
  time.score = clock.lap();
  let update = { loss: NaN, lossStats: {} as PolicyLossStats, gradNorm: NaN, learningRate: config.learningRate };
  for (let u = 0; u < config.policyUpdates; u++) update = await policyUpdate(ctx, batch, rollout, corrected.signal, stored, time, clock); // 6, 7
  time.total = Object.values(time).reduce((a, b) => a + b, 0);
  return stepRecord(ctx, step, { rollout, rewards, advantages, update, time, sampling: corrected.sampling }, elapsedBefore, tokensBefore);
}
