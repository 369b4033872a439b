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
