// Shared timing helpers for the kernel benchmarks: benchmark.js statistics for sync calls,
// and the process's peak resident memory.
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
