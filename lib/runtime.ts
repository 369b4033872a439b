// Process-wide settings of the native core.
import { native } from './binding/index.js';
import * as check from './validate.js';

/** Sets the size of the kernel thread pool; 0 selects the number of available cores. */
export function setThreads(threads: number): void {
  native().setThreads(check.integer('setThreads threads', threads, 0, 1024));
}

/** The size of the kernel thread pool. */
export function getThreads(): number {
  return native().getThreads();
}

/** The SIMD path the CPU kernels dispatched to on this machine. */
export function cpuPath(): 'avx512' | 'avx2' | 'generic' {
  return native().cpuPath();
}
