// Shared timing helpers for the kernel benchmarks: benchmark.js statistics for sync calls, median and
// best of repeated calls, the check a fast result passes before it is timed, and the process's peak memory.
import Benchmark from 'benchmark';
import { readFileSync } from 'node:fs';

/** Mean and relative margin of error of `fn` in milliseconds (benchmark.js, at least `minSamples`). */
export function measure(name, fn, minSamples = 10) {
  const bench = new Benchmark(name, fn, { minSamples, maxTime: 4 });
  bench.run();
  if (bench.error) throw bench.error;
  return { ms: bench.stats.mean * 1e3, rme: bench.stats.rme, samples: bench.stats.sample.length };
}

/** Milliseconds of one call (for slow references that run once). */
export function once(fn) {
  const start = performance.now();
  fn();
  return performance.now() - start;
}

/** Median and best milliseconds of `repeats` calls after two warm-up calls (best: on a shared machine, the least disturbed run). */
export function timeMs(fn, repeats) {
  fn();
  fn();
  const times = Array.from({ length: repeats }, () => {
    const start = process.hrtime.bigint();
    fn();
    return Number(process.hrtime.bigint() - start) / 1e6;
  }).sort((a, b) => a - b);
  return { ms: times[Math.floor(repeats / 2)], best: times[0] };
}

/** Milliseconds of one call and its result. */
export function onceMs(fn) {
  const start = process.hrtime.bigint();
  const result = fn();
  return { ms: Number(process.hrtime.bigint() - start) / 1e6, result };
}

/** Largest |a[i] − b[i]|. */
export function maxAbsDiff(a, b) {
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return worst;
}

/** Throws unless every |actual − expected| ≤ 1e-6 + 1e-4·|expected|. */
export function assertClose(name, actual, expected) {
  let worst = 0;
  for (let i = 0; i < actual.length; i++) {
    worst = Math.max(worst, Math.abs(actual[i] - expected[i]) / (1e-6 + 1e-4 * Math.abs(expected[i])));
  }
  if (!(worst <= 1)) throw new Error(`${name}: native result differs from the reference (worst scaled error ${worst})`);
}

/** Peak resident set size of this process so far, in MB (VmHWM). */
export function peakRssMb() {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

/** Current resident set size in MB (VmRSS). */
export function rssMb() {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

export function fixed(value, digits = 2) {
  return Number.isFinite(value) ? value.toFixed(digits) : String(value);
}

/** Median of `runs` timings of `fn` (awaited) in milliseconds, after one warm-up call. */
async function medianMs(fn, runs) {
  await fn();
  const times = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await fn();
    times.push(performance.now() - start);
  }
  return times.sort((a, b) => a - b)[runs >> 1];
}

/**
 * Prints one line: the async form of a call, which copies its ArrayBuffer inputs and stages its outputs
 * (docs/policy.md, "Async calls and memory"), against the zero-copy sync form and against the async form on
 * SharedArrayBuffer copies of the inputs (used in place). `call(inputs, async)`; inputs: named typed arrays.
 */
export async function asyncCopyCost(label, call, inputs, runs = 7) {
  const onShared = Object.fromEntries(Object.entries(inputs).map(([name, view]) => {
    const copy = new view.constructor(new SharedArrayBuffer(view.byteLength));
    copy.set(view);
    return [name, copy];
  }));
  const sync = await medianMs(() => call(inputs, false), runs);
  const copied = await medianMs(() => call(inputs, true), runs);
  const shared = await medianMs(() => call(onShared, true), runs);
  const mb = Object.values(inputs).reduce((sum, view) => sum + view.byteLength, 0) / 2 ** 20;
  console.log(`async vs sync, ${label} (${fixed(mb, 0)} MB of inputs): sync ${fixed(sync)} ms, async ${fixed(copied)} ms`
    + ` (${fixed(copied / sync)}×, copies), async on SharedArrayBuffers ${fixed(shared)} ms (${fixed(shared / sync)}×, in place)`);
}
