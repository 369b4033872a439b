#!/usr/bin/env node
// Soak test: a tiny built-in policy makes --calls generate, --calls score and --calls step calls, with
// --checkpoints checkpoint + best writes of a run directory spread among them. It fails (exit 1) when
// resident memory grows after warm-up, when file descriptors are left open, or when a temporary folder
// is left behind. Growth is the least-squares slope of RSS samples taken after a GC; the allocator
// sometimes steps RSS up once by a few MB and stays there, so a leak is a slope over the limit in both
// halves of the measured rounds (a step lands in one of them), and the whole-window slope is reported.
//   npm run soak -- --calls 2000 --checkpoints 200      (the full size; CI runs a small one)
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { BuiltinPolicy, initialValidation, RunDir, sftLoss } from '../dist/index.js';

const { values: flags } = parseArgs({ options: { calls: { type: 'string', default: '2000' }, checkpoints: { type: 'string' } } });
const calls = Number(flags.calls);
const checkpoints = Number(flags.checkpoints ?? Math.max(1, Math.round(calls / 10)));
if (!Number.isInteger(calls) || calls < 20 || !Number.isInteger(checkpoints) || checkpoints < 1 || checkpoints > calls) {
  throw new Error(`soak: expected --calls >= 20 and 1 <= --checkpoints <= calls but received ${flags.calls}, ${flags.checkpoints}`);
}
/** Rounds before this one warm the allocator, the JIT and the V8 heap (RSS climbs for ~600 rounds): they are not measured. */
const warmup = Math.floor(calls / 2);
/** Largest accepted RSS growth per round (a generate, a score and a step) after warm-up. */
const maxSlopeBytesPerRound = 1024;
const gc = globalThis.gc ?? (() => undefined);

const openFds = () => (existsSync('/proc/self/fd') ? readdirSync('/proc/self/fd').length : NaN);
const rss = () => (gc(), process.memoryUsage().rss);

// shapes: 4 prompts of 6 token ids; completions of at most 8 tokens
const model = {
  vocabSize: 96, hiddenSize: 32, intermediateSize: 64, numLayers: 1, numHeads: 2, numKvHeads: 1, headDim: 16,
  maxPositions: 64, rmsNormEps: 1e-6, ropeTheta: 10000, tieEmbeddings: true, attentionBias: false, architecture: 'LlamaForCausalLM',
};
const prompts = Array.from({ length: 4 }, (_, i) => Int32Array.from({ length: 6 }, (_, t) => (7 * i + 3 * t + 1) % model.vocabSize));

function trainerState(step) {
  return {
    version: 1, step, elapsed: 0, validation: initialValidation(), stopReason: null,
    sampler: { unit: 'soak', seed: 0, batchSize: prompts.length, position: step }, rng: { seed: 0, counter: step },
  };
}

/** Names under `dir` (recursively) that only an unfinished write leaves. */
function leftovers(dir) {
  return readdirSync(dir, { recursive: true }).map(String).filter((p) => /(^|\/)\..*\.tmp|\.tmp-|\.old-/.test(p));
}

function slope(points) {
  const n = points.length;
  const mx = points.reduce((s, p) => s + p[0], 0) / n;
  const my = points.reduce((s, p) => s + p[1], 0) / n;
  const sxy = points.reduce((s, p) => s + (p[0] - mx) * (p[1] - my), 0);
  const sxx = points.reduce((s, p) => s + (p[0] - mx) ** 2, 0);
  return sxy / sxx;
}

const root = mkdtempSync(join(tmpdir(), 'grpo-soak-'));
const tempBefore = new Set(readdirSync(tmpdir()));
const dir = new RunDir(join(root, 'run'));
const policy = BuiltinPolicy.create(model, { seed: 1 });
const fdStart = openFds();
const every = Math.max(1, Math.floor(calls / checkpoints));
const samples = [];
const sampleEvery = Math.max(1, Math.floor((calls - warmup) / 60));
let fdWarm = NaN;
let writes = 0;
const started = Date.now();

for (let round = 0; round < calls; round++) {
  const generations = await policy.generate(prompts, { maxNewTokens: 8, seed: round, stopTokens: [] });
  const batch = { prompts, completions: generations.map((g) => g.tokens) };
  await policy.score(batch);
  await policy.step(batch, sftLoss(), { learningRate: 1e-3 });
  if ((round + 1) % every === 0 && writes < checkpoints) {
    writes++;
    await dir.checkpoint(policy, trainerState(round + 1));
    await dir.saveBest(policy, round + 1, round, 'soak');
  }
  if (round === warmup) fdWarm = openFds();
  if (round >= warmup && (round - warmup) % sampleEvery === 0) samples.push([round, rss()]);
}
samples.push([calls, rss()]);
const fdEnd = openFds();
policy.dispose();
const fdAfterDispose = openFds();

const slopeBytes = slope(samples);
const half = Math.floor(samples.length / 2);
const halfSlopes = [slope(samples.slice(0, half)), slope(samples.slice(half))];
const left = leftovers(dir.path);
const versions = readdirSync(dir.file('checkpoints'));
const tempNew = readdirSync(tmpdir()).filter((name) => !tempBefore.has(name) && name.includes(String(process.pid)));
rmSync(root, { recursive: true, force: true });
const report = {
  calls: { generate: calls, score: calls, step: calls }, checkpointWrites: writes, bestWrites: writes,
  seconds: Math.round((Date.now() - started) / 100) / 10,
  rss: {
    afterWarmupMiB: +(samples[0][1] / 2 ** 20).toFixed(1), endMiB: +(samples.at(-1)[1] / 2 ** 20).toFixed(1),
    slopeBytesPerRound: Math.round(slopeBytes), halfSlopesBytesPerRound: halfSlopes.map(Math.round),
    slopeKiBPer1000Rounds: Math.round((slopeBytes * 1000) / 1024), samples: samples.length, gcExposed: globalThis.gc !== undefined,
  },
  fds: { start: fdStart, afterWarmup: fdWarm, end: fdEnd, afterDispose: fdAfterDispose },
  leftovers: { runDir: left, checkpointsKept: versions, tmpdirEntries: tempNew, rootRemoved: !existsSync(root) },
};
console.log(JSON.stringify(report, null, 2));

const failures = [];
if (Math.min(...halfSlopes) > maxSlopeBytesPerRound) {
  failures.push(`resident memory grows ${halfSlopes.map(Math.round).join(' and ')} bytes per round in the two halves after warm-up (limit ${maxSlopeBytesPerRound})`);
}
if (fdEnd > fdWarm || fdAfterDispose > fdStart) failures.push(`file descriptors left open: ${fdStart} at the start, ${fdWarm} after warm-up, ${fdEnd} at the end, ${fdAfterDispose} after dispose`);
if (left.length > 0 || tempNew.length > 0 || versions.length !== 1) failures.push(`left behind: ${[...left, ...tempNew].join(', ') || `${versions.length} checkpoints`}`);
if (writes !== checkpoints) failures.push(`wrote ${writes} checkpoints, expected ${checkpoints}`);
for (const failure of failures) console.error(`soak: ${failure}`);
process.exitCode = failures.length > 0 ? 1 : 0;
