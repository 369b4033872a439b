// This machine's roofs, measured in the same run as the kernels they judge:
// a streaming read of 512 MB (memory-read roof) and independent FMA chains (FP32 FLOP roof).
import { getThreads, cpuPath } from '../dist/index.js';
import { native } from '../dist/binding/index.js';

const READ_FLOATS = 128 * 1024 * 1024; // 512 MB: far beyond the caches (the reported L3 is the host's)

function best(times) {
  return Math.min(...times);
}

export function measureReadGBs(repeats = 5) {
  const data = new Float32Array(READ_FLOATS).fill(1);
  native().probeRead(data); // first touch
  const seconds = best(Array.from({ length: repeats }, () => native().probeRead(data)));
  return (data.byteLength / seconds) / 1e9;
}

export function measureFmaGflops(repeats = 5) {
  native().probeFma(1e6);
  const runs = Array.from({ length: repeats }, () => native().probeFma(2e7));
  return Math.max(...runs.map((r) => r.flops / r.seconds)) / 1e9;
}

/** { readGBs, fmaGflops, threads, cpuPath } */
export async function measureRoofs() {
  return { readGBs: measureReadGBs(), fmaGflops: measureFmaGflops(), threads: getThreads(), cpuPath: cpuPath() };
}

/** A console.table row for a memory-bound kernel: median and best time, best bandwidth against the read roof (`roofs`). */
export function readRoofRow({ name, ms, best, bytes, referenceMs, roofs }) {
  return {
    kernel: name,
    'median ms': ms.toFixed(3),
    'best ms': best.toFixed(3),
    'GB/s (best)': (bytes / best / 1e6).toFixed(1),
    'of read roof (best)': `${((100 * bytes) / best / 1e6 / roofs.readGBs).toFixed(0)}%`,
    'TS reference ms': referenceMs.toFixed(1),
    'x TS reference': (referenceMs / ms).toFixed(0),
  };
}
