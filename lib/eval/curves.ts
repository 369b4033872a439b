/**
 * Training curves: steps-to-target between two validation curves (linear interpolation between
 * validation points, in steps and in elapsed time), trailing means and first/last-window summaries.
 */
import { GrpoError } from '../errors.js';
import * as opt from '../options/schema.js';
import { integer, number as numberArg } from '../validate.js';

/** One validation point of a run. */
export interface CurvePoint {
  step: number;
  value: number;
  /** Elapsed training time at this step (any unit, e.g. seconds). */
  time?: number;
}

/** Options of {@link stepsToTarget}. */
export const STEPS_TO_TARGET_OPTIONS = {
  better: opt.choice(['higher', 'lower'] as const, 'higher', '"higher": the metric improves upward (recall); "lower": downward (loss).'),
};

export type StepsToTargetOptions = opt.OptionsOf<typeof STEPS_TO_TARGET_OPTIONS>;

/** Where run A first reaches run B's value at B's step. */
export interface StepsToTarget {
  /** B's value at `stepB` (interpolated between B's points). */
  target: number;
  stepB: number;
  /**
   * False when the target is no better than B's first validation value (e.g. a recall target of 0):
   * any run "reaches" it where it starts, so no step or speed-up is defined and stepA, ratio and the
   * times are null.
   */
  defined: boolean;
  /** First step at which A reaches `target`, interpolated; null when it never does. */
  stepA: number | null;
  /** stepA / stepB (below 1: A gets there sooner); null when A never does. */
  ratio: number | null;
  /** Elapsed times, when both curves carry `time` at every point; else null. */
  timeB: number | null;
  timeA: number | null;
  timeRatio: number | null;
}

function checkCurve(name: string, curve: readonly CurvePoint[]): void {
  if (!Array.isArray(curve) || curve.length === 0) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${name} to be a non-empty array of { step, value } points`);
  }
  curve.forEach((point, i) => {
    numberArg(`${name}[${i}].step`, point?.step, Number.isFinite, 'finite');
    numberArg(`${name}[${i}].value`, point.value, Number.isFinite, 'finite');
    if (i > 0 && point.step <= curve[i - 1].step) {
      throw new GrpoError('GRPO_VALUE_RANGE', `Expected ${name} steps strictly increasing but ${name}[${i}].step = ${point.step} follows ${curve[i - 1].step}`);
    }
  });
}

const lerp = (a: number, b: number, t: number) => a + (b - a) * t;
const hasTime = (curve: readonly CurvePoint[]) => curve.every((p) => Number.isFinite(p.time));

/** Value (and time) of a curve at `step`, linear between points; outside the curve: undefined. */
export function curveAt(curve: readonly CurvePoint[], step: number): { value: number; time: number | null } | undefined {
  for (let i = 0; i < curve.length; i++) {
    if (curve[i].step < step) continue;
    if (curve[i].step === step) return { value: curve[i].value, time: curve[i].time ?? null };
    if (i === 0) return undefined;
    const t = (step - curve[i - 1].step) / (curve[i].step - curve[i - 1].step);
    const time = hasTime([curve[i - 1], curve[i]]) ? lerp(curve[i - 1].time as number, curve[i].time as number, t) : null;
    return { value: lerp(curve[i - 1].value, curve[i].value, t), time };
  }
  return undefined;
}

/** First crossing of `target` by the curve, interpolated: [step, time] or undefined. */
function firstReach(curve: readonly CurvePoint[], target: number, sign: number): [number, number | null] | undefined {
  const reached = (v: number) => sign * (v - target) >= 0;
  for (let i = 0; i < curve.length; i++) {
    if (!reached(curve[i].value)) continue;
    if (i === 0) return [curve[0].step, curve[0].time ?? null];
    const [before, at] = [curve[i - 1], curve[i]];
    const t = (target - before.value) / (at.value - before.value);
    return [lerp(before.step, at.step, t), hasTime([before, at]) ? lerp(before.time as number, at.time as number, t) : null];
  }
  return undefined;
}

/**
 * The step at which run A first reaches run B's value at `stepB`, by linear interpolation between A's
 * validation points, and the ratio stepA / stepB; the same in elapsed time when both curves carry it.
 * Not defined (`defined: false`) when B did not improve on its first validation value by `stepB`.
 * @example stepsToTarget([{ step: 0, value: 0 }, { step: 100, value: 0.4 }], [{ step: 0, value: 0 }, { step: 200, value: 0.2 }], 200).stepA // 50
 */
export function stepsToTarget(a: readonly CurvePoint[], b: readonly CurvePoint[], stepB: number, options: StepsToTargetOptions = {}): StepsToTarget {
  const { better } = opt.checkOptions(STEPS_TO_TARGET_OPTIONS, opt.plainNaming('stepsToTarget options'), options, opt.defaultsOf(STEPS_TO_TARGET_OPTIONS));
  checkCurve('a', a);
  checkCurve('b', b);
  const atB = curveAt(b, numberArg('stepB', stepB, Number.isFinite, 'finite'));
  if (!atB) throw new GrpoError('GRPO_VALUE_RANGE', `Expected stepB within curve b [${b[0].step}, ${b[b.length - 1].step}] but received ${stepB}`);
  const sign = better === 'higher' ? 1 : -1;
  const defined = sign * (atB.value - b[0].value) > 0;
  const reach = defined ? firstReach(a, atB.value, sign) : undefined;
  const timeB = hasTime(a) && hasTime(b) ? atB.time : null;
  const timeA = timeB === null || !reach ? null : reach[1];
  return {
    target: atB.value,
    stepB,
    defined,
    stepA: reach ? reach[0] : null,
    ratio: reach && stepB !== 0 ? reach[0] / stepB : null,
    timeB,
    timeA,
    timeRatio: timeA !== null && timeB ? timeA / timeB : null,
  };
}

/** Default window of {@link trailingMean} and {@link summarizeSeries}. */
export const CURVE_DEFAULTS = Object.freeze({ window: 50 });

/**
 * Trailing means: out[i] = mean of values[max(0, i − window + 1) .. i] (the available prefix at the
 * start). Running sum, re-summed every window so rounding does not accumulate.
 */
export function trailingMean(values: ArrayLike<number>, window: number = CURVE_DEFAULTS.window): Float64Array {
  integer('window', window, 1);
  // out [steps]
  const out = new Float64Array(values.length);
  let sum = 0;
  for (let i = 0; i < values.length; i++) {
    sum += values[i];
    if (i >= window) sum -= values[i - window];
    if (i % window === window - 1) sum = sumRange(values, Math.max(0, i - window + 1), i + 1);
    out[i] = sum / Math.min(i + 1, window);
  }
  return out;
}

function sumRange(values: ArrayLike<number>, start: number, end: number): number {
  let sum = 0;
  for (let i = start; i < end; i++) sum += values[i];
  return sum;
}

/** Mean of the first and last `window` values of a logged series, and their difference. */
export interface SeriesSummary {
  first: number;
  last: number;
  /** last − first */
  change: number;
  /** Values in each window (fewer when the series is shorter; the windows then overlap). */
  window: number;
  length: number;
}

/** First-`window` / last-`window` means of a series (NaN for an empty one). */
export function summarizeSeries(values: ArrayLike<number>, window: number = CURVE_DEFAULTS.window): SeriesSummary {
  integer('window', window, 1);
  const n = values.length;
  const w = Math.min(window, n);
  const first = w > 0 ? sumRange(values, 0, w) / w : NaN;
  const last = w > 0 ? sumRange(values, n - w, n) / w : NaN;
  return { first, last, change: last - first, window: w, length: n };
}
