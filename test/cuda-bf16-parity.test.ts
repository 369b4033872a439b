// The fused LM head with bfloat16 hidden/weight on the GPU (bf16 tensor-core GEMM) against the CPU's bf16 path.
// Runs wherever loadCuda() finds a usable GPU; elsewhere that suite is skipped and the reason is printed (the one
// skip the project allows). The no-GPU path of the bf16 kernels ('auto' → CPU, 'cuda' → GRPO_CUDA_UNAVAILABLE)
// runs everywhere, with CUDA made unavailable on purpose (an addon path that does not exist).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadCuda } from '../lib/binding/index.js';
import { GrpoError } from '../lib/errors.js';
import { toBf16 } from '../lib/kernels/bf16.js';
import { linearLogprobsBackwardSync, linearLogprobsSync } from '../lib/kernels/logprob.js';
import { expectClose } from './helpers/close.js';
import { randomInts, randomNormal } from './helpers/random.js';

const { binding: gpu, reason } = loadCuda();
if (!gpu) console.log(`CUDA bf16 parity tests skipped: ${reason}`);

function problem(rows: number, hidden: number, vocab: number, seed: number) {
  const h = toBf16(randomNormal(rows * hidden, 1, seed)); // [T, H]
  const w = toBf16(randomNormal(vocab * hidden, 0.2, seed + 1)); // [V, H]
  const bias = randomNormal(vocab, 0.5, seed + 2); // [V]
  const targets = randomInts(rows, vocab, seed + 3); // [T]
  targets[rows >> 1] = -100;
  return { h, w, bias, targets };
}

const maxAbs = (x: Float32Array) => x.reduce((m, v) => Math.max(m, Math.abs(v)), 0);

describe.runIf(gpu)("CUDA vs CPU: fused LM head with dtype 'bf16'", () => {
  for (const [rows, hidden, vocab] of [[300, 128, 4099], [5, 33, 77], [1, 16, 1]] as const) {
    it(`forward and backward agree, T=${rows} H=${hidden} V=${vocab}`, () => {
      const { h, w, bias, targets } = problem(rows, hidden, vocab, rows + vocab);
      const options = { bias, dtype: 'bf16', temperature: 1.3, entropy: true, chunkVocab: 1024 } as const;
      const cpu = linearLogprobsSync(h, w, targets, options);
      const cuda = linearLogprobsSync(h, w, targets, { ...options, device: 'cuda' });
      expectClose(cuda.logp, cpu.logp, { atol: 1e-4, rtol: 1e-4 });
      expectClose(cuda.entropy!, cpu.entropy!, { atol: 1e-4, rtol: 1e-4 });
      const gradLogp = randomNormal(rows, 1, 5), gradEntropy = randomNormal(rows, 0.5, 6);
      const cpuGrad = linearLogprobsBackwardSync(h, w, targets, gradLogp, { ...options, gradEntropy });
      const cudaGrad = linearLogprobsBackwardSync(h, w, targets, gradLogp, { ...options, gradEntropy, device: 'cuda' });
      // Both round the gradient tile to bf16, from logits summed in another order: compare to the largest entry.
      expectClose(cudaGrad.gradHidden, cpuGrad.gradHidden, { atol: 5e-3 * maxAbs(cpuGrad.gradHidden), rtol: 0 });
      expectClose(cudaGrad.gradWeight, cpuGrad.gradWeight, { atol: 5e-3 * maxAbs(cpuGrad.gradWeight), rtol: 0 });
      expectClose(cudaGrad.gradBias!, cpuGrad.gradBias!, { atol: 1e-4, rtol: 1e-3 });
    });
  }

  it('names the same bad weight entry with the same code', () => {
    const { h, w, targets } = problem(4, 8, 10, 9);
    w[13] = 0x7f80; // +Infinity
    const errorOf = (device: 'cpu' | 'cuda') => {
      try {
        linearLogprobsSync(h, w, targets, { dtype: 'bf16', device });
      } catch (error) {
        return [(error as GrpoError).code, (error as GrpoError).message];
      }
      return undefined;
    };
    expect(errorOf('cuda')).toEqual(errorOf('cpu'));
    expect(errorOf('cuda')?.[1]).toContain('weight[13]');
  });
});

describe("bf16 kernels without CUDA", () => {
  const saved = process.env.GRPO_NATIVE_CUDA_ADDON;
  afterEach(() => {
    if (saved === undefined) delete process.env.GRPO_NATIVE_CUDA_ADDON;
    else process.env.GRPO_NATIVE_CUDA_ADDON = saved;
    vi.resetModules();
  });

  it("'auto' gives the CPU's bits and 'cuda' is GRPO_CUDA_UNAVAILABLE with the reason", async () => {
    process.env.GRPO_NATIVE_CUDA_ADDON = '/nonexistent/grpo_native_cuda.node';
    vi.resetModules();
    const fresh = await import('../lib/kernels/logprob.js');
    const errors = await import('../lib/errors.js');
    const { h, w, targets } = problem(6, 16, 50, 21);
    const gradLogp = randomNormal(6, 1, 22);
    const options = { dtype: 'bf16' } as const;
    expect(fresh.linearLogprobsSync(h, w, targets, { ...options, device: 'auto' }).logp)
      .toEqual(linearLogprobsSync(h, w, targets, options).logp);
    expect(fresh.linearLogprobsBackwardSync(h, w, targets, gradLogp, { ...options, device: 'auto' }).gradWeight)
      .toEqual(linearLogprobsBackwardSync(h, w, targets, gradLogp, options).gradWeight);
    for (const call of [
      () => fresh.linearLogprobsSync(h, w, targets, { ...options, device: 'cuda' }),
      () => fresh.linearLogprobsBackwardSync(h, w, targets, gradLogp, { ...options, device: 'cuda' }),
    ]) {
      expect(call).toThrow(errors.GrpoError);
      expect(call).toThrow(/device 'cuda', but CUDA is unavailable: .*\/nonexistent\/grpo_native_cuda.node: not found/);
    }
    await expect(fresh.linearLogprobs(h, w, targets, { ...options, device: 'cuda' })).rejects.toMatchObject({ code: 'GRPO_CUDA_UNAVAILABLE' });
  });
});
