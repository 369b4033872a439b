// The built-in model on the GPU against the CPU model through the raw bindings (same parameters on both):
// score log-probs and entropies, logits, the gradient of every tensor, AdamW steps, generation (greedy and
// seeded sampling) for Llama (no bias), Qwen2 (QKV bias) and Qwen3 (q/k norm, plain and YaRN RoPE) shapes, untied and tied.
// Runs wherever loadCuda() finds a usable GPU; elsewhere the suite is skipped and the reason is printed.
// Tolerances: the GPU's GEMMs are 3xTF32 (about float32) and its sums run in another order, so values agree
// to ~1e-4 relative; gradients are compared through AdamW's first moment (β1 = 0, no clipping: m = gradient).
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { loadCuda, MODEL_METHODS, native, type ModelBinding, type ModelHandle, type NativeModelConfig } from '../lib/binding/index.js';
import { ropeScalingToNative, type RopeScaling } from '../lib/policy/rope-scaling.js';
import { expectClose } from './helpers/close.js';
import { randomInts, randomNormal } from './helpers/random.js';

const { binding: gpu, reason } = loadCuda();
if (!gpu) console.log(`CUDA model parity tests skipped: ${reason}`);

interface Shape {
  name: string;
  heads: number;
  kvHeads: number;
  headDim: number;
  bias: boolean;
  qkNorm: boolean;
  /** RoPE scaling (YaRN's scales cos/sin: the GPU's tables must carry it). @defaultValue none */
  rope?: RopeScaling;
}

const SHAPES: Shape[] = [
  { name: 'Llama', heads: 4, kvHeads: 2, headDim: 8, bias: false, qkNorm: false },
  { name: 'Qwen2 (QKV bias)', heads: 4, kvHeads: 1, headDim: 8, bias: true, qkNorm: false },
  { name: 'Qwen3 (q/k norm)', heads: 4, kvHeads: 2, headDim: 16, bias: false, qkNorm: true },
  {
    name: 'Qwen3 with YaRN RoPE', heads: 4, kvHeads: 2, headDim: 16, bias: false, qkNorm: true,
    rope: { type: 'yarn', factor: 4, originalMaxPositions: 16, betaFast: 32, betaSlow: 1, truncate: true },
  },
];

const VOCAB = 67;
const HIDDEN = 32;
const IGNORE = -100;

// Float64Array[13] in model_addon.cc's order.
function configOf(s: Shape, tied: boolean): NativeModelConfig {
  return {
    vocabSize: VOCAB, hiddenSize: HIDDEN, intermediateSize: 48, numLayers: 2, numHeads: s.heads, numKvHeads: s.kvHeads, headDim: s.headDim,
    maxPositions: 64, rmsNormEps: 1e-6, ropeTheta: 10000, tieEmbeddings: tied, attentionBias: s.bias, qkNorm: s.qkNorm,
    ropeScaling: ropeScalingToNative(s.rope),
  };
}

type Tensors = { name: string; shape: number[] }[];

// Weights N(0, 0.3²) (large enough that logits spread and argmaxes are clear), norms 1 + N(0, 0.1²), biases N(0, 0.1²).
function parameters(tensors: Tensors, seed: number): Map<string, Float32Array> {
  return new Map(tensors.map(({ name, shape }, i) => {
    const n = shape[0] * shape[1];
    const norm = name.endsWith('norm.weight') || name.endsWith('layernorm.weight');
    const values = randomNormal(n, name.endsWith('.bias') || norm ? 0.1 : 0.3, seed + i);
    if (norm) for (let j = 0; j < n; j++) values[j] += 1;
    return [name, values];
  }));
}

interface Pair {
  cpu: ModelBinding;
  cuda: ModelBinding;
  a: ModelHandle;
  b: ModelHandle;
  tensors: Tensors;
}

function createPair(shape: Shape, tied: boolean): Pair {
  const cuda = gpu as unknown as ModelBinding;
  const cpu: ModelBinding = native();
  const config = configOf(shape, tied);
  const a = cpu.modelCreate(config);
  const b = cuda.modelCreate(config);
  const tensors = cpu.modelTensors(a);
  for (const [name, values] of parameters(tensors, 11)) {
    cpu.modelSetTensor(a, name, values);
    cuda.modelSetTensor(b, name, values);
  }
  return { cpu, cuda, a, b, tensors };
}

// Three packed sequences [T = 20]; targets are the next tokens, ignored at each sequence's end.
const TOKENS = randomInts(20, VOCAB, 5);
const OFFSETS = Float64Array.from([0, 6, 17, 20]);
const LAST = [5, 16, 19];
const TARGETS = Int32Array.from(TOKENS, (_, t) => (LAST.includes(t) ? IGNORE : TOKENS[t + 1]));

function score(binding: ModelBinding, model: ModelHandle, train: boolean) {
  const logp = new Float32Array(TOKENS.length);
  const entropy = new Float32Array(TOKENS.length);
  binding.modelScore(model, TOKENS, OFFSETS, TARGETS, { temperature: 0.8, ignoreIndex: IGNORE }, train, logp, entropy, false);
  return { logp, entropy };
}

function numParameters(tensors: Tensors): number {
  return tensors.reduce((sum, { shape }) => sum + shape[0] * shape[1], 0);
}

// Scores for training, runs backward with fixed upstream gradients, then returns the gradient (as AdamW's m with
// β1 = 0, lr = 0: parameters unchanged) and its global norm.
function gradients(binding: ModelBinding, model: ModelHandle, tensors: Tensors) {
  score(binding, model, true);
  binding.modelBackward(model, randomNormal(TOKENS.length, 1, 21), randomNormal(TOKENS.length, 0.5, 22), false);
  const norm = new Float32Array(1);
  binding.modelAdamw(model, { lr: 0, beta1: 0, beta2: 0.999, eps: 1e-8, weightDecay: 0, maxGradNorm: 0 }, norm, false);
  const n = numParameters(tensors);
  const m = new Float32Array(n);
  const v = new Float32Array(n);
  binding.modelGetOptimizer(model, m, v);
  return { m, norm: norm[0] };
}

function tensor(binding: ModelBinding, model: ModelHandle, name: string, shape: number[]): Float32Array {
  const out = new Float32Array(shape[0] * shape[1]);
  binding.modelGetTensor(model, name, out);
  return out;
}

// A slice of the flat parameter vector per tensor, in layout order.
function perTensor(flat: Float32Array, tensors: Tensors, each: (name: string, values: Float32Array) => void): void {
  let at = 0;
  for (const { name, shape } of tensors) {
    each(name, flat.subarray(at, at + shape[0] * shape[1]));
    at += shape[0] * shape[1];
  }
}

const PROMPTS = Int32Array.from([...randomInts(4, VOCAB, 31), ...randomInts(7, VOCAB, 32), ...randomInts(1, VOCAB, 33)]);
const PROMPT_OFFSETS = Float64Array.from([0, 4, 11, 12]);

function generate(binding: ModelBinding, model: ModelHandle, temperature: number[], stop: number[], firstRow = 0) {
  const rows = temperature.length;
  const maxNew = 10;
  const tokens = new Int32Array(rows * maxNew);
  const logp = new Float32Array(rows * maxNew);
  const lengths = new Float64Array(rows);
  const truncated = new Uint8Array(rows);
  const sampling = {
    temperature: Float32Array.from(temperature), topK: null, topP: Float32Array.from([0.95, 0.95, 0.95]), minP: null, repetitionPenalty: null,
    presencePenalty: null, frequencyPenalty: null, allow: null, history: null, historyOffsets: null, seedLo: 1234, seedHi: 0, stepLo: 0, stepHi: 0, firstRow,
  };
  binding.modelGenerate(model, PROMPTS, PROMPT_OFFSETS, { maxNewTokens: maxNew, stopTokens: Int32Array.from(stop), sampling }, tokens, logp,
    lengths, truncated, false);
  return { tokens, logp, lengths, truncated };
}

describe.runIf(gpu)('built-in model: CUDA vs CPU', () => {
  for (const shape of SHAPES)
    for (const tied of [false, true]) {
      describe(`${shape.name}, ${tied ? 'tied' : 'untied'} embeddings`, () => {
        it('init gives the same parameters on both (initialised on the host, uploaded)', () => {
          const cpu: ModelBinding = native();
          const cuda = gpu as unknown as ModelBinding;
          const config = configOf(shape, tied);
          const a = cpu.modelCreate(config);
          const b = cuda.modelCreate(config);
          cpu.modelInit(a, 7, false);
          cuda.modelInit(b, 7, false);
          const tensors = cpu.modelTensors(a);
          expect(cuda.modelTensors(b)).toEqual(tensors);
          for (const { name, shape: dims } of tensors) expect(tensor(cuda, b, name, dims)).toEqual(tensor(cpu, a, name, dims));
        });

        it('score (log-probs, entropies) and logits agree', () => {
          const { cpu, cuda, a, b } = createPair(shape, tied);
          const want = score(cpu, a, false);
          const got = score(cuda, b, false);
          expectClose(got.logp, want.logp, { atol: 1e-4, rtol: 1e-4 });
          expectClose(got.entropy, want.entropy, { atol: 1e-4, rtol: 1e-4 });
          TARGETS.forEach((t, i) => t === IGNORE && expect(got.logp[i]).toBe(0));
          const logits = (binding: ModelBinding, model: ModelHandle) => {
            const out = new Float32Array(TOKENS.length * VOCAB);
            binding.modelLogits(model, TOKENS, OFFSETS, out, false);
            return out;
          };
          expectClose(logits(cuda, b), logits(cpu, a), { atol: 2e-4, rtol: 1e-4 });
        });

        it('the gradient of every tensor agrees, and is the same bits on a second run', () => {
          const { cpu, cuda, a, b, tensors } = createPair(shape, tied);
          const want = gradients(cpu, a, tensors);
          const got = gradients(cuda, b, tensors);
          expect(Math.abs(got.norm - want.norm) / want.norm).toBeLessThan(1e-4);
          const scale = Math.max(...want.m.map(Math.abs));
          const cudaGrads = new Map<string, Float32Array>();
          perTensor(got.m, tensors, (name, values) => cudaGrads.set(name, values));
          perTensor(want.m, tensors, (name, values) => {
            expect(values.some((x) => x !== 0), `${name} has a gradient`).toBe(true);
            expectClose(cudaGrads.get(name)!, values, { atol: 1e-4 * scale, rtol: 1e-3 });
          });
          expect(gradients(cuda, b, tensors).m).toEqual(got.m);
        });

        it('AdamW steps (decay, clipping) give the same parameters and moments', () => {
          const { cpu, cuda, a, b, tensors } = createPair(shape, tied);
          const step = (binding: ModelBinding, model: ModelHandle) => {
            const norm = new Float32Array(1);
            for (let i = 0; i < 2; i++) {
              score(binding, model, true);
              binding.modelBackward(model, randomNormal(TOKENS.length, 1, 40 + i), null, false);
              binding.modelAdamw(model, { lr: 1e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.1, maxGradNorm: 0.5 }, norm, false);
            }
            const n = numParameters(tensors);
            const m = new Float32Array(n);
            const v = new Float32Array(n);
            return { steps: binding.modelGetOptimizer(model, m, v), m, v, norm: norm[0] };
          };
          const want = step(cpu, a);
          const got = step(cuda, b);
          expect(got.steps).toBe(2);
          expect(Math.abs(got.norm - want.norm) / want.norm).toBeLessThan(1e-4);
          expectClose(got.m, want.m, { atol: 1e-5, rtol: 1e-3 });
          expectClose(got.v, want.v, { atol: 1e-9, rtol: 1e-3 });
          // Adam's step is about lr per element whatever the gradient's size, so an element whose gradient is at the
          // noise level (|g| ~ 1e-7 of the largest) can step differently: parameters agree to a tenth of lr except
          // at most 0.1% of them, and every one within a few lr.
          let far = 0;
          let count = 0;
          for (const { name, shape: dims } of tensors) {
            const onGpu = tensor(cuda, b, name, dims);
            const onCpu = tensor(cpu, a, name, dims);
            expectClose(onGpu, onCpu, { atol: 5e-3, rtol: 0 });
            onGpu.forEach((x, i) => (far += Math.abs(x - onCpu[i]) > 1e-4 ? 1 : 0));
            count += onGpu.length;
          }
          expect(far).toBeLessThanOrEqual(count / 1000);
        });

        it('generation: greedy and seeded sampling draw the same tokens (also as rows 5.. of a larger batch: firstRow)', () => {
          const { cpu, cuda, a, b } = createPair(shape, tied);
          for (const [temperature, stop, firstRow] of [[[0, 0, 0], [], 0], [[1, 0.7, 0], [5, 9], 0], [[1, 0.7, 0], [5, 9], 5]] as const) {
            const want = generate(cpu, a, [...temperature], [...stop], firstRow);
            const got = generate(cuda, b, [...temperature], [...stop], firstRow);
            expect(Array.from(got.tokens)).toEqual(Array.from(want.tokens));
            expect(Array.from(got.lengths)).toEqual(Array.from(want.lengths));
            expect(Array.from(got.truncated)).toEqual(Array.from(want.truncated));
            expectClose(got.logp, want.logp, { atol: 1e-4, rtol: 1e-4 });
          }
        });
      });
    }

  it('bf16 dense matmuls: close to float32 (bf16 input rounding), not equal, and back to float32 when switched off', () => {
    const { cpu, cuda, a, b } = createPair(SHAPES[1], false);
    const want = score(cpu, a, false).logp;
    const exact = score(cuda, b, false).logp;
    cuda.modelSetBf16Matmuls(b, true);
    const rounded = score(cuda, b, false).logp;
    expectClose(rounded, want, { atol: 0.1, rtol: 0.02 });
    expect(rounded).not.toEqual(exact);
    cuda.modelSetBf16Matmuls(b, false);
    expect(score(cuda, b, false).logp).toEqual(exact);
  });

  it('a clone on the GPU keeps the parameters and scores like its source', () => {
    const { cuda, b } = createPair(SHAPES[0], false);
    const copy = cuda.modelClone(b);
    expect(score(cuda, copy, false).logp).toEqual(score(cuda, b, false).logp);
    cuda.modelDispose(copy);
  });

  it('errors keep the CPU model\'s codes and messages', () => {
    const { cpu, cuda, a, b } = createPair(SHAPES[0], false);
    const errorOf = (binding: ModelBinding, model: ModelHandle, call: (bm: ModelBinding, m: ModelHandle) => void) => {
      try {
        call(binding, model);
      } catch (error) {
        return [(error as { code?: string }).code, (error as Error).message];
      }
      return undefined;
    };
    const badToken = (bm: ModelBinding, m: ModelHandle) =>
      bm.modelScore(m, Int32Array.from([1, VOCAB]), Float64Array.from([0, 2]), Int32Array.from([1, 2]), { temperature: 1, ignoreIndex: IGNORE },
        false, new Float32Array(2), null, false);
    const backwardFirst = (bm: ModelBinding, m: ModelHandle) => bm.modelBackward(m, new Float32Array(2), null, false);
    for (const call of [badToken, backwardFirst]) {
      expect(errorOf(cuda, b, call)).toEqual(errorOf(cpu, a, call));
      expect(errorOf(cuda, b, call)).toBeDefined();
    }
  });
});

// Runs everywhere: the addon file that loadCuda() found (with or without a device) carries the CPU addon's model glue.
describe('the CUDA addon\'s model methods', () => {
  const file = gpu ? undefined : /^(.*grpo_native_cuda\.node): loaded, but no usable device/.exec(reason)?.[1];

  it('are exactly the CPU addon\'s, and without a device a model cannot be created (a status error, no crash)', () => {
    if (!gpu && !file) {
      expect(reason).toMatch(/^no CUDA addon/);
      return;
    }
    const addon = (gpu ?? createRequire(import.meta.url)(file!)) as Record<string, unknown>;
    const names = (binding: object) => Object.keys(binding).filter((k) => k.startsWith('model')).sort();
    // LoRA and recomputation are CPU-only: the CUDA model refuses adapters and a recomputing forward (GRPO_UNSUPPORTED)
    const cpuOnly = (k: string) => k.startsWith('modelLora') || k === 'modelSetRecompute';
    expect(names(addon)).toEqual(names(native()).filter((k) => !cpuOnly(k)));
    expect(names(addon)).toEqual([...MODEL_METHODS].sort());
    if (gpu) return;
    const create = addon.modelCreate as (config: Float64Array) => unknown;
    expect(() => create(configOf(SHAPES[0], false))).toThrow(/CUDA/);
  });
});
