import { describe, expect, it } from 'vitest';
import { mixSeed, mulberry32, shuffleInPlace } from '../lib/data/rng.js';
import { createSampler, PromptSampler } from '../lib/data/samplers.js';

// 40 requests with 1..12 respondents (heavy-tailed), 207 (request, respondent) rows in all
const counts = Array.from({ length: 40 }, (_, i) => [1, 1, 1, 2, 2, 3, 4, 6, 9, 12][i % 10]);
const rows = counts.reduce((a, b) => a + b, 0);

function frequencies(sampler: PromptSampler, batches: number): Float64Array {
  const seen = new Float64Array(counts.length);
  for (let b = 0; b < batches; b++) for (const p of sampler.batch(b)) seen[p.request]++;
  return seen;
}

describe('PromptSampler', () => {
  it('rows: each epoch draws every (request, respondent) pair exactly once', () => {
    const sampler = new PromptSampler(counts, { unit: 'rows', batchSize: rows, seed: 3 });
    for (const step of [0, 1, 7]) {
      const batch = sampler.batch(step);
      const pairs = new Set(batch.map((p) => `${p.request}/${p.respondent}`));
      expect(pairs.size).toBe(rows);
      expect(batch.every((p) => p.epoch === step && p.respondent < counts[p.request])).toBe(true);
    }
  });

  it('rows: request frequency ∝ respondents (χ² within the 99.9% bound) over batches that cut across epochs', () => {
    const sampler = new PromptSampler(counts, { unit: 'rows', batchSize: 48, seed: 11 });
    const batches = 401; // 19,248 draws = 92.98 epochs: whole epochs plus a partial one
    const seen = frequencies(sampler, batches);
    const draws = batches * 48;
    const chi2 = counts.reduce((sum, c, i) => sum + (seen[i] - (draws * c) / rows) ** 2 / ((draws * c) / rows), 0);
    expect(chi2).toBeLessThan(73.4); // χ²(39) at p = 0.001; without replacement it is far smaller
    const ratio = seen[9] / seen[0]; // a 12-respondent request vs a 1-respondent one
    expect(ratio).toBeGreaterThan(11);
    expect(ratio).toBeLessThan(13);
  });

  it('requests: every request equally likely, and the respondent is −1', () => {
    const sampler = new PromptSampler(counts, { unit: 'requests', batchSize: 48, seed: 11 });
    const seen = frequencies(sampler, 250); // 12,000 draws = 300 epochs exactly
    expect([...new Set(seen)]).toEqual([300]);
    expect(sampler.batch(3).every((p) => p.respondent === -1)).toBe(true);
    const partial = frequencies(sampler, 251);
    expect(Math.max(...partial) - Math.min(...partial)).toBeLessThanOrEqual(1);
  });

  it('requestRespondent: every request once per epoch, and each draw names one of its respondents uniformly (χ² within the 99.9% bound)', () => {
    const sampler = new PromptSampler(counts, { unit: 'requestRespondent', batchSize: counts.length, seed: 11 });
    const epochs = 1200;
    // drawn [requests][respondents]: how often each respondent of each request was drawn
    const drawn = counts.map((c) => new Float64Array(c));
    for (let e = 0; e < epochs; e++) {
      const batch = sampler.batch(e);
      expect(new Set(batch.map((p) => p.request)).size).toBe(counts.length);
      for (const p of batch) drawn[p.request][p.respondent]++; // out of range would throw on undefined++ → NaN below
    }
    const freedom = counts.reduce((n, c) => n + c - 1, 0); // 167
    const chi2 = drawn.reduce((sum, row) => sum + row.reduce((s, n) => s + (n - epochs / row.length) ** 2 / (epochs / row.length), 0), 0);
    expect(drawn.every((row) => row.reduce((a, b) => a + b, 0) === epochs)).toBe(true);
    expect(chi2).toBeLessThan(freedom + 3.09 * Math.sqrt(2 * freedom)); // normal approximation of χ²(167) at p = 0.001: 223
    expect(new PromptSampler(counts, { unit: 'requestRespondent', batchSize: counts.length, seed: 11 }).batch(7)).toEqual(sampler.batch(7));
  });

  it('is deterministic and random-access: batch b is the same with or without batches before it', () => {
    const a = new PromptSampler(counts, { unit: 'rows', seed: 5 });
    const b = new PromptSampler(counts, { unit: 'rows', seed: 5 });
    const later = a.batch(9);
    for (let step = 0; step < 9; step++) b.batch(step);
    expect(b.batch(9)).toEqual(later);
    expect(new PromptSampler(counts, { unit: 'rows', seed: 6 }).batch(9)).not.toEqual(later);
  });

  it('createSampler reads respondent counts; bad inputs throw GrpoError', () => {
    const sampler = createSampler([{ respondents: [1, 2] }, { respondents: [3] }], { unit: 'rows', batchSize: 3 });
    expect(sampler.unitsPerEpoch).toBe(3);
    expect(() => createSampler([{ respondents: [] }])).toThrow(/respondentCounts\[0\] >= 1/);
    expect(() => new PromptSampler(counts, { batchsize: 4 } as never)).toThrow(/did you mean "batchSize"/);
    expect(() => new PromptSampler([], {})).toThrow(/at least one request/);
  });
});

describe('rng', () => {
  it('mulberry32 is reproducible, uniform-looking and keyed streams differ', () => {
    const r = mulberry32(mixSeed(1, 2));
    const draws = Array.from({ length: 10_000 }, r);
    expect(draws.every((x) => x >= 0 && x < 1)).toBe(true);
    expect(Math.abs(draws.reduce((a, b) => a + b, 0) / draws.length - 0.5)).toBeLessThan(0.01);
    expect(mulberry32(mixSeed(1, 2))()).toBe(draws[0]);
    expect(mixSeed(1, 2)).not.toBe(mixSeed(2, 1));
    expect(shuffleInPlace([1, 2, 3, 4, 5], mulberry32(9)).sort()).toEqual([1, 2, 3, 4, 5]);
  });
});
