// Training and SFT with a progress bar and Ctrl-C handling: shared by `grpo train`, `grpo sft` and `grpo demo`.
// A phase stopped by a signal saves, then ends the whole command with that signal's exit status.
import type { Policy } from '../policy/policy.js';
import type { ConfigInput, TrainerConfig, ValidationConfig } from '../trainer/config.js';
import { resume, resumeConfig } from '../trainer/resume.js';
import { RunDir } from '../trainer/run-dir.js';
import { sft, SFT_DEFAULTS, type SftExample, type SftOptions } from '../trainer/sft.js';
import { signalExitCode, stopOnSignals, StoppedBySignal, type StopFlag } from '../trainer/signals.js';
import { train, type TrainerEvent, type TrainResult } from '../trainer/train.js';
import { validatesAt } from '../trainer/validation.js';
import { loadPolicy } from './models.js';
import type { Task } from '../trainer/task.js';
import type { Reporter } from './progress.js';

const fmt = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? '—' : x.toFixed(3));

/** The run's bar follows its steps; the device, each validation and the test result are printed as they come. */
function progressEvents(reporter: Reporter, label: string, steps: number, validation: ValidationConfig) {
  const phase = reporter.phase(label, steps, 'steps');
  const metric = validation.metric;
  let reward = '';
  const onEvent = (e: TrainerEvent) => {
    if (e.type === 'start') {
      reporter.note(`${label}: policy on ${e.device}${e.step > 0 ? `, resuming at step ${e.step}` : ''}`);
      phase.startAt(e.step);
    } else if (e.type === 'step') {
      reward = `reward ${fmt(e.record.stats.rewardMean)} | ${e.record.tokens.completion} completion tokens`;
      phase.update(e.record.step, validatesAt(validation, e.record.step, steps) ? `${reward} | validating…` : reward);
    } else if (e.type === 'validation') {
      reporter.note(`${label}: validation at step ${e.step}: ${metric} ${fmt(e.values[metric])}${e.improved ? ' (best so far)' : ''}`);
      phase.status(reward);
    } else if (e.type === 'checkpoint' && e.step >= steps) {
      phase.status('test evaluation of the selected checkpoint…');
    } else if (e.type === 'test') {
      reporter.note(`${label}: test of the step-${e.checkpointStep} checkpoint: ${metric} ${fmt(e.values[metric])}`);
    }
  };
  const done = (r: TrainResult) => phase.done(`${r.stopReason} after ${r.steps} steps; best ${metric} ${fmt(r.best ?? undefined)} at step ${r.bestStep}`);
  return { onEvent, done, failed: () => phase.done('stopped by an error') };
}

/** After a signal stopped a phase and it saved: the error that ends the command with the signal's exit status. */
function stoppedError(flag: StopFlag): StoppedBySignal {
  const signal = flag.signal ?? 'SIGINT';
  return new StoppedBySignal(signal, `stopped by ${signal} after saving (exit status ${signalExitCode(signal)})`);
}

/**
 * Trains (or resumes) a run with a progress bar. Ctrl-C (SIGINT) or SIGTERM finishes the step, saves,
 * prints the resume command and throws {@link StoppedBySignal} (exit status 130 / 143).
 */
export async function trainWithProgress(
  reporter: Reporter, label: string,
  run: { config: TrainerConfig; policy: Policy; runDir: string; task?: Task } | { resumeDir: string; overrides: ConfigInput },
): Promise<TrainResult> {
  const config = 'resumeDir' in run ? resumeConfig(await new RunDir(run.resumeDir).config(), run.overrides) : run.config;
  const stop: StopFlag = { requested: false };
  const release = stopOnSignals(stop, (m) => reporter.line(m));
  const progress = progressEvents(reporter, label, config.steps, config.validation);
  // a run directory written before the device option has none: the CPU (its default), where it ran
  const load = (dir: string) => loadPolicy(dir, config.device);
  try {
    const result = 'resumeDir' in run
      ? await resume(run.resumeDir, { loadPolicy: load, overrides: run.overrides, onEvent: progress.onEvent, stop })
      : await train({ ...run, loadPolicy: load, onEvent: progress.onEvent, stop });
    progress.done(result);
    if (result.stopReason === 'interrupted') {
      reporter.line(`Interrupted: checkpoint saved; continue with  grpo train --resume ${result.runDir}`);
      throw stoppedError(stop);
    }
    return result;
  } catch (error) {
    progress.failed();
    throw error;
  } finally {
    release();
  }
}

/** SFT with a progress bar; Ctrl-C stops after the current step, still saves, then throws {@link StoppedBySignal}. */
export async function sftWithProgress(
  reporter: Reporter, label: string, policy: Policy, examples: readonly SftExample[], options: SftOptions, out: string,
): Promise<void> {
  const stop: StopFlag = { requested: false };
  const release = stopOnSignals(stop, (m) => reporter.line(m));
  const phase = reporter.phase(label, options.steps ?? SFT_DEFAULTS.steps, 'steps');
  let loss = NaN;
  try {
    await sft(policy, examples, options, { out, stop, onStep: (r) => phase.update(r.step, `loss ${fmt((loss = r.loss))}`) });
    phase.done(`final loss ${fmt(loss)}; saved ${out}/policy`);
    if (stop.requested) throw stoppedError(stop);
  } catch (error) {
    phase.done('stopped by an error');
    throw error;
  } finally {
    release();
  }
}
