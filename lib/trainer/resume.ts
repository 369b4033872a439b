// Resuming a run directory exactly where its latest checkpoint left it: the policy with its optimizer
// state, the step counter, the sampler position and RNG counter, the validation and stopping state.
// Rows logged after that checkpoint are dropped so the log reads like an uninterrupted run. A run that
// stopped before its test evaluation and report were written gets them on resume.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { GrpoError } from '../errors.js';
import { mergeConfig, TRAINER_DEFAULTS, type ConfigInput, type TrainerConfig } from './config.js';
import { needsReference, type StepRecord } from './loop.js';
import { remoteSource, restoreVersion } from './remote-source.js';
import { readJsonlRows, RunDir, type TrainerState } from './run-dir.js';
import { tokenizerOf } from './rollout.js';
import type { StopFlag } from './signals.js';
import type { Task } from './task.js';
import { createTask } from './tasks.js';
import { initialState, runLoop, type PolicyLoader, type TrainerEvent, type TrainResult } from './train.js';
import { stopAfter, type StopReason } from './validation.js';

/**
 * Options a resume may change: when the run ends, where it runs, how it keeps activations, how often it saves,
 * its stopping rules and the size of its final test. Any other would change what the remaining steps or validations
 * compute, so the run would no longer match its own checkpoints, logs and best.
 */
export const RESUMABLE_OPTIONS: readonly string[] = Object.freeze([
  'steps', 'device', 'checkpointEvery', 'testPrompts', 'validation.patience', 'validation.klThreshold',
  // how a training forward keeps its activations: the gradients are bitwise the same either way
  'recompute',
  // how many rows a rollout generates per native call: the same completions, bit for bit
  'generation.maxRows',
  // where the remote rollouts come from and how hard to try (a restarted or moved server); not what they sample
  'rollouts.endpoints', 'rollouts.maxInFlight', 'rollouts.timeoutMs', 'rollouts.retries', 'rollouts.backoffMs', 'rollouts.adapterPath',
  'rollouts.failover',
]);

export interface ResumeOptions {
  loadPolicy: PolicyLoader;
  /** Raise the run's maximum steps (a finished run then continues); same as `overrides.steps`. @defaultValue the saved config's */
  steps?: number;
  /** Changes to the saved config: only {@link RESUMABLE_OPTIONS}; checked like a first run's options. @defaultValue none */
  overrides?: ConfigInput;
  task?: Task;
  onEvent?: (event: TrainerEvent) => void;
  stop?: StopFlag;
  skipTest?: boolean;
}

/** The saved state must be the one this config produces at its step (a config edited by hand is refused). */
function checkState(config: TrainerConfig, state: TrainerState, dir: string): void {
  const expected = initialState(config);
  const same = state.sampler.unit === expected.sampler.unit && state.sampler.seed === expected.sampler.seed &&
    state.sampler.batchSize === expected.sampler.batchSize && state.sampler.position === state.step &&
    state.rng.seed === expected.rng.seed && state.rng.counter === state.step;
  if (!same) {
    throw new GrpoError('GRPO_DATA_FORMAT', `${dir}: the checkpoint's sampler/RNG state ${JSON.stringify({ sampler: state.sampler, rng: state.rng })} ` +
      `does not match config.json (recipe ${config.recipe}, seed ${config.seed}, groups ${config.groups}); was config.json edited?`);
  }
}

/** Dotted paths of the values set in a partial config (`{ validation: { every: 5 } }` → "validation.every"). */
function leafPaths(input: object, prefix = ''): string[] {
  return Object.entries(input).flatMap(([key, value]) => value !== null && typeof value === 'object' && !Array.isArray(value)
    ? leafPaths(value, `${prefix}${key}.`)
    : [`${prefix}${key}`]);
}

/**
 * The saved config of a run with `overrides` applied. Unknown options and bad values are refused as in a
 * first run, and so is any option outside {@link RESUMABLE_OPTIONS}. Options the run was saved without
 * (written by an earlier version) take their defaults.
 */
export function resumeConfig(saved: TrainerConfig, overrides: ConfigInput = {}): TrainerConfig {
  const config = mergeConfig(TRAINER_DEFAULTS, saved, overrides);
  const fixed = leafPaths(overrides).filter((path) => !RESUMABLE_OPTIONS.includes(path));
  if (fixed.length > 0) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `resume continues the run with its saved config.json; ${fixed.map((p) => `"${p}"`).join(', ')} ` +
      `cannot change on resume (these can: ${RESUMABLE_OPTIONS.join(', ')}); start a new run to change ${fixed.length > 1 ? 'them' : 'it'}`);
  }
  return config;
}

/** The option whose change lets a run stopped by `reason` continue. */
const CONTINUED_BY: Record<Exclude<StopReason, 'interrupted'>, string> = {
  maxSteps: 'steps', patience: 'validation.patience', klThreshold: 'validation.klThreshold',
};

/** The stopping rule that fires at the run's last step under `config` (the resumed options), if any. */
async function stopsUnder(dir: RunDir, config: TrainerConfig, state: TrainerState): Promise<StopReason | null> {
  const last = (await readJsonlRows<StepRecord>(dir.file('metrics'))).find((r) => r.step === state.step);
  return stopAfter(state.validation, config.validation, state.step, config.steps, last?.lossStats.kl ?? 0);
}

/**
 * What a stopped run may still do: continue when interrupted, or when none of its stopping rules fires at
 * its step under the resumed options (a raised `steps` or patience; its earlier test and report are then
 * removed: they describe the earlier end); else finish what it had left, the test evaluation and the
 * report. A run with nothing left is refused.
 */
async function reopen(dir: RunDir, config: TrainerConfig, state: TrainerState, skipTest: boolean): Promise<void> {
  if (config.steps < state.step) {
    throw new GrpoError('GRPO_VALUE_RANGE', `Expected steps to be an integer >= ${state.step} (steps done) but received ${config.steps}`);
  }
  if (state.stopReason === 'interrupted') state.stopReason = null;
  if (state.stopReason !== null && (await stopsUnder(dir, config, state)) === null) {
    await dir.clearResults();
    state.stopReason = null;
  }
  if (state.stopReason !== null && (skipTest || dir.finished())) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `${dir.path} already finished (${state.stopReason} at step ${state.step}); ` +
      `to continue it, resume with a larger ${CONTINUED_BY[state.stopReason]}`);
  }
}

/**
 * The frozen reference saved when the run began. A run that began with β = 0 and no KL stop saved none, and the
 * policy it started from is gone, so a KL stop cannot be added to it on resume.
 */
async function savedReference(runDir: string, loadPolicy: PolicyLoader) {
  const dir = join(runDir, 'reference');
  if (!existsSync(dir)) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `${runDir} has no frozen reference (${dir}): it began with loss.beta = 0 and no KL stop, ` +
      'so validation.klThreshold cannot be set on resume; start a new run with it');
  }
  return loadPolicy(dir);
}

/**
 * Continues the run in `runDir` from its latest checkpoint, or writes the test evaluation and report a
 * stopped run had left. Metrics after resuming equal those of an uninterrupted run with the same config
 * (timings aside).
 */
export async function resume(runDir: string, options: ResumeOptions): Promise<TrainResult> {
  const dir = new RunDir(runDir);
  const steps = options.steps === undefined ? {} : { steps: options.steps };
  const config = resumeConfig(await dir.config(), { ...options.overrides, ...steps });
  const latest = await dir.latest();
  if (!latest) throw new GrpoError('GRPO_INVALID_ARGUMENT', `${runDir} has no checkpoint yet; start the run again instead of resuming`);
  const { state } = latest;
  checkState(config, state, runDir);
  await reopen(dir, config, state, options.skipTest ?? false);
  await dir.truncateAfter('metrics', state.step);
  await dir.truncateAfter('validation', state.step);
  const policy = await options.loadPolicy(latest.policyDir);
  const rollouts = remoteSource(config);
  if (rollouts && state.stopReason === null) await restoreVersion(rollouts, policy, runDir, state.step); // steps will sample again
  const reference = needsReference(config) ? (policy.adapters?.base() ?? (await savedReference(runDir, options.loadPolicy))) : undefined;
  return runLoop({
    config, policy, dir, state, loadPolicy: options.loadPolicy, reference,
    task: options.task ?? createTask(config, tokenizerOf(policy)),
    ownsTask: !options.task,
    lossOptions: config.loss,
    rollouts,
    onEvent: options.onEvent ?? (() => undefined),
    stop: options.stop ?? { requested: false },
  }, options.skipTest);
}
