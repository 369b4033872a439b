// Progress of the command line. On a terminal: the running phase is one live bar (redrawn every second, so
// its elapsed time and ETA move during a long step or a validation) with its rate; lines printed meanwhile
// go above it, and a finished phase leaves one summary line. Anywhere else (a pipe, a CI log): one line per
// phase when it ends, and the notes (device, validation results) as plain lines.
import { barLine, summaryLine, type PhaseState } from './progress-format.js';

export interface Phase {
  /** Advance to `value` of `total`; `status` (e.g. "reward 0.41") replaces the status text when given. */
  update(value: number, status?: string): void;
  /** Replace the status text only (e.g. "validating…"). */
  status(text: string): void;
  /** The phase resumes at `value` (a resumed run): its rate and ETA count only what follows. */
  startAt(value: number): void;
  /** End the phase with a summary; later calls do nothing. */
  done(summary?: string): void;
}

export interface Reporter {
  /** A phase of `total` units (plural name, e.g. "steps"). */
  phase(name: string, total: number, unit?: string): Phase;
  /** A result line on stdout (kept by --quiet). */
  line(text: string): void;
  /** A progress notice on the progress stream (dropped by --quiet): the device, each validation's result. */
  note(text: string): void;
}

/** What the reporter writes to: process.stderr / process.stdout, or a stand-in (tests). */
export interface TextStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface ReporterOptions {
  /** Results only: no phases, no notes. @defaultValue false */
  quiet?: boolean;
  /** Where progress goes; bars when it is a TTY. @defaultValue process.stderr */
  stream?: TextStream;
  /** Where results go. @defaultValue process.stdout */
  out?: TextStream;
  /** Milliseconds between redraws of a live bar. @defaultValue 1000 */
  refreshMs?: number;
}

/** The live bar of a terminal: at most one, redrawn on a timer, cleared while other lines are written. */
function liveBar(stream: TextStream, refreshMs: number) {
  let current: (() => PhaseState) | undefined;
  let timer: NodeJS.Timeout | undefined;
  const draw = () => current && stream.write(`\r${barLine(current(), stream.columns ?? 80)}\x1b[K`);
  const clear = () => current && stream.write('\r\x1b[K');
  return {
    show(snapshot: () => PhaseState) {
      current = snapshot;
      timer ??= setInterval(draw, refreshMs).unref();
      draw();
    },
    /** Writes lines where the bar is, then redraws the bar below them. */
    above(write: () => void) {
      clear();
      write();
      draw();
    },
    /** Replaces the bar of `snapshot` with its final line. */
    finish(snapshot: () => PhaseState, text: string) {
      if (current !== snapshot) return void stream.write(`${text}\n`);
      clear();
      stream.write(`${text}\n`);
      current = undefined;
      clearInterval(timer);
      timer = undefined;
    },
  };
}

type Display = { show(s: () => PhaseState): void; finish(s: () => PhaseState, text: string): void };

function trackPhase(name: string, total: number, unit: string, display: Display): Phase {
  let began = performance.now(), updated = false, finished = false;
  const state: PhaseState = { name, value: 0, total, start: 0, unit, elapsedMs: 0, status: '' };
  const snapshot = () => ({ ...state, elapsedMs: performance.now() - began });
  const change = () => !finished && display.show(snapshot);
  change();
  return {
    update(value, status) {
      state.value = value;
      if (status !== undefined) state.status = status;
      updated = true;
      change();
    },
    status(text) {
      state.status = text;
      change();
    },
    startAt(value) {
      state.value = state.start = value;
      began = performance.now();
      change();
    },
    done(summary = '') {
      if (finished) return;
      if (!updated) state.value = total;
      display.finish(snapshot, summaryLine(snapshot(), summary));
      finished = true;
    },
  };
}

/** Live bars when the progress stream is a TTY, one line per phase otherwise; `quiet` prints results only. */
export function createReporter(options: ReporterOptions = {}): Reporter {
  const stream = options.stream ?? process.stderr, out = options.out ?? process.stdout;
  const quiet = options.quiet ?? false;
  const bar = stream.isTTY && !quiet ? liveBar(stream, options.refreshMs ?? 1000) : undefined;
  const write = (target: TextStream, text: string) => (bar ? bar.above(() => target.write(`${text}\n`)) : target.write(`${text}\n`));
  const plain: Display = { show: () => undefined, finish: (_, text) => !quiet && stream.write(`${text}\n`) };
  return {
    line: (text) => write(out, text),
    note: (text) => !quiet && write(stream, text),
    phase: (name, total, unit = 'steps') => trackPhase(name, total, unit, bar ?? plain),
  };
}
