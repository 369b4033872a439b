// The text of a progress bar and of a phase's closing line: counts, rate, elapsed time and ETA.

/** Where a phase stands. */
export interface PhaseState {
  name: string;
  /** Units done and the total (value starts at `start`: a resumed run begins at its saved step). */
  value: number;
  total: number;
  /** The value when timing began: rate and ETA count only the units done since. */
  start: number;
  /** Plural unit name: "steps". */
  unit: string;
  elapsedMs: number;
  status: string;
}

/** 75 s → "1:15", 3725 s → "1:02:05". */
export function clock(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${m}:${sec}`;
}

/** Units per second, or seconds per unit when slower than one a second; "—" before the first. */
export function rate(s: PhaseState): string {
  const done = s.value - s.start, seconds = s.elapsedMs / 1000;
  if (done <= 0 || seconds <= 0) return `— ${s.unit}/s`;
  const perSecond = done / seconds;
  const one = s.unit.replace(/s$/, '');
  return perSecond >= 1 ? `${perSecond.toFixed(1)} ${s.unit}/s` : `${(seconds / done).toFixed(1)} s/${one}`;
}

/** Remaining time at the rate so far, or "—" before the first unit. */
export function eta(s: PhaseState): string {
  const done = s.value - s.start;
  if (done <= 0) return '—';
  return clock(((s.total - s.value) * s.elapsedMs) / done / 1000);
}

const BAR_WIDTH = 20;

/** One terminal line: "train ccr [██████░░░░] 60% 6/10 steps | 2.1 s/step | 0:12, ETA 0:08 | reward 0.41", cut to `columns`. */
export function barLine(s: PhaseState, columns: number): string {
  const fraction = s.total > 0 ? Math.min(1, Math.max(0, s.value / s.total)) : 1;
  const filled = Math.round(fraction * BAR_WIDTH);
  const parts = [
    `${s.name} [${'█'.repeat(filled)}${'░'.repeat(BAR_WIDTH - filled)}] ${Math.floor(fraction * 100)}% ${s.value}/${s.total} ${s.unit}`,
    rate(s),
    `${clock(s.elapsedMs / 1000)}, ETA ${eta(s)}`,
    ...(s.status ? [s.status] : []),
  ];
  const line = parts.join(' | ');
  return [...line].length < columns ? line : `${[...line].slice(0, Math.max(columns - 2, 0)).join('')}…`;
}

/** The one line a finished phase leaves in a log: "train ccr: 10/10 steps in 21.3 s (2.1 s/step) — summary". */
export function summaryLine(s: PhaseState, summary: string): string {
  return `${s.name}: ${s.value}/${s.total} ${s.unit} in ${(s.elapsedMs / 1000).toFixed(1)} s (${rate(s)})${summary ? ` — ${summary}` : ''}`;
}
