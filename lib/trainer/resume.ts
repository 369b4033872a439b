// Resuming a run directory exactly where its latest checkpoint left it: the policy with its optimizer
// state, the step counter, the sampler position and RNG counter, the validation and stopping state.
// Rows logged after that checkpoint are dropped so the log reads like an uninterrupted run.
import { join } from 'node:path';
import { GrpoError } from '../errors.js';
import type { TrainerConfig } from './config.js';
import { needsReference } from './loop.js';
import { RunDir, type TrainerState } from './run-dir.js';
import { tokenizerOf } from './rollout.js';
import type { StopFlag } from './signals.js';
import type { Task } from './task.js';
import { createTask } from './tasks.js';
import { initialState, runLoop, type PolicyLoader, type TrainerEvent, type TrainResult } from './train.js';

export interface ResumeOptions {
  loadPolicy: PolicyLoader;
  /** Raise the run's maximum steps (a finished run then continues). @defaultValue the saved config's */
  steps?: number;
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

/** What a finished run may still do: continue only when `steps` raises its maximum. */
function reopen(config: TrainerConfig, state: TrainerState, steps: number | undefined, dir: string): void {
  if (steps !== undefined) {
    if (!Number.isInteger(steps) || steps < state.step) {
      throw new GrpoError('GRPO_VALUE_RANGE', `Expected steps to be an integer >= ${state.step} (steps done) but received ${steps}`);
    }
    config.steps = steps;
  }
  if (state.stopReason === 'interrupted' || (state.stopReason === 'maxSteps' && state.step < config.steps)) state.stopReason = null;
  if (state.stopReason !== null) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `${dir} already finished (${state.stopReason} at step ${state.step}); pass a larger steps to continue it`);
  }
}

/**
 * Continues the run in `runDir` from its latest checkpoint. Metrics after resuming equal those of an
 * uninterrupted run with the same config (timings aside).
 */
export async function resume(runDir: string, options: ResumeOptions): Promise<TrainResult> {
  const dir = new RunDir(runDir);
  const config = await dir.config();
  const latest = await dir.latest();
  if (!latest) throw new GrpoError('GRPO_INVALID_ARGUMENT', `${runDir} has no checkpoint yet; start the run again instead of resuming`);
  const { state } = latest;
  checkState(config, state, runDir);
  reopen(config, state, options.steps, runDir);
  await dir.truncateAfter('metrics', state.step);
  await dir.truncateAfter('validation', state.step);
  const policy = await options.loadPolicy(latest.policyDir);
  return runLoop({
    config, policy, dir, state, loadPolicy: options.loadPolicy,
    reference: needsReference(config) ? await options.loadPolicy(join(runDir, 'reference')) : undefined,
    task: options.task ?? createTask(config, tokenizerOf(policy)),
    lossOptions: config.loss,
    onEvent: options.onEvent ?? (() => undefined),
    stop: options.stop ?? { requested: false },
  }, options.skipTest);
}
