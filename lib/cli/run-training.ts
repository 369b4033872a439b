// Training and SFT with a progress bar and Ctrl-C handling: shared by `grpo train`, `grpo sft` and `grpo demo`.
import type { Policy } from '../policy/policy.js';
import type { TrainerConfig, ValidationConfig } from '../trainer/config.js';
import { resume } from '../trainer/resume.js';
import { sft, type SftExample, type SftOptions } from '../trainer/sft.js';
import { stopOnSignals } from '../trainer/signals.js';
import { train, type TrainerEvent, type TrainResult } from '../trainer/train.js';
import { validatesAt } from '../trainer/validation.js';
import { loadPolicy } from './models.js';
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

/** Trains (or resumes) a run with a progress bar; Ctrl-C finishes the step, saves and returns. */
export async function trainWithProgress(
  reporter: Reporter, label: string,
  run: { config: TrainerConfig; policy: Policy; runDir: string } | { resumeDir: string; config: TrainerConfig; steps?: number },
): Promise<TrainResult> {
  const stop = { requested: false };
  const release = stopOnSignals(stop, (m) => reporter.line(m));
  const steps = ('resumeDir' in run ? run.steps : undefined) ?? run.config.steps;
  const progress = progressEvents(reporter, label, steps, run.config.validation);
  // a run directory written before the device option has none: the CPU, where it ran
  const load = (dir: string) => loadPolicy(dir, run.config.device ?? 'cpu');
  try {
    const result = 'resumeDir' in run
      ? await resume(run.resumeDir, { loadPolicy: load, steps: run.steps, onEvent: progress.onEvent, stop })
      : await train({ ...run, loadPolicy: load, onEvent: progress.onEvent, stop });
    progress.done(result);
    if (result.stopReason === 'interrupted') reporter.line(`Interrupted: checkpoint saved; continue with  grpo train --resume ${result.runDir}`);
    return result;
  } catch (error) {
    progress.failed();
    throw error;
  } finally {
    release();
  }
}

/** SFT with a progress bar; Ctrl-C stops after the current step and still saves. */
export async function sftWithProgress(
  reporter: Reporter, label: string, policy: Policy, examples: readonly SftExample[], options: SftOptions, out: string,
): Promise<void> {
  const stop = { requested: false };
  const release = stopOnSignals(stop, (m) => reporter.line(m));
  const phase = reporter.phase(label, options.steps, 'steps');
  let loss = NaN;
  try {
    await sft(policy, examples, options, { out, stop, onStep: (r) => phase.update(r.step, `loss ${fmt((loss = r.loss))}`) });
    phase.done(`final loss ${fmt(loss)}; saved ${out}/policy`);
  } catch (error) {
    phase.done('stopped by an error');
    throw error;
  } finally {
    release();
  }
}
