import { afterEach, describe, expect, it } from 'vitest';
import {
  GrpoError, linearLogprobs, linearLogprobsBackwardSync, linearLogprobsSync, logprobs, logprobsBackward,
  logprobsBackwardSync, logprobsSync, setThreads, getThreads, toBf16,
} from '../lib/index.js';
import { linearLogitsReference, logprobsBackwardReference, logprobsReference } from '../lib/reference/logprob.js';
import { expectClose } from './helpers/close.js';
import { randomInts, randomNormal } from './helpers/random.js';

const defaultThreads = getThreads();
afterEach(() => setThreads(defaultThreads));

function problem(rows: number, vocab: number, scale: number, seed: number) {
  const logits = randomNormal(rows * vocab, scale, seed); // [T, V]
  const targets = randomInts(rows, vocab, seed + 1); // [T]
  return { logits, targets };
}

describe('logprobs forward matches the float64 reference', () => {
  const cases: Array<[number, number, number, number]> = [
    [0, 5, 1, 1], [1, 1, 1, 2], [7, 33, 3, 3], [64, 1000, 10, 4], [2, 151936, 2, 5], [3, 32768, 1e4, 6],
  ];
  it.each(cases)('T=%i V=%i scale=%d', (rows, vocab, scale, seed) => {
    const { logits, targets } = problem(rows, vocab, scale, seed);
    for (const temperature of [1, 0.7]) {
      const out = logprobsSync(logits, targets, { temperature, entropy: true });
      const ref = logprobsReference(logits, targets, temperature);
      const atol = scale >= 1e4 ? 2e-3 : 2e-5; // float32 logits of 1e4 carry ±5e-4 of rounding
      expectClose(out.logp, ref.logp, { atol, rtol: 2e-5 });
      expectClose(out.entropy!, ref.entropy, { atol, rtol: 2e-5 });
    }
  });

  it('TRL selective_log_softmax fixture: [2,1,0] token 0 at T=1 and T=0.7', () => {
    const logits = new Float32Array([2, 1, 0]);
    const targets = new Int32Array([0]);
    expect(logprobsSync(logits, targets).logp[0]).toBeCloseTo(-0.407606, 6);
    expect(logprobsSync(logits, targets, { temperature: 0.7 }).logp[0]).toBeCloseTo(-0.2601184, 6);
  });

  it('masked (-Infinity) entries get zero probability, ignored rows give 0', () => {
    const logits = new Float32Array([0, -Infinity, 0, 5, 5, 5]);
    const targets = new Int32Array([2, -100]);
    const out = logprobsSync(logits, targets, { entropy: true });
    expect(out.logp[0]).toBeCloseTo(Math.log(0.5), 6);
    expect(out.entropy![0]).toBeCloseTo(Math.log(2), 6);
    expect(out.logp[1]).toBe(0);
    expect(out.entropy![1]).toBe(0);
  });

  it('the Promise form gives the same numbers and lets the event loop run', async () => {
    const { logits, targets } = problem(512, 32768, 1, 7);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    const pending = logprobs(logits, targets, { entropy: true });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const out = await pending;
    clearInterval(timer);
    expect(ticks).toBeGreaterThan(0);
    expect(out.logp).toEqual(logprobsSync(logits, targets, { entropy: true }).logp);
  });
});

describe('logprobs backward', () => {
  it('matches the reference, with and without entropy gradient, and in place', () => {
    const { logits, targets } = problem(9, 517, 3, 8);
    targets[4] = -100;
    logits[3] = -Infinity;
    const gradLogp = randomNormal(9, 1, 9);
    const gradEntropy = randomNormal(9, 1, 10);
    for (const temperature of [1, 1.3]) {
      const ref = logprobsBackwardReference(logits, targets, gradLogp, gradEntropy, temperature);
      expectClose(logprobsBackwardSync(logits, targets, gradLogp, { gradEntropy, temperature }), ref, { atol: 1e-6, rtol: 1e-4 });
    }
    const refPlain = logprobsBackwardReference(logits, targets, gradLogp);
    const inPlace = logits.slice();
    const out = logprobsBackwardSync(inPlace, targets, gradLogp, { out: inPlace });
    expect(out).toBe(inPlace);
    expectClose(out, refPlain, { atol: 1e-6, rtol: 1e-4 });
  });

  it('with the forward\'s saved lse (and entropy) matches the reference; a bad saved lse or logits row is rejected', () => {
    const { logits, targets } = problem(11, 700, 3, 40);
    targets[4] = -100;
    logits[2 * 700 + 9] = -Infinity;
    logits[4 * 700 + 1] = Number.NaN; // row 4 is ignored: never read
    const gradLogp = randomNormal(11, 1, 41), gradEntropy = randomNormal(11, 1, 42);
    const forward = logprobsSync(logits, targets, { temperature: 0.8, entropy: true, lse: true });
    expect(forward.lse![4]).toBe(0);
    for (const withEntropy of [false, true]) {
      const options = { temperature: 0.8, saved: forward, ...(withEntropy && { gradEntropy }) };
      const ref = logprobsBackwardReference(logits, targets, gradLogp, withEntropy ? gradEntropy : undefined, 0.8);
      expectClose(logprobsBackwardSync(logits, targets, gradLogp, options), ref, { atol: 1e-6, rtol: 1e-4 });
    }
    const call = (saved: unknown, extra = {}) => () =>
      logprobsBackwardSync(logits, targets, gradLogp, { temperature: 0.8, saved: saved as { lse: Float32Array }, ...extra });
    expect(call({ lse: forward.lse }, { gradEntropy })).toThrow(expect.objectContaining({ code: 'GRPO_INVALID_ARGUMENT' }));
    expect(call({ lse: forward.lse!.subarray(1) })).toThrow(expect.objectContaining({ code: 'GRPO_SHAPE_MISMATCH' }));
    const bad = forward.lse!.slice(); bad[3] = Number.NaN;
    expect(call({ lse: bad })).toThrow(expect.objectContaining({ code: 'GRPO_NON_FINITE' }));
    const poisoned = logits.slice(); poisoned[3 * 700 + 2] = Number.POSITIVE_INFINITY;
    expect(() => logprobsBackwardSync(poisoned, targets, gradLogp, { temperature: 0.8, saved: forward }))
      .toThrow(expect.objectContaining({ code: 'GRPO_NON_FINITE' }));
  });

  it('the saved backward agrees with the full one above the 16 MB from which it streams, and in place', () => {
    const rows = 132, vocab = 32771; // 17 MB of gradient, rows starting at every alignment
    const { logits, targets } = problem(rows, vocab, 2, 43);
    const gradLogp = randomNormal(rows, 1, 44);
    const forward = logprobsSync(logits, targets, { lse: true });
    const full = logprobsBackwardSync(logits, targets, gradLogp);
    const saved = logprobsBackwardSync(logits, targets, gradLogp, { saved: forward });
    expectClose(saved, full, { atol: 1e-7, rtol: 1e-4 });
    const inPlace = logits.slice();
    logprobsBackwardSync(inPlace, targets, gradLogp, { saved: forward, out: inPlace });
    expect(Buffer.from(inPlace.buffer).equals(Buffer.from(saved.buffer))).toBe(true);
  });

  it('agrees with central finite differences of the float64 forward', async () => {
    const rows = 3, vocab = 6, temperature = 0.8;
    const { logits, targets } = problem(rows, vocab, 2, 11);
    const gradLogp = randomNormal(rows, 1, 12);
    const gradEntropy = randomNormal(rows, 1, 13);
    const loss = (x: Float32Array) => {
      const r = logprobsReference(x, targets, temperature);
      let total = 0;
      for (let t = 0; t < rows; t++) total += gradLogp[t] * r.logp[t] + gradEntropy[t] * r.entropy[t];
      return total;
    };
    const analytic = await logprobsBackward(logits, targets, gradLogp, { gradEntropy, temperature });
    const eps = 1e-3;
    const numeric = Array.from(logits, (_, i) => {
      const plus = logits.slice(); plus[i] += eps;
      const minus = logits.slice(); minus[i] -= eps;
      return (loss(plus) - loss(minus)) / (plus[i] - minus[i]);
    });
    expectClose(analytic, numeric, { atol: 1e-4, rtol: 1e-3 });
  });
});

describe('fused linear log-probs', () => {
  const rows = 37, size = 48, vocab = 1000;
  const hidden = randomNormal(rows * size, 1, 20); // [T, H]
  const weight = randomNormal(vocab * size, 0.3, 21); // [V, H]
  const bias = randomNormal(vocab, 0.1, 22); // [V]
  const targets = randomInts(rows, vocab, 23);
  targets[5] = -100;

  it('equals logprobs(hidden · weightᵀ + bias) for several tile sizes', async () => {
    const logits = linearLogitsReference(hidden, weight, rows, bias);
    const plain = logprobsSync(logits, targets, { entropy: true, temperature: 0.9 });
    for (const [chunkSize, chunkVocab] of [[1, 7], [8, 256], [256, 4096]]) {
      const fused = await linearLogprobs(hidden, weight, targets, { bias, entropy: true, temperature: 0.9, chunkSize, chunkVocab });
      expectClose(fused.logp, plain.logp, { atol: 1e-4, rtol: 1e-4 });
      expectClose(fused.entropy!, plain.entropy!, { atol: 1e-4, rtol: 1e-4 });
    }
  });

  it('backward equals the unfused chain rule and central finite differences', () => {
    const logits = linearLogitsReference(hidden, weight, rows, bias);
    const gradLogp = randomNormal(rows, 1, 24);
    const gradLogits = logprobsBackwardSync(logits, targets, gradLogp);
    const expectedHidden = new Float64Array(rows * size);
    for (let t = 0; t < rows; t++)
      for (let v = 0; v < vocab; v++)
        for (let k = 0; k < size; k++) expectedHidden[t * size + k] += gradLogits[t * vocab + v] * weight[v * size + k];
    const grads = linearLogprobsBackwardSync(hidden, weight, targets, gradLogp, { bias, chunkSize: 8, chunkVocab: 300 });
    expectClose(grads.gradHidden, expectedHidden, { atol: 1e-4, rtol: 1e-3 });
    const fd = (index: number) => {
      const eps = 1e-2;
      const plus = weight.slice(); plus[index] += eps;
      const minus = weight.slice(); minus[index] -= eps;
      const value = (w: Float32Array) => logprobsReference(linearLogitsReference(hidden, w, rows, bias), targets).logp
        .reduce((sum, lp, t) => sum + gradLogp[t] * lp, 0);
      return (value(plus) - value(minus)) / (plus[index] - minus[index]);
    };
    for (const index of [0, 17, 5000, vocab * size - 1]) expect(grads.gradWeight[index]).toBeCloseTo(fd(index), 3);
  });

  it('backward with the forward\'s saved lse and entropy equals the full backward (f32 and bf16, bias, temperature, ignored row)', () => {
    const gradLogp = randomNormal(rows, 1, 26), gradEntropy = randomNormal(rows, 1, 27);
    const h16 = toBf16(hidden), w16 = toBf16(weight);
    for (const [h, w, dtype] of [[hidden, weight, 'f32'], [h16, w16, 'bf16']] as const) {
      const options = { bias, temperature: 0.8, chunkSize: 5, chunkVocab: 97, dtype } as const;
      const forward = linearLogprobsSync(h, w, targets, { ...options, entropy: true, lse: true });
      expect(forward.lse![5]).toBe(0); // the ignored row
      const full = linearLogprobsBackwardSync(h, w, targets, gradLogp, { ...options, gradEntropy });
      const saved = linearLogprobsBackwardSync(h, w, targets, gradLogp, { ...options, gradEntropy, saved: forward });
      // bf16: each gradient tile is rounded to bf16 (2⁻⁹ relative) before the products, so last-ulp differences
      // between the two paths' tiles can flip a rounding there.
      const tolerance = dtype === 'bf16' ? { atol: 1e-4, rtol: 4e-3 } : { atol: 1e-5, rtol: 1e-4 };
      expectClose(saved.gradHidden, full.gradHidden, tolerance);
      expectClose(saved.gradWeight, full.gradWeight, tolerance);
      expectClose(saved.gradBias!, full.gradBias!, { atol: 1e-5, rtol: 1e-4 });
    }
  });

  it('saved needs lse, and entropy with gradEntropy; a non-finite saved lse is rejected', () => {
    const gradLogp = randomNormal(rows, 1, 28);
    const forward = linearLogprobsSync(hidden, weight, targets, { lse: true });
    const call = (saved: unknown, extra = {}) => () =>
      linearLogprobsBackwardSync(hidden, weight, targets, gradLogp, { saved: saved as { lse: Float32Array }, ...extra });
    expect(call({ logp: forward.logp })).toThrow(expect.objectContaining({ code: 'GRPO_INVALID_ARGUMENT' }));
    expect(call(forward, { gradEntropy: gradLogp })).toThrow(expect.objectContaining({ code: 'GRPO_INVALID_ARGUMENT' }));
    expect(call({ lse: forward.lse!.subarray(1) })).toThrow(expect.objectContaining({ code: 'GRPO_SHAPE_MISMATCH' }));
    const bad = forward.lse!.slice(); bad[3] = Number.POSITIVE_INFINITY;
    expect(call({ lse: bad })).toThrow(expect.objectContaining({ code: 'GRPO_NON_FINITE' }));
    bad[3] = forward.lse![3]; bad[5] = Number.NaN; // row 5 is ignored: not read
    expect(call({ lse: bad })).not.toThrow();
  });

  it('keepLogits returns hidden · weightᵀ + bias, and the backward reading them gives the saved backward\'s bits', async () => {
    const gradLogp = randomNormal(rows, 1, 29), gradEntropy = randomNormal(rows, 1, 30);
    const reference = linearLogitsReference(hidden, weight, rows, bias);
    for (const [h, w, dtype] of [[hidden, weight, 'f32'], [toBf16(hidden), toBf16(weight), 'bf16']] as const) {
      const options = { bias, temperature: 0.8, chunkSize: 5, chunkVocab: 97, dtype } as const;
      const forward = linearLogprobsSync(h, w, targets, { ...options, entropy: true, lse: true });
      const logitsOut = new Float32Array(rows * vocab); // [T, V]
      const kept = await linearLogprobs(h, w, targets, { ...options, entropy: true, lse: true, keepLogits: true, logitsOut });
      expect(kept.logits).toBe(logitsOut);
      expect(Buffer.from(kept.logp.buffer).equals(Buffer.from(forward.logp.buffer))).toBe(true);
      if (dtype === 'f32') expectClose(kept.logits!, reference, { atol: 1e-4, rtol: 1e-4 });
      const saved = linearLogprobsBackwardSync(h, w, targets, gradLogp, { ...options, gradEntropy, saved: forward });
      const read = linearLogprobsBackwardSync(h, w, targets, gradLogp, { ...options, gradEntropy, saved: kept });
      for (const key of ['gradHidden', 'gradWeight', 'gradBias'] as const) {
        expect(Buffer.from(read[key]!.buffer).equals(Buffer.from(saved[key]!.buffer))).toBe(true);
      }
    }
  });

  it('kept logits: a wrong-length buffer, logitsOut without keepLogits and a poisoned counted row are rejected', () => {
    const gradLogp = randomNormal(rows, 1, 31);
    const call = (options: object) => () => linearLogprobsSync(hidden, weight, targets, options);
    expect(call({ keepLogits: true, logitsOut: new Float32Array(rows * vocab - 1) }))
      .toThrow(expect.objectContaining({ code: 'GRPO_SHAPE_MISMATCH' }));
    expect(call({ logitsOut: new Float32Array(rows * vocab) })).toThrow(expect.objectContaining({ code: 'GRPO_INVALID_ARGUMENT' }));
    const kept = linearLogprobsSync(hidden, weight, targets, { lse: true, keepLogits: true });
    const backward = (logits: Float32Array) => () =>
      linearLogprobsBackwardSync(hidden, weight, targets, gradLogp, { saved: { lse: kept.lse!, logits } });
    expect(backward(kept.logits!.subarray(1))).toThrow(expect.objectContaining({ code: 'GRPO_SHAPE_MISMATCH' }));
    const poisoned = kept.logits!.slice();
    poisoned[5 * vocab + 3] = Number.NaN; // row 5 is ignored: not read
    expect(backward(poisoned)).not.toThrow();
    poisoned[7 * vocab + 999] = Number.POSITIVE_INFINITY;
    expect(backward(poisoned)).toThrow(expect.objectContaining({ code: 'GRPO_NON_FINITE', message: expect.stringContaining('logits row 7') }));
  });

  it('accumulate adds into the caller buffers', () => {
    const gradLogp = randomNormal(rows, 1, 25);
    const once = linearLogprobsBackwardSync(hidden, weight, targets, gradLogp);
    const twice = linearLogprobsBackwardSync(hidden, weight, targets, gradLogp, {
      accumulate: true, gradHidden: once.gradHidden.slice(), gradWeight: once.gradWeight.slice(),
    });
    expectClose(twice.gradWeight, once.gradWeight.map((g) => 2 * g), { atol: 1e-6, rtol: 1e-5 });
  });
});

describe('determinism', () => {
  it('outputs are bitwise equal for 1 and 2 threads', () => {
    const { logits, targets } = problem(300, 4099, 3, 30);
    const hidden = randomNormal(70 * 64, 1, 31);
    const weight = randomNormal(3000 * 64, 0.2, 32);
    const fusedTargets = randomInts(70, 3000, 33);
    const run = () => ({
      forward: logprobsSync(logits, targets, { entropy: true }),
      backward: logprobsBackwardSync(logits, targets, randomNormal(300, 1, 34)),
      fused: linearLogprobsBackwardSync(hidden, weight, fusedTargets, randomNormal(70, 1, 35), { chunkSize: 16, chunkVocab: 512 }),
      saved: linearLogprobsBackwardSync(hidden, weight, fusedTargets, randomNormal(70, 1, 35), {
        chunkSize: 16, chunkVocab: 512, saved: linearLogprobsSync(hidden, weight, fusedTargets, { lse: true }),
      }),
    });
    setThreads(1);
    const one = run();
    setThreads(2);
    const two = run();
    expect(Buffer.from(two.forward.logp.buffer).equals(Buffer.from(one.forward.logp.buffer))).toBe(true);
    expect(Buffer.from(two.forward.entropy!.buffer).equals(Buffer.from(one.forward.entropy!.buffer))).toBe(true);
    expect(Buffer.from(two.backward.buffer).equals(Buffer.from(one.backward.buffer))).toBe(true);
    expect(Buffer.from(two.fused.gradWeight.buffer).equals(Buffer.from(one.fused.gradWeight.buffer))).toBe(true);
    expect(Buffer.from(two.fused.gradHidden.buffer).equals(Buffer.from(one.fused.gradHidden.buffer))).toBe(true);
    expect(Buffer.from(two.saved.gradWeight.buffer).equals(Buffer.from(one.saved.gradWeight.buffer))).toBe(true);
    expect(Buffer.from(two.saved.gradHidden.buffer).equals(Buffer.from(one.saved.gradHidden.buffer))).toBe(true);
  });
});
