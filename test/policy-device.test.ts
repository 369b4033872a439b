// The device option of the built-in policy, the trainer config and the command line, on a machine without a
// usable GPU: 'cpu' and 'auto' give the CPU's bits, 'cuda' is a typed error naming loadCuda()'s reason, and a
// policy created on 'cuda' (here a stand-in CUDA addon that forwards to the CPU one and records each call)
// makes every model call — training, checkpoints and clones included — on that addon, never on the CPU one.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { main } from '../lib/cli/main.js';
import { loadCuda, MODEL_METHODS, native, setCudaLoadForTests, type CudaBinding, type CudaLoad, type ModelMethod } from '../lib/binding/index.js';
import { GrpoError } from '../lib/errors.js';
import { BuiltinPolicy, type BuiltinOptions } from '../lib/policy/builtin.js';
import { sftLoss } from '../lib/policy/policy.js';
import { mergeConfig, TRAINER_DEFAULTS } from '../lib/trainer/config.js';
import { resolveConfig } from '../lib/trainer/recipes.js';
import { train, type TrainerEvent } from '../lib/trainer/train.js';
import { randomInts } from './helpers/random.js';
import { tempRunRoot, tinyConfig, tinyMoviesDir, tinyTokenizer } from './helpers/trainer.js';

const config = tinyConfig(61);
const prompts = [randomInts(5, 61, 1), randomInts(3, 61, 2)];
const batch = { prompts, completions: [randomInts(7, 61, 3), randomInts(4, 61, 4)] };
const scratch = () => mkdtempSync(join(tmpdir(), 'grpo-device-'));

/** What loadCuda() answers on a machine without CUDA: the real answer here, a fixed one on a GPU machine. */
const real = loadCuda();
const unavailable: CudaLoad = real.binding ? { binding: null, reason: 'made unavailable by policy-device.test.ts' } : real;

afterEach(() => {
  setCudaLoadForTests(undefined);
  vi.restoreAllMocks();
});

/** Everything a policy computes on one batch: logits, scores, one training step, greedy and sampled completions. */
async function outputs(policy: BuiltinPolicy) {
  const logits = await policy.logits(prompts);
  const scores = await policy.score(batch, { temperature: 0.8 });
  const step = await policy.step(batch, sftLoss());
  const greedy = await policy.generate(prompts, { maxNewTokens: 6, temperature: 0 });
  const sampled = await policy.generate(prompts, { maxNewTokens: 6, seed: 3, topK: 9 });
  return { logits, scores, step, greedy, sampled, weights: policy.getTensors(), optimizer: policy.getOptimizerState() };
}

/** The GrpoError a call throws or rejects with. */
async function failure(call: () => unknown): Promise<GrpoError> {
  try {
    await call();
  } catch (error) {
    expect(error).toBeInstanceOf(GrpoError);
    return error as GrpoError;
  }
  throw new Error('expected a GrpoError');
}

describe('device option without CUDA', () => {
  beforeEach(() => setCudaLoadForTests(unavailable));

  it("'cpu' gives the results of no device option, bit for bit, and reports device 'cpu'", async () => {
    const plain = BuiltinPolicy.create(config, { seed: 2 });
    const cpu = BuiltinPolicy.create(config, { seed: 2, device: 'cpu' });
    expect(cpu.device).toBe('cpu');
    expect(plain.device).toBe('cpu');
    expect(await outputs(cpu)).toEqual(await outputs(plain));
  });

  it("'auto' falls back to the CPU with the CPU's bits (create, createAsync, load, clone)", async () => {
    const cpu = BuiltinPolicy.create(config, { seed: 4 });
    const auto = BuiltinPolicy.create(config, { seed: 4, device: 'auto' });
    expect(auto.device).toBe('cpu');
    expect(await outputs(auto)).toEqual(await outputs(cpu));
    const dir = join(scratch(), 'p');
    await cpu.save(dir);
    const loaded = await BuiltinPolicy.load(dir, { device: 'auto' });
    const asynchronous = await BuiltinPolicy.createAsync(config, { seed: 4, device: 'auto' });
    const clone = await cpu.clone({ device: 'auto' });
    for (const p of [loaded, asynchronous, clone]) expect(p.device).toBe('cpu');
    expect(loaded.getTensors()).toEqual(cpu.getTensors());
    expect(clone.getTensors()).toEqual(cpu.getTensors());
    expect(asynchronous.getTensors()).toEqual(BuiltinPolicy.create(config, { seed: 4 }).getTensors());
  });

  it("'cuda' is GRPO_CUDA_UNAVAILABLE naming loadCuda()'s reason, wherever a model is created", async () => {
    const dir = join(scratch(), 'p');
    const cpu = BuiltinPolicy.create(config, { seed: 1 });
    await cpu.save(dir);
    const calls: [string, () => unknown][] = [
      ['BuiltinPolicy.create', () => BuiltinPolicy.create(config, { device: 'cuda' })],
      ['BuiltinPolicy.createAsync', () => BuiltinPolicy.createAsync(config, { device: 'cuda' })],
      ['BuiltinPolicy.load', () => BuiltinPolicy.load(dir, { device: 'cuda' })],
      ['BuiltinPolicy.clone', () => cpu.clone({ device: 'cuda' })],
    ];
    for (const [fn, call] of calls) {
      const error = await failure(call);
      expect(error.code).toBe('GRPO_CUDA_UNAVAILABLE');
      expect(error.message).toBe(`${fn} was asked to run on device 'cuda', but CUDA is unavailable: ${unavailable.reason}`);
    }
    expect(await cpu.score(batch)).toEqual(await BuiltinPolicy.create(config, { seed: 1 }).score(batch)); // still usable
  });

  it('an unknown device is a typed error naming the option and the choices', async () => {
    const bad = { device: 'gpu' } as unknown as BuiltinOptions;
    const created = await failure(() => BuiltinPolicy.create(config, bad));
    expect(created.code).toBe('GRPO_VALUE_RANGE');
    expect(created.message).toBe('Expected BuiltinPolicy.create device to be one of "cpu", "cuda", "auto" but received "gpu"');
    const cloned = await failure(() => BuiltinPolicy.create(config).clone(bad));
    expect(cloned.message).toMatch(/^Expected BuiltinPolicy.clone device to be one of .* but received "gpu"$/);
    expect((await failure(() => BuiltinPolicy.create(config).clone({ devices: 'cpu' } as never))).message).toMatch(/"devices".*did you mean "device"/);
  });
});

describe('a CUDA addon without the model methods', () => {
  const kernelsOnly = { cudaProbe: () => ({ ok: true, deviceCount: 1, error: 0, message: 'stand-in' }) } as unknown as CudaBinding;
  beforeEach(() => setCudaLoadForTests({ binding: kernelsOnly, reason: 'stand-in addon (kernels only)' }));

  it("'auto' runs the model on the CPU; 'cuda' is GRPO_UNSUPPORTED", async () => {
    expect(BuiltinPolicy.create(config, { device: 'auto' }).device).toBe('cpu');
    const error = await failure(() => BuiltinPolicy.create(config, { device: 'cuda' }));
    expect(error.code).toBe('GRPO_UNSUPPORTED');
    expect(error.message).toBe('BuiltinPolicy.create has no CUDA model in this build (stand-in addon (kernels only))');
  });
});

/** A stand-in CUDA addon whose model methods forward to the CPU addon's and record their names. */
function recordingCuda() {
  const cpu = native();
  const called = new Set<ModelMethod>();
  const methods = Object.fromEntries(MODEL_METHODS.map((name) => {
    const original = cpu[name] as (...args: unknown[]) => unknown;
    return [name, (...args: unknown[]) => (called.add(name), original.apply(cpu, args))];
  }));
  const binding = { ...methods, cudaProbe: () => ({ ok: true, deviceCount: 1, error: 0, message: 'stand-in' }) } as unknown as CudaBinding;
  setCudaLoadForTests({ binding, reason: 'stand-in CUDA addon' });
  const cpuSpies = MODEL_METHODS.map((name) => vi.spyOn(cpu, name)) as MockInstance[];
  const cpuCalls = () => cpuSpies.reduce((n, spy) => n + spy.mock.calls.length, 0);
  return { called, cpuCalls, resetCpuCalls: () => cpuSpies.forEach((spy) => spy.mockClear()) };
}

describe("a policy created on 'cuda' calls only the CUDA addon", () => {
  it('creation, scoring, training, generation, tensors, optimizer state, clones, save, load and dispose', async () => {
    const reference = await outputs(BuiltinPolicy.create(config, { seed: 5, bf16Matmuls: true }));
    const cuda = recordingCuda();
    const policy = BuiltinPolicy.create(config, { seed: 5, bf16Matmuls: true, device: 'cuda' });
    expect(policy.device).toBe('cuda');
    expect(await outputs(policy)).toEqual(reference); // the stand-in forwards to the CPU: same bits
    policy.setOptimizerState(policy.getOptimizerState());
    policy.setTensors(policy.getTensors());
    const frozen = await policy.clone();
    expect(frozen.device).toBe('cuda');
    await frozen.score(batch);
    const dir = join(scratch(), 'p');
    await policy.save(dir);
    const loaded = await BuiltinPolicy.load(dir, { device: 'cuda' });
    const drawn = await BuiltinPolicy.createAsync(config, { seed: 5, device: 'cuda' });
    for (const p of [policy, frozen, loaded, drawn]) p.dispose();
    expect(cuda.cpuCalls()).toBe(0);
    // every model method but modelZeroGrad (modelAdamw clears the gradients; the policy never calls it alone)
    expect([...cuda.called].sort()).toEqual(MODEL_METHODS.filter((m) => m !== 'modelZeroGrad').sort());
  });

  it('checkpoints and clones cross devices through host copies, bit for bit', async () => {
    const cuda = recordingCuda();
    const onCuda = BuiltinPolicy.create(config, { seed: 6, device: 'cuda' });
    await onCuda.step(batch, sftLoss());
    const dir = join(scratch(), 'from-cuda');
    await onCuda.save(dir);
    expect(cuda.cpuCalls()).toBe(0);
    const onCpu = await BuiltinPolicy.load(dir, { device: 'cpu' });
    expect(onCpu.device).toBe('cpu');
    expect(cuda.cpuCalls()).toBeGreaterThan(0); // the spies see CPU calls when there are some
    expect(onCpu.getTensors()).toEqual(onCuda.getTensors());
    expect(onCpu.getOptimizerState()).toEqual(onCuda.getOptimizerState());
    expect(await onCpu.step(batch, sftLoss())).toEqual(await onCuda.step(batch, sftLoss()));
    const back = join(scratch(), 'from-cpu');
    await onCpu.save(back);
    cuda.called.clear();
    cuda.resetCpuCalls();
    const again = await BuiltinPolicy.load(back, { device: 'cuda' });
    expect(cuda.cpuCalls()).toBe(0);
    expect(again.getTensors()).toEqual(onCpu.getTensors());
    const cpuCopy = await onCuda.clone({ device: 'cpu' });
    expect([cpuCopy.device, cpuCopy.frozen]).toEqual(['cpu', true]);
    expect(await cpuCopy.logits(prompts)).toEqual(await onCuda.logits(prompts));
    expect(cuda.called.has('modelClone')).toBe(false); // the copy went through getTensors/setTensors
  });

  it('a trainer run on it logs device "cuda" and makes no CPU model call; a config naming another device is refused', async () => {
    const tokenizer = tinyTokenizer();
    const moviesDir = tinyMoviesDir([1, 2], 1);
    const run = resolveConfig({
      recipe: 'remark', device: 'cuda', steps: 2, groups: 1, candidates: 2, checkpointEvery: 1, testPrompts: 1,
      generation: { maxNewTokens: 12 }, rewards: { ranks: 2, catalog: 'none' }, validation: { every: 2, prompts: 1, patience: 0 }, data: { moviesDir },
    });
    const cuda = recordingCuda();
    const policy = BuiltinPolicy.create(tinyConfig(tokenizer.vocabSize), { seed: 1, tokenizer, device: 'cuda' });
    const loadPolicy = (d: string) => BuiltinPolicy.load(d, { device: 'cuda' });
    const events: TrainerEvent[] = [];
    const result = await train({ config: run, policy, runDir: join(tempRunRoot(), 'cuda'), loadPolicy, onEvent: (e) => events.push(e) });
    expect(result.steps).toBe(2);
    expect(events[0]).toEqual({ type: 'start', step: 0, steps: 2, device: 'cuda' });
    expect(events.flatMap((e) => (e.type === 'step' ? [e.record.device] : []))).toEqual(['cuda', 'cuda']);
    expect(cuda.called.has('modelClone')).toBe(true); // the KL reference
    expect(cuda.cpuCalls()).toBe(0);
    const error = await failure(() => train({ config: { ...run, device: 'cpu' }, policy, runDir: join(tempRunRoot(), 'x'), loadPolicy }));
    expect(error.message).toContain('config "device" is "cpu" but the policy runs on "cuda"');
  });
});

describe('trainer config and command line', () => {
  it('config "device": default "cpu", the three choices, typos with a suggestion', () => {
    expect(TRAINER_DEFAULTS.device).toBe('cpu');
    expect(resolveConfig({}).device).toBe('cpu');
    for (const device of ['cpu', 'cuda', 'auto'] as const) expect(resolveConfig({ device }).device).toBe(device);
    expect(() => resolveConfig({ device: 'gpu' as never })).toThrow('Expected config "device" to be one of "cpu", "cuda", "auto" but received "gpu"');
    expect(() => mergeConfig(TRAINER_DEFAULTS, { devise: 'cuda' })).toThrow(/"devise".*did you mean "device"/);
  });

  function capture() {
    const err: string[] = [];
    const out: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((s) => (out.push(String(s)), true));
    vi.spyOn(process.stderr, 'write').mockImplementation((s) => (err.push(String(s)), true));
    return { out: () => out.join(''), err: () => err.join('') };
  }

  it('--device is in the help of train, sft, eval and demo', async () => {
    for (const command of ['train', 'sft', 'eval', 'demo']) {
      const io = capture();
      expect(await main([command, '--help'])).toBe(0);
      expect(io.out()).toMatch(/--device <value>\s+where the built-in model runs: cpu \(default\), cuda, or auto/);
    }
  });

  it('a bad --device is one line with exit code 2, before any work', async () => {
    const dir = scratch();
    const argvs = [
      ['train', '--policy', join(dir, 'none'), '--out', join(dir, 'r'), '--device', 'gpu'],
      ['sft', '--out', dir, '--device', 'gpu'],
      ['eval', '--policy', join(dir, 'none'), '--device', 'gpu'],
      ['demo', '--out', dir, '--device', 'gpu'],
      ['train', '--resume', join(dir, 'none'), '--device', 'gpu'],
    ];
    for (const argv of argvs) {
      const io = capture();
      expect(await main(argv)).toBe(2);
      expect(io.err()).toBe(`grpo ${argv[0]}: Flag --device: expected one of cpu, cuda, auto but received "gpu"\n`);
      vi.restoreAllMocks();
    }
  });

  it('--device cuda without CUDA names the reason; --device auto and cpu run on the CPU', async () => {
    setCudaLoadForTests(unavailable);
    const tokenizer = tinyTokenizer();
    const dir = join(scratch(), 'policy');
    await BuiltinPolicy.create(tinyConfig(tokenizer.vocabSize), { seed: 1, tokenizer }).save(dir);
    let io = capture();
    expect(await main(['eval', '--policy', dir, '--device', 'cuda'])).toBe(2);
    expect(io.err()).toBe(`grpo eval: BuiltinPolicy.load was asked to run on device 'cuda', but CUDA is unavailable: ${unavailable.reason}\n`);
    vi.restoreAllMocks();
    io = capture();
    expect(await main(['train', '--policy', dir, '--out', join(scratch(), 'run'), '--device', 'cuda'])).toBe(2);
    expect(io.err()).toBe(`grpo train: BuiltinPolicy.load was asked to run on device 'cuda', but CUDA is unavailable: ${unavailable.reason}\n`);
    vi.restoreAllMocks();
    io = capture();
    expect(await main(['sft', '--policy', dir, '--out', scratch(), '--device', 'cuda', '--steps', '1'])).toBe(2);
    expect(io.err()).toContain('CUDA is unavailable');
    vi.restoreAllMocks();
    const out = scratch();
    io = capture();
    expect(await main(['sft', '--policy', dir, '--out', out, '--device', 'auto', '--data', 'movies', '--steps', '1', '--batch-size', '2'])).toBe(0);
    expect((await BuiltinPolicy.load(join(out, 'policy'))).device).toBe('cpu');
  });
});
