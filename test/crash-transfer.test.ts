// Crash hunting, inputs: every public async kernel with each input typed array transferred (detached, its memory
// scribbled over and collected) right after the call starts, with its inputs garbage-collected mid-call, and with
// each caller-supplied output transferred. Before async calls copied their inputs the worker read the detached
// memory (SIGSEGV, or results of the scribbles); now each result is bitwise the sync call's and a transferred
// output rejects with GRPO_DETACHED_BUFFER. Cases: test/helpers/crash-cases.mjs; each runs in its own process.
import { describe, expect, it } from 'vitest';
import { CASES } from './helpers/crash-cases.mjs';
import { runCrashChild } from './helpers/crash-run.js';

describe.concurrent('async kernels survive their inputs being transferred or collected mid-call', () => {
  for (const name of Object.keys(CASES)) {
    it(name, async () => {
      // One libuv thread, kept busy by the child while it detaches: each call starts after its inputs are gone.
      const run = await runCrashChild(['transfer', name], { UV_THREADPOOL_SIZE: '1' });
      expect(run.signal, run.output).toBeNull();
      expect(run.code, run.output).toBe(0);
      expect(run.output).not.toContain('FAIL');
    });
  }
});
