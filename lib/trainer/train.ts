// A training run: steps, validation with best-checkpoint selection and stopping rules, atomic
// checkpoints, Ctrl-C handling, then the test evaluation of the selected checkpoint and a report.
import { join } from 'node:path';
import { GrpoError } from '../errors.js';
import { sameLoraSettings } from '../options/lora.js';
import { ensureAdapterBase, type Policy } from '../policy/policy.js';
import type { TrainerConfig } from './config.js';
import { needsReference, policyDevice, trainStep, type StepContext, type StepRecord } from './loop.js';
import { checkPushable, pushIfDue, remoteSource } from './remote-source.js';
import { writeRunReport } from './run-report.js';
import { RunDir, writeJsonAtomic, type TrainerState } from './run-dir.js';
import type { StopFlag } from './signals.js';
import { recipeOf } from './recipes.js';
import { tokenizerOf } from './rollout.js';
import type { Evaluation, Task } from './task.js';
import { createTask } from './tasks.js';
import { initialValidation, recordValidation, stopAfter, validatesAt, type StopReason } from './validation.js';

/** Progress of a run, for progress bars and logs. */
export type TrainerEvent =
  | { type: 'start'; step: number; steps: number; device: string }
  | { type: 'step'; record: StepRecord }
  | { type: 'validation'; step: number; values: Record<string, number>; improved: boolean }
  | { type: 'checkpoint'; step: number; dir: string }
  | { type: 'test'; values: Record<string, number>; checkpointStep: number };

/** Loads a saved policy folder (the built-in model: `BuiltinPolicy.load`). */
export type PolicyLoader = (dir: string) => Promise<Policy>;

export interface TrainOptions {
  config: TrainerConfig;
  /** The policy to train (its weights are the starting point). */
  policy: Policy;
  /** Run directory (created; must not hold a run). */
  runDir: string;
  /** Reloads saved policies: the best checkpoint for the test evaluation, the reference on resume. */
  loadPolicy: PolicyLoader;
  /** Frozen reference for the KL term and the KL stop; when needed and absent, a clone of `policy` at the start. */
  reference?: Policy;
  /** A task of your own; default: the recipe's task on the configured data. */
  task?: Task;
  onEvent?: (event: TrainerEvent) => void;
  /** Set `requested` (e.g. from a signal handler) to stop after the current step, with a checkpoint. */
  stop?: StopFlag;
  /** Skip the final test evaluation and report. @defaultValue false */
  skipTest?: boolean;
}

export interface TrainResult {
  steps: number;
  stopReason: StopReason;
  bestStep: number;
  best: number | null;
  /** Test metrics of the selected checkpoint (absent when interrupted or skipped). */
  test?: Record<string, number>;
  runDir: string;
}

/** The pieces of a run that {@link runLoop} drives (built fresh by train, rebuilt from disk by resume). */
export interface RunContext extends StepContext {
  dir: RunDir;
  state: TrainerState;
  loadPolicy: PolicyLoader;
  onEvent: (event: TrainerEvent) => void;
  stop: StopFlag;
  /** The trainer built the task (no `task` option): it ends the task's threads when the run ends. */
  ownsTask?: boolean;
}

export function initialState(config: TrainerConfig): TrainerState {
  return {
    version: 1, step: 0, elapsed: 0, numTokens: 0, validation: initialValidation(), stopReason: null,
    sampler: { unit: recipeOf(config.recipe).unit, seed: config.seed, batchSize: config.groups, position: 0 },
    rng: { seed: config.seed, counter: 0 },
  };
}

async function validate(ctx: RunContext, step: number): Promise<void> {
  const v = ctx.config.validation;
  const { values } = await ctx.task.evaluate(ctx.policy, 'validation', v.prompts);
  const improved = recordValidation(ctx.state.validation, v, step, ctx.state.elapsed, values);
  await ctx.dir.append('validation', { step, elapsed: ctx.state.elapsed, values });
  if (improved) await ctx.dir.saveBest(ctx.policy, step, values[v.metric], v.metric);
  ctx.onEvent({ type: 'validation', step, values, improved });
}

async function checkpoint(ctx: RunContext): Promise<void> {
  const dir = await ctx.dir.checkpoint(ctx.policy, ctx.state);
  ctx.onEvent({ type: 'checkpoint', step: ctx.state.step, dir });
}

/** One step with its bookkeeping; returns the stopping reason that fired, if any. */
async function advance(ctx: RunContext): Promise<StopReason | null> {
  const { state, config } = ctx;
  const record = await trainStep(ctx, state.step, state.elapsed, state.numTokens ?? 0);
  state.step = record.step;
  state.elapsed = record.elapsed;
  state.numTokens = record.num_tokens;
  state.sampler.position = state.step;
  state.rng.counter = state.step;
  if (ctx.rollouts) await pushIfDue(ctx.rollouts, ctx.policy, ctx.dir.path, state.step); // before the metrics row: a failed push leaves the step undone
  await ctx.dir.append('metrics', record);
  ctx.onEvent({ type: 'step', record });
  if (validatesAt(config.validation, state.step, config.steps)) await validate(ctx, state.step);
  return stopAfter(state.validation, config.validation, state.step, config.steps, record.lossStats.kl);
}

/** Steps until a stopping rule fires or a stop is requested; checkpoints on schedule and on the way out. */
export async function runLoop(ctx: RunContext, skipTest = false): Promise<TrainResult> {
  try {
    return await runSteps(ctx, skipTest);
  } finally {
    if (ctx.ownsTask) await ctx.task.close?.();
  }
}

async function runSteps(ctx: RunContext, skipTest: boolean): Promise<TrainResult> {
  ctx.onEvent({ type: 'start', step: ctx.state.step, steps: ctx.config.steps, device: policyDevice(ctx.policy) });
  let reason = ctx.state.stopReason;
  while (reason === null) {
    if (ctx.stop.requested) reason = 'interrupted';
    else reason = await advance(ctx);
    const due = ctx.state.step % ctx.config.checkpointEvery === 0;
    if (reason !== null || due) {
      ctx.state.stopReason = reason;
      await checkpoint(ctx);
    }
  }
  const v = ctx.state.validation;
  const result: TrainResult = { steps: ctx.state.step, stopReason: reason, bestStep: v.bestStep, best: v.best, runDir: ctx.dir.path };
  if (reason !== 'interrupted' && !skipTest) result.test = await testSelected(ctx);
  return result;
}

function plainSeries(e: Evaluation) {
  return Object.fromEntries(Object.entries(e.series).map(([k, s]) => [k, { sum: Array.from(s.sum), count: Array.from(s.count) }]));
}

/** Test evaluation of the best checkpoint (the current policy when none was validated), then the report. */
async function testSelected(ctx: RunContext): Promise<Record<string, number>> {
  const best = await ctx.dir.best();
  const policy = best ? await ctx.loadPolicy(best.policyDir) : ctx.policy;
  try {
    const evaluation = await ctx.task.evaluate(policy, 'test', ctx.config.testPrompts);
    const checkpointStep = best ? best.step : ctx.state.step;
    await writeJsonAtomic(ctx.dir.file('test'), {
      checkpointStep, values: evaluation.values, series: plainSeries(evaluation), completions: evaluation.completions,
    });
    ctx.onEvent({ type: 'test', values: evaluation.values, checkpointStep });
    await writeRunReport(ctx.dir);
    return evaluation.values;
  } finally {
    if (policy !== ctx.policy) policy.dispose();
  }
}

/**
 * Frozen reference for a KL term or a KL stop: the given one; under LoRA the policy's base with its adapters off (no
 * copy; a resume gets it back from the loaded adapter's base); else a clone saved beside the run for resuming.
 */
async function referenceFor(options: TrainOptions, dir: RunDir): Promise<Policy | undefined> {
  if (!needsReference(options.config)) return undefined;
  if (!options.reference && options.policy.adapters) return options.policy.adapters.base();
  const reference = options.reference ?? (await options.policy.clone());
  await reference.save(join(dir.path, 'reference'));
  return reference;
}

/**
 * config.lora set needs a policy with those adapters (a LoRA policy without config.lora is its own choice); with
 * `lora.from` the policy was loaded from that adapter, and the run's config takes the settings the policy has.
 */
function withAdapters(config: TrainerConfig, policy: Policy): TrainerConfig {
  const adapters = policy.adapters;
  if (config.lora?.from != null && adapters) return { ...config, lora: { ...adapters.settings, from: config.lora.from } };
  if (config.lora && !(adapters && sameLoraSettings(adapters.settings, config.lora))) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `train: config "lora" is ${JSON.stringify(config.lora)} but the policy has ${adapters ? `adapters ${JSON.stringify(adapters.settings)}` : 'no adapters'}; `
      + 'create or load the policy with { lora: config.lora } (grpo train does)');
  }
  return config;
}

/** A policy on another device than config.device names ('auto' accepts either) is a mistake worth stopping. */
function checkDevice(config: TrainerConfig, policy: Policy): void {
  if (config.device === 'auto' || policy.device === undefined || policy.device === config.device) return;
  throw new GrpoError('GRPO_INVALID_ARGUMENT',
    `train: config "device" is "${config.device}" but the policy runs on "${policy.device}"; create the policy with { device: '${config.device}' } or set config.device`);
}

/**
 * Trains `policy` with `config` into a new run directory.
 * @example
 * const policy = await BuiltinPolicy.load('runs/sft/policy');
 * await train({ config: resolveConfig({ recipe: 'remark', steps: 100 }), policy, runDir: 'runs/remark', loadPolicy: (d) => BuiltinPolicy.load(d) });
 */
export async function train(options: TrainOptions): Promise<TrainResult> {
  const { policy } = options;
  if (!policy) throw new GrpoError('GRPO_INVALID_ARGUMENT', 'train: expected a policy');
  checkDevice(options.config, policy);
  const config = withAdapters(options.config, policy);
  checkPushable(config, policy);
  const dir = new RunDir(options.runDir);
  await dir.create(config);
  await ensureAdapterBase(policy, join(dir.path, 'base')); // a LoRA policy's checkpoints name their base folder
  const ctx: RunContext = {
    config, policy, dir, loadPolicy: options.loadPolicy,
    reference: await referenceFor(options, dir),
    task: options.task ?? createTask(config, tokenizerOf(policy)),
    ownsTask: !options.task,
    lossOptions: config.loss,
    rollouts: remoteSource(config),
    state: initialState(config),
    onEvent: options.onEvent ?? (() => undefined),
    stop: options.stop ?? { requested: false },
  };
  return runLoop(ctx, options.skipTest);
}
