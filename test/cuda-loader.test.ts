// The graceful no-GPU path of the CUDA backend, which runs everywhere: the loader never throws and says
// why CUDA is unavailable, device 'auto' falls back to the CPU with the CPU's results, device 'cuda'
// is a typed GRPO_CUDA_UNAVAILABLE error. CUDA is made unavailable on purpose (an addon path that does
// not exist), so these tests mean the same on a GPU machine.
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { randomInts, randomNormal } from './helpers/random.js';

const MISSING = '/nonexistent/grpo_native_cuda.node';
const BUILT = new URL('../build-cuda/cuda/grpo_native_cuda.node', import.meta.url).pathname;
const saved = process.env.GRPO_NATIVE_CUDA_ADDON;

/** Fresh copies of the modules (the loader caches its answer), loaded with GRPO_NATIVE_CUDA_ADDON = path. */
async function withAddonPath(path: string) {
  process.env.GRPO_NATIVE_CUDA_ADDON = path;
  vi.resetModules();
  return {
    errors: await import('../lib/errors.js'),
    cuda: await import('../lib/binding/index.js'),
    logprob: await import('../lib/kernels/logprob.js'),
    advantage: await import('../lib/kernels/advantage.js'),
    sampling: await import('../lib/kernels/sampling.js'),
  };
}

/** The code of the GrpoError (of the fresh module copy) that `fn` throws. */
function codeOf(GrpoError: new (...args: never[]) => Error, fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(GrpoError);
    return (error as Error & { code: string }).code;
  }
  return undefined;
}

afterEach(() => {
  if (saved === undefined) delete process.env.GRPO_NATIVE_CUDA_ADDON;
  else process.env.GRPO_NATIVE_CUDA_ADDON = saved;
});

describe('loadCuda without a usable CUDA addon', () => {
  it('returns a null binding and names the path it tried, without throwing', async () => {
    const { cuda } = await withAddonPath(MISSING);
    const { binding, reason } = cuda.loadCuda();
    expect(binding).toBeNull();
    expect(reason).toContain(`${MISSING}: not found`);
    expect(cuda.loadCuda()).toBe(cuda.loadCuda());
  });

  it('reports a file that is not a loadable addon', async () => {
    const notAnAddon = new URL('../package.json', import.meta.url).pathname;
    const { cuda } = await withAddonPath(notAnAddon);
    const { binding, reason } = cuda.loadCuda();
    expect(binding).toBeNull();
    expect(reason).toBe(`no CUDA addon (${notAnAddon}: not a grpo-native CUDA addon (no cudaProbe))`);
  });

  it('test-loads in a child process first, so an addon that crashes its loader is reported, not loaded', async () => {
    const crashing = new URL('./fixtures/cuda/crashing-addon.cjs', import.meta.url).pathname;
    const { cuda } = await withAddonPath(crashing);
    const { binding, reason } = cuda.loadCuda();
    expect(binding).toBeNull();
    expect(reason).toBe(`no CUDA addon (${crashing}: crashed in a test load in a child process (SIGSEGV))`);
  });
});

describe('the CUDA addon of npm run build:cuda (build-cuda/cuda)', () => {
  it('loads and finds a device, or says why not: not built, or no usable device (cudaError N)', async () => {
    const { cuda } = await withAddonPath(BUILT);
    const { binding, reason } = cuda.loadCuda();
    if (!existsSync(BUILT)) {
      expect(binding).toBeNull();
      expect(reason).toContain(`${BUILT}: not found`);
    } else if (binding === null) {
      expect(reason).toMatch(/: loaded, but no usable device \(.+\(cudaError \d+\)\)$/);
    } else {
      expect(binding.cudaProbe().ok).toBe(true);
      expect(reason).toMatch(/sm_\d+/);
    }
  });
});

describe("device option when CUDA is unavailable", () => {
  const rows = 6;
  const vocab = 50;
  const logits = randomNormal(rows * vocab, 3, 11); // [rows, vocab]
  const targets = randomInts(rows, vocab, 12); // [rows]
  const rewards = randomNormal(16, 1, 13); // [16]

  it("'auto' runs on the CPU with the CPU's results", async () => {
    const { logprob, advantage, sampling } = await withAddonPath(MISSING);
    expect(logprob.logprobsSync(logits, targets, { device: 'auto', entropy: true }))
      .toEqual(logprob.logprobsSync(logits, targets, { entropy: true }));
    expect(advantage.groupAdvantagesSync(rewards, { groupSize: 4, device: 'auto' }))
      .toEqual(advantage.groupAdvantagesSync(rewards, { groupSize: 4 }));
    expect(sampling.sampleSync(logits, vocab, { seed: 5, topP: 0.9, device: 'auto' }))
      .toEqual(sampling.sampleSync(logits, vocab, { seed: 5, topP: 0.9, device: 'cpu' }));
    expect((await sampling.sample(logits, vocab, { seed: 5, device: 'auto' })).tokens)
      .toEqual(sampling.sampleSync(logits, vocab, { seed: 5 }).tokens);
  });

  it("'cuda' throws GRPO_CUDA_UNAVAILABLE with the loader's reason (sync) or rejects with it (async)", async () => {
    const { errors, logprob, advantage, sampling } = await withAddonPath(MISSING);
    const code = (fn: () => unknown) => codeOf(errors.GrpoError, fn);
    expect(code(() => logprob.logprobsSync(logits, targets, { device: 'cuda' }))).toBe('GRPO_CUDA_UNAVAILABLE');
    expect(code(() => advantage.rankAdvantagesSync(rewards, { candidates: 4, ranks: 2, device: 'cuda' }))).toBe('GRPO_CUDA_UNAVAILABLE');
    expect(code(() => sampling.samplingProbsSync(logits, vocab, { device: 'cuda' }))).toBe('GRPO_CUDA_UNAVAILABLE');
    const rejected = await logprob.logprobs(logits, targets, { device: 'cuda' }).catch((error: unknown) => error);
    expect(rejected).toBeInstanceOf(errors.GrpoError);
    expect((rejected as Error & { code: string }).code).toBe('GRPO_CUDA_UNAVAILABLE');
    expect((rejected as Error).message).toContain(MISSING);
    expect((rejected as Error).message).toContain("logprobs was asked to run on device 'cuda'");
  });

  it('rejects an unknown device by name', async () => {
    const { errors, logprob, sampling } = await withAddonPath(MISSING);
    const bad = { device: 'gpu' } as unknown as { device: 'cpu' };
    expect(codeOf(errors.GrpoError, () => logprob.logprobsSync(logits, targets, bad))).toBe('GRPO_VALUE_RANGE');
    expect(() => sampling.sampleSync(logits, vocab, bad)).toThrow(/sampleSync device.*"cpu", "cuda", "auto".*gpu/);
  });
});
