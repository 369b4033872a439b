// Ctrl-C: the first SIGINT (or SIGTERM) asks the run to finish its current step, save and return;
// a second one exits at once (the last good checkpoint is intact: checkpoints are atomic). Either way
// the process ends with the shell's status for that signal, 128 + its number (SIGINT 130, SIGTERM 143).
import { constants } from 'node:os';

/** The signals a run stops on. */
export type StopSignal = 'SIGINT' | 'SIGTERM';

/** Set `requested` to make a run stop after its current step (checked between steps). */
export interface StopFlag {
  requested: boolean;
  /** The signal that set `requested`, when one did. */
  signal?: StopSignal;
}

/** The exit status of a process stopped by `signal`: 128 + the signal's number. */
export function signalExitCode(signal: StopSignal): number {
  return 128 + constants.signals[signal];
}

/** Thrown by the command line once a run stopped by a signal has saved: its exit status is the signal's. */
export class StoppedBySignal extends Error {
  readonly exitCode: number;

  constructor(readonly signal: StopSignal, message: string) {
    super(message);
    this.name = 'StoppedBySignal';
    this.exitCode = signalExitCode(signal);
  }
}

/**
 * Routes SIGINT/SIGTERM to `flag` until the returned function is called.
 * `notify` is told once, on the first signal (e.g. to print "finishing the step…").
 */
export function stopOnSignals(flag: StopFlag, notify: (message: string) => void = () => undefined): () => void {
  const handler = (signal: StopSignal) => {
    if (flag.requested) process.exit(signalExitCode(signal));
    flag.requested = true;
    flag.signal = signal;
    notify(`${signal}: finishing the current step, then saving a checkpoint (press Ctrl-C again to quit now)`);
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  };
}
