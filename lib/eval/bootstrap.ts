/**
 * Uncertainty over requests: every metric is a {@link RequestSeries} (per-request sums and counts,
 * value Σ sum / Σ count), resampled with a seeded percentile bootstrap.
 */
import { mulberry32 } from '../data/rng.js';
import { GrpoError } from '../errors.js';
import * as opt from '../options/schema.js';
import { checkOptions } from '../options/schema.js';
import { length, number as numberArg } from '../validate.js';

/**
 * A metric over requests as a ratio of sums: value = Σ_r sum[r] / Σ_r count[r]. A per-request mean
 * has count 1 (0 where undefined); a metric averaged over respondent rows has sum = the request's row
 * total and count = its number of rows, so resampling requests keeps the rows of a request together.
 */
export interface RequestSeries {
  /** sum [requests] */
  readonly sum: Float64Array;
  /** count [requests] (weights ≥ 0) */
  readonly count: Float64Array;
}

export const BOOTSTRAP_OPTIONS = {
  resamples: opt.integer(2000, 'Number of resamples of the requests.', 1, 1e7),
  seed: opt.integer(0, 'Seed of the resampling stream (same seed, same intervals).', 0, 2 ** 32 - 1),
  level: opt.number(0.95, 'Coverage of the percentile interval.', { ok: (v) => v > 0 && v < 1, expectation: 'in (0, 1)' }),
};

/** Options of {@link bootstrap} and {@link pairedBootstrap}. */
export type BootstrapOptions = opt.OptionsOf<typeof BOOTSTRAP_OPTIONS>;

export const BOOTSTRAP_DEFAULTS = opt.defaultsOf(BOOTSTRAP_OPTIONS);

/** A point estimate with its percentile interval. */
export interface Interval {
  readonly estimate: number;
  readonly low: number;
  readonly high: number;
  readonly level: number;
  /** Resamples with a defined value (those whose drawn requests all have count 0 are dropped). */
  readonly resamples: number;
}

/** A series with count 1 per finite value and count 0 (excluded) per NaN. */
export function seriesOf(values: ArrayLike<number>): RequestSeries {
  const sum = new Float64Array(values.length);
  const count = new Float64Array(values.length);
  for (let i = 0; i < values.length; i++) {
    if (Number.isNaN(values[i])) continue;
    sum[i] = values[i];
    count[i] = 1;
  }
  return { sum, count };
}

/** Σ sum / Σ count (NaN when Σ count = 0). */
export function ratioOf(series: RequestSeries): number {
  let sum = 0;
  let count = 0;
  for (let i = 0; i < series.sum.length; i++) {
    sum += series.sum[i];
    count += series.count[i];
  }
  return count > 0 ? sum / count : NaN;
}

/** The q-quantile of sorted values, linear between order statistics (numpy's default, type 7). */
export function quantileSorted(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return NaN;
  const at = q * (sorted.length - 1);
  const below = Math.floor(at);
  const above = Math.min(below + 1, sorted.length - 1);
  return sorted[below] + (at - below) * (sorted[above] - sorted[below]);
}

function resolve(options: BootstrapOptions | undefined): Required<BootstrapOptions> {
  return checkOptions(BOOTSTRAP_OPTIONS, opt.plainNaming('bootstrap options'), options, BOOTSTRAP_DEFAULTS);
}

function checkSeries(name: string, series: RequestSeries, requests: number): void {
  if (!(series?.sum instanceof Float64Array) || !(series.count instanceof Float64Array)) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${name} to be { sum: Float64Array, count: Float64Array }`);
  }
  length(`${name}.sum`, series.sum, requests, '[requests]');
  length(`${name}.count`, series.count, requests, '[requests]');
}

function intervalOf(estimate: number, draws: Float64Array, level: number): Interval {
  const defined = draws.filter((v) => !Number.isNaN(v)).sort();
  const tail = (1 - level) / 2;
  return { estimate, low: quantileSorted(defined, tail), high: quantileSorted(defined, 1 - tail), level, resamples: defined.length };
}

/**
 * Resampled values of each series, one row per series: draws [series, resamples]. Every series sees
 * the same draws of requests (request indices uniform with replacement from a mulberry32 stream).
 */
export function resampleRatios(series: readonly RequestSeries[], options?: BootstrapOptions): Float64Array[] {
  const o = resolve(options);
  const requests = series[0]?.sum?.length ?? 0;
  series.forEach((s, i) => checkSeries(`series[${i}]`, s, requests));
  const draws = series.map(() => new Float64Array(o.resamples));
  if (requests === 0) return draws.map((d) => d.fill(NaN));
  const random = mulberry32(o.seed);
  const drawn = new Int32Array(requests); // request indices of one resample
  for (let b = 0; b < o.resamples; b++) {
    for (let i = 0; i < requests; i++) drawn[i] = Math.floor(random() * requests);
    series.forEach(({ sum, count }, m) => {
      let s = 0;
      let c = 0;
      for (let i = 0; i < requests; i++) {
        s += sum[drawn[i]];
        c += count[drawn[i]];
      }
      draws[m][b] = c > 0 ? s / c : NaN;
    });
  }
  return draws;
}

/**
 * Percentile bootstrap intervals over requests of one or more metrics on the same requests.
 * @example bootstrap([seriesOf([0, 1, 1, 0])])[0] // { estimate: 0.5, low: …, high: …, level: 0.95, resamples: 2000 }
 */
export function bootstrap(series: readonly RequestSeries[], options?: BootstrapOptions): Interval[] {
  const o = resolve(options);
  const draws = resampleRatios(series, o);
  return series.map((s, m) => intervalOf(ratioOf(s), draws[m], o.level));
}

/** Options of {@link pairedBootstrap}. */
export interface PairedBootstrapOptions extends BootstrapOptions {
  /** Multiplier of the difference: 100 reports metrics in [0, 1] in points. @defaultValue 100 */
  scale?: number;
}

/**
 * Paired percentile bootstrap of value(a) − value(b), runs `a` and `b` evaluated on the same requests:
 * each resample draws one set of requests for both. The result is in points (× `scale`).
 */
export function pairedBootstrap(a: RequestSeries, b: RequestSeries, options: PairedBootstrapOptions = {}): Interval {
  const { scale = 100, ...rest } = options;
  numberArg('scale', scale, Number.isFinite, 'finite');
  const o = resolve(rest);
  checkSeries('b', b, a.sum?.length ?? 0);
  const [drawsA, drawsB] = resampleRatios([a, b], o);
  const differences = drawsA.map((v, i) => (v - drawsB[i]) * scale);
  return intervalOf((ratioOf(a) - ratioOf(b)) * scale, differences, o.level);
}
