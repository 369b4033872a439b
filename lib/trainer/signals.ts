// Ctrl-C: the first SIGINT (or SIGTERM) asks the run to finish its current step, save and return;
// a second one exits at once (the last good checkpoint is intact: checkpoints are atomic).

/** Set `requested` to make a run stop after its current step (checked between steps). */
export interface StopFlag {
  requested: boolean;
}

/**
 * Routes SIGINT/SIGTERM to `flag` until the returned function is called.
 * `notify` is told once, on the first signal (e.g. to print "finishing the step…").
 */
export function stopOnSignals(flag: StopFlag, notify: (message: string) => void = () => undefined): () => void {
  const handler = (signal: NodeJS.Signals) => {
    if (flag.requested) process.exit(signal === 'SIGINT' ? 130 : 143);
    flag.requested = true;
    notify(`${signal}: finishing the current step, then saving a checkpoint (press Ctrl-C again to quit now)`);
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  };
}
