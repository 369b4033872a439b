// Every public async kernel of grpo-native as a case for the crash-hunting suite (test/crash-*.test.ts):
// fresh seeded inputs, the call in its async and sync form, and which inputs are user-supplied outputs.
// Plain JS over dist/ so that child processes and worker_threads can run it without a TS loader.
import * as g from '../../dist/index.js';

/** Uniform values in [-scale, scale) from a small LCG keyed by `seed` (same inputs in every process). */
function uniform(n, seed, scale = 1) {
  const out = new Float32Array(n);
  let s = (seed * 2654435761) >>> 0;
  for (let i = 0; i < n; ++i) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = (s / 2 ** 32 * 2 - 1) * scale;
  }
  return out;
}

function ints(n, bound, seed) {
  return Int32Array.from(uniform(n, seed), (v) => Math.floor((v + 1) / 2 * bound) % bound);
}

function mask(n, seed) {
  return Uint8Array.from(uniform(n, seed), (v) => (v > -0.6 ? 1 : 0));
}

const T = 48, V = 30_000, H = 64, LV = 16_000; // tokens, vocab, hidden size, vocab of the fused LM head
const M = 160; // matmul sides
const B = 48, SV = 50_000; // sampler rows and vocab
const G = 16, S = 8, K = 20; // groups, candidates, ranks
const R = 64, C = 512; // token rows and columns

const either = (async, asyncFn, syncFn) => (async ? asyncFn : syncFn);

/**
 * name → { inputs(): named typed arrays, run(x, async), outputs: names of x the call writes }.
 * Outputs are arrays the caller hands in to be written (`out`, gradient buffers); the rest are read only.
 */
export const CASES = {
  logprobs: {
    inputs: () => ({ logits: uniform(T * V, 1, 4), targets: ints(T, V, 2) }),
    run: (x, a) => either(a, g.logprobs, g.logprobsSync)(x.logits, x.targets, { entropy: true, temperature: 0.9 }),
    outputs: [],
  },
  logprobsBackward: {
    inputs: () => ({ logits: uniform(T * V, 1, 4), targets: ints(T, V, 2), gradLogp: uniform(T, 3), gradEntropy: uniform(T, 4), out: new Float32Array(T * V) }),
    run: (x, a) => either(a, g.logprobsBackward, g.logprobsBackwardSync)(x.logits, x.targets, x.gradLogp, { gradEntropy: x.gradEntropy, out: x.out }),
    outputs: ['out'],
  },
  linearLogprobs: {
    inputs: () => ({ hidden: uniform(T * H, 5), weight: uniform(LV * H, 6, 0.2), bias: uniform(LV, 7), targets: ints(T, LV, 8) }),
    run: (x, a) => either(a, g.linearLogprobs, g.linearLogprobsSync)(x.hidden, x.weight, x.targets, { bias: x.bias, entropy: true }),
    outputs: [],
  },
  linearLogprobsBf16: {
    inputs: () => ({ hidden: g.toBf16(uniform(T * H, 5)), weight: g.toBf16(uniform(LV * H, 6, 0.2)), targets: ints(T, LV, 8) }),
    run: (x, a) => either(a, g.linearLogprobs, g.linearLogprobsSync)(x.hidden, x.weight, x.targets, { dtype: 'bf16' }),
    outputs: [],
  },
  linearLogprobsBackward: {
    inputs: () => ({
      hidden: uniform(T * H, 5), weight: uniform(LV * H, 6, 0.2), bias: uniform(LV, 7), targets: ints(T, LV, 8), gradLogp: uniform(T, 9),
      gradHidden: uniform(T * H, 10), gradWeight: uniform(LV * H, 11), gradBias: uniform(LV, 12),
    }),
    run: (x, a) => either(a, g.linearLogprobsBackward, g.linearLogprobsBackwardSync)(x.hidden, x.weight, x.targets, x.gradLogp,
      { bias: x.bias, gradHidden: x.gradHidden, gradWeight: x.gradWeight, gradBias: x.gradBias, accumulate: true }),
    outputs: ['gradHidden', 'gradWeight', 'gradBias'],
  },
  matmul: {
    inputs: () => ({ a: uniform(M * M, 13), b: uniform(M * M, 14), out: uniform(M * M, 15) }),
    run: (x, a) => either(a, g.matmul, g.matmulSync)(x.a, x.b, { m: M, n: M, k: M }, { beta: 0.5, out: x.out }),
    outputs: ['out'],
  },
  sample: {
    inputs: () => ({
      logits: uniform(B * SV, 16, 3), temperature: uniform(B, 17).map((v) => 0.6 + Math.abs(v)), topK: ints(B, 50, 18),
      historyIds: ints(B * 8, SV, 19), historyOffsets: Int32Array.from({ length: B + 1 }, (_, r) => r * 8),
      allow: new Uint32Array(B * Math.ceil(SV / 32)).fill(0xfffffff7),
    }),
    run: (x, a) => either(a, g.sample, g.sampleSync)(x.logits, SV, {
      seed: 5, temperature: x.temperature, topK: x.topK, repetitionPenalty: 1.3, history: { ids: x.historyIds, offsets: x.historyOffsets }, allow: x.allow,
    }),
    outputs: [],
  },
  samplingProbs: {
    inputs: () => ({ logits: uniform(B * SV, 20, 3), topP: uniform(B, 21).map((v) => 0.5 + Math.abs(v) / 2) }),
    run: (x, a) => either(a, g.samplingProbs, g.samplingProbsSync)(x.logits, SV, { topP: x.topP }),
    outputs: [],
  },
  groupAdvantages: {
    inputs: () => ({ rewards: uniform(G * S * 64, 22), groupIds: ints(G * S * 64, G, 23), out: new Float32Array(G * S * 64) }),
    run: (x, a) => either(a, g.groupAdvantages, g.groupAdvantagesSync)(x.rewards, { groupIds: x.groupIds, out: x.out }),
    outputs: ['out'],
  },
  rankAdvantages: {
    inputs: () => ({ rewards: uniform(G * 64 * S * K, 24) }),
    run: (x, a) => either(a, g.rankAdvantages, g.rankAdvantagesSync)(x.rewards, { candidates: S, ranks: K }),
    outputs: [],
  },
  tokenAdvantagesItems: {
    inputs: () => ({
      advantages: uniform(R * K, 25), mask: mask(R * C, 26), segments: ints(R * C, K + 2, 27).map((v) => v - 1), eosPositions: ints(R, C, 28),
    }),
    run: (x, a) => either(a, g.tokenAdvantages, g.tokenAdvantagesSync)(
      { advantages: x.advantages, mask: x.mask, segments: x.segments, eosPositions: x.eosPositions }, { ranks: K }),
    outputs: [],
  },
  tokenAdvantagesSequences: {
    inputs: () => ({ advantages: uniform(R, 29), mask: mask(R * C, 30), truncated: mask(R, 31), prefixEnd: ints(R, C, 32) }),
    run: (x, a) => either(a, g.tokenAdvantages, g.tokenAdvantagesSync)(
      { advantages: x.advantages, mask: x.mask, truncated: x.truncated, prefixEnd: x.prefixEnd }, { truncation: 'dropSuffix' }),
    outputs: [],
  },
  policyLoss: {
    inputs: () => ({
      logp: uniform(R * C, 33, 0.5).map((v) => v - 1), oldLogp: uniform(R * C, 34, 0.5).map((v) => v - 1),
      refLogp: uniform(R * C, 35, 0.5).map((v) => v - 1), advantages: uniform(R, 36), mask: mask(R * C, 37), entropy: uniform(R * C, 38).map(Math.abs),
      out: new Float32Array(R * C),
    }),
    run: (x, a) => either(a, g.policyLoss, g.policyLossSync)(
      { shape: [R, C], logp: x.logp, oldLogp: x.oldLogp, refLogp: x.refLogp, advantages: x.advantages, mask: x.mask, entropy: x.entropy }, { beta: 0.04, out: x.out }),
    outputs: ['out'],
  },
};

/** Detaches `view`'s ArrayBuffer the way a transfer to a worker does, then scribbles over the moved memory. */
export function detach(view) {
  const moved = structuredClone(view.buffer, { transfer: [view.buffer] });
  new Uint8Array(moved).fill(0x7f);
}

/** The same values on a SharedArrayBuffer (read in place by async calls: it can never be detached). */
export function shared(view) {
  const copy = new view.constructor(new SharedArrayBuffer(view.byteLength));
  copy.set(view);
  return copy;
}

/** Bitwise equality of results: typed arrays by bytes, numbers with Object.is, objects key by key. */
export function same(a, b) {
  if (ArrayBuffer.isView(a)) {
    if (!ArrayBuffer.isView(b) || a.byteLength !== b.byteLength) return false;
    return Buffer.compare(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), new Uint8Array(b.buffer, b.byteOffset, b.byteLength)) === 0;
  }
  if (typeof a === 'number') return Object.is(a, b);
  if (a === null || typeof a !== 'object') return a === b;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b ?? {}).length && keys.every((k) => same(a[k], b[k]));
}

/**
 * `result` with the caller's own array `inputs[key]` (a result may hand an input back, as tokenAdvantages does
 * with its mask) replaced by its name: once transferred, only its identity can be compared.
 */
export function withoutInput(result, inputs, key) {
  if (result === inputs[key]) return `the caller's ${key}`;
  if (result === null || typeof result !== 'object' || ArrayBuffer.isView(result)) return result;
  return Object.fromEntries(Object.entries(result).map(([k, v]) => [k, withoutInput(v, inputs, key)]));
}

/** The sync call on fresh inputs, whose result every async call of the case must match. */
export function expected(name) {
  const c = CASES[name], inputs = c.inputs();
  return { result: c.run(inputs, false), inputs };
}
