// CCR rewards for a GRPO step: 48 packed prompts (N = 3 problems each) × 8 completions of 8,000
// characters: extraction by label, verification of every recovered answer, fixed-N accuracy and format.
// Run: npx tsc -p tsconfig.json && node bench/ccr.bench.js
import Benchmark from 'benchmark';
import os from 'node:os';
import { ccrReward, ccrRewardBatch, extractAnswers, generateArithmetic, verifyAnswer } from '../dist/index.js';

const PROMPTS = 48;
const CANDIDATES = 8;
const N = 3;
const CHARS = 8000;

/** A fixed pseudo-random fraction per (completion, slot), so every run scores the same batch. */
const roll = (i, slot) => ((Math.imul(i * 8 + slot + 1, 0x9e3779b1) >>> 0) % 1000) / 1000;

const FILLER = 'Let me check this again carefully: if $x = \\frac{a}{b}$ then $x \\cdot b = a$, so the step holds. ';

/** One candidate: reasoning padded to ~CHARS/N per problem; answers right, wrong, in LaTeX, missing or cut. */
function completion(problems, i) {
  const parts = problems.map((p, k) => {
    const style = roll(i, k);
    const value = style < 0.15 ? String(Number(p.answer) + 1) : style < 0.3 ? `\\frac{${2 * Number(p.answer)}}{2}` : p.answer;
    const body = `${p.solution} ${FILLER.repeat(Math.floor(CHARS / N / FILLER.length))}`;
    return roll(i, k + 3) < 0.05 ? body : `${body}\nAnswer ${k + 1}: \\boxed{${value}}\n`;
  });
  if (roll(i, 7) < 0.2) parts.reverse();
  // Every completion is cut at the cap: the last answer is often truncated, as under a token budget.
  return parts.join('\n').slice(0, CHARS);
}

function makeBatch() {
  const problems = generateArithmetic({ count: PROMPTS * N, seed: 2026, minSteps: 1, maxSteps: 6, style: 'verbose' });
  const truths = Array.from({ length: PROMPTS }, (_, g) => problems.slice(g * N, g * N + N).map((p) => p.answer));
  const completions = Array.from({ length: PROMPTS * CANDIDATES }, (_, i) =>
    completion(problems.slice(Math.floor(i / CANDIDATES) * N, Math.floor(i / CANDIDATES) * N + N), i));
  return { truths, completions };
}

const { truths, completions } = makeBatch();
const coldStart = performance.now();
const fast = ccrRewardBatch(completions, truths, CANDIDATES);
const coldMs = performance.now() - coldStart;

// reference: one ccrReward call per completion must give the same rewards, counts and prefix ends
completions.forEach((text, i) => {
  const reference = ccrReward(text, truths[Math.floor(i / CANDIDATES)]);
  const counts = reference.correct.filter(Boolean).length;
  if (Math.fround(reference.reward) !== fast.rewards[i] || counts !== fast.correctCounts[i] || reference.rewardPrefixEnd !== fast.rewardPrefixEnd[i]) {
    throw new Error(`batch ≠ reference at completion ${i}`);
  }
});

const recovered = completions.flatMap((text) => extractAnswers(text, N)).filter((a) => a.status === 'correct-format').length;
const batch = new Benchmark('ccrRewardBatch', () => ccrRewardBatch(completions, truths, CANDIDATES), { minSamples: 40 });
const extract = new Benchmark('extractAnswers only', () => completions.forEach((text) => extractAnswers(text, N)), { minSamples: 40 });
const verify = new Benchmark('verifyAnswer only', () => truths.forEach((row) => row.forEach((t) => verifyAnswer(`\\frac{${2 * Number(t)}}{2}`, t))), { minSamples: 40 });
for (const suite of [batch, extract, verify]) suite.run();

const row = (suite, work) => ({
  bench: suite.name,
  work,
  'warm mean ms': (suite.stats.mean * 1e3).toFixed(2),
  'warm p99 ms': ((suite.stats.mean + 2.33 * suite.stats.deviation) * 1e3).toFixed(2),
  'MB/s': suite.name === 'verifyAnswer only' ? '' : ((PROMPTS * CANDIDATES * CHARS) / 1e6 / suite.stats.mean).toFixed(0),
});
console.table([
  { ...row(batch, '[48, 8] × 8k chars'), 'cold first call ms': coldMs.toFixed(2) },
  row(extract, '[48, 8] × 8k chars'),
  row(verify, `${PROMPTS * N} LaTeX answers`),
]);
console.table([{
  'answers recovered': `${recovered} / ${PROMPTS * CANDIDATES * N}`,
  'mean accuracy': (fast.accuracy.reduce((a, b) => a + b, 0) / fast.accuracy.length).toFixed(3),
  'informative prompts': `${fast.informative.reduce((a, b) => a + b, 0)} / ${PROMPTS}`,
  unparsable: fast.unparsable,
  cpu: os.cpus()[0].model,
  node: process.version,
}]);
