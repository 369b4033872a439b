// Progress bars with ETA (cli-progress) on a terminal; on anything else (a pipe, a CI log, a test)
// one line when a phase starts and one when it ends, so logs stay readable.
import cliProgress from 'cli-progress';

export interface Phase {
  /** Advance to `value` of `total`, with a short status text (e.g. "reward 0.41"). */
  update(value: number, status?: string): void;
  /** End the phase with a summary line. */
  done(summary?: string): void;
}

export interface Reporter {
  phase(name: string, total: number): Phase;
  /** A line of output (results, notices). */
  line(text: string): void;
}

/** Bars on a TTY (stderr), plain start/end lines otherwise; `quiet` prints results only. */
export function createReporter(options: { quiet?: boolean; stream?: NodeJS.WriteStream } = {}): Reporter {
  const stream = options.stream ?? process.stderr;
  const tty = Boolean(stream.isTTY) && !options.quiet;
  return {
    line: (text) => process.stdout.write(`${text}\n`),
    phase(name, total) {
      if (!tty) return plainPhase(name, total, options.quiet ? () => undefined : (t) => stream.write(`${t}\n`));
      const bar = new cliProgress.SingleBar({
        stream, format: `${name.padEnd(28)} [{bar}] {percentage}% | {value}/{total} | ETA {eta_formatted} | {status}`,
        hideCursor: true, etaBuffer: 20,
      }, cliProgress.Presets.shades_classic);
      bar.start(total, 0, { status: '' });
      return {
        update: (value, status = '') => bar.update(value, { status }),
        done: (summary = '') => {
          bar.update(total, { status: summary });
          bar.stop();
        },
      };
    },
  };
}

function plainPhase(name: string, total: number, write: (text: string) => void): Phase {
  const started = performance.now();
  write(`${name}: started (${total})`);
  return {
    update: () => undefined,
    done: (summary = '') => write(`${name}: done in ${((performance.now() - started) / 1000).toFixed(1)} s${summary ? ` — ${summary}` : ''}`),
  };
}
