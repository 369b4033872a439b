// Peak resident memory of one GRPO update of the demo model (docs/trainer.md, "Memory: micro-batches") with and
// without microBatchTokens: old log-probs scored, forward → loss → backward, one AdamW step. Each budget runs in a
// fresh process (the peak, VmHWM, only rises), which prints the process's peak and its resident size before the update.
// With --recompute each budget also runs with per-layer activation recomputation (forward option `recompute`), and
// the row gives its peak and seconds over the run without it. With --generate it measures instead the rollout's
// generate of the G × S rows (temperature 1, no stop token) with generate maxRows 0 (one call) and smaller chunks.
// Run: npx tsc -p tsconfig.json && node bench/micro-batch-memory.js [--recompute | --generate] [groups candidates promptTokens completionTokens]
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { DEMO_MODELS } from '../dist/cli/models.js';
import { accumulateGradients, BuiltinPolicy, mulberry32, scoreInMicroBatches } from '../dist/index.js';
import { fixed, peakRssMb, rssMb } from './timing.js';

const VOCAB = 1024; // the demo's BPE
const BUDGETS = [0, 16384, 4096, 1024];
const MAX_ROWS = [0, 64, 32, 16, 8];

/** G × S sequences: each group's prompt shared, completions of `completion` tokens; a signal of ±1 advantages. */
function updateBatch(groups, candidates, prompt, completion) {
  const random = mulberry32(1);
  const ids = (n) => Int32Array.from({ length: n }, () => Math.floor(random() * VOCAB));
  const prompts = Array.from({ length: groups }, () => ids(prompt));
  const rows = groups * candidates;
  const completions = Array.from({ length: rows }, () => ids(completion));
  const advantages = Float32Array.from({ length: rows * completion }, (_, i) => (Math.floor(i / completion) % 2 ? 1 : -1));
  return {
    batch: { prompts: completions.map((_, b) => prompts[Math.floor(b / candidates)]), completions },
    rollout: { completions, width: completion },
    signal: { advantages, lossMask: new Uint8Array(rows * completion).fill(1) },
  };
}

async function child(budget, recompute, shape) {
  const policy = BuiltinPolicy.create({ ...DEMO_MODELS.demo, vocabSize: VOCAB }, { seed: 1 });
  const update = updateBatch(...shape);
  const before = rssMb();
  const start = performance.now();
  const old = await scoreInMicroBatches(policy, update.batch, budget, {});
  const stored = { old: Float32Array.from(old.logp.flatMap((row) => Array.from(row))) };
  await accumulateGradients(policy, { ...update, stored }, { loss: { aggregation: 'seqMeanTokenMean' }, microBatchTokens: budget, recompute, temperature: 1 });
  await policy.optimizerStep({ learningRate: 1e-4 });
  const seconds = (performance.now() - start) / 1000;
  console.log(JSON.stringify({ microBatchTokens: budget, rssBeforeMb: before, peakRssMb: peakRssMb(), seconds }));
}

/** The rollout's generate of the G × S rows, `maxRows` rows per native call. */
async function generateChild(maxRows, [groups, candidates, prompt, completion]) {
  const policy = BuiltinPolicy.create({ ...DEMO_MODELS.demo, vocabSize: VOCAB }, { seed: 1 });
  const { batch } = updateBatch(groups, candidates, prompt, completion);
  const before = rssMb();
  const start = performance.now();
  await policy.generate(batch.prompts, { maxNewTokens: completion, temperature: 1, seed: 1, stopTokens: [], maxRows });
  const seconds = (performance.now() - start) / 1000;
  console.log(JSON.stringify({ maxRows, rssBeforeMb: before, peakRssMb: peakRssMb(), seconds }));
}

/** One update (or generate) in a fresh process: its peak, its RSS before the call and its seconds. */
function measure(budget, recompute, shape, kind = '--child') {
  const args = [kind, String(budget), String(recompute), ...shape.map(String)];
  const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), ...args], { encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').at(-1));
}

const row = (label, r) => `${label}  ${fixed(r.peakRssMb, 0).padStart(13)}  ${fixed(r.rssBeforeMb, 0).padStart(26)}  `
  + `${fixed(r.peakRssMb - r.rssBeforeMb, 0).padStart(18)}  ${fixed(r.seconds, 1).padStart(7)}`;

function parent(shape, recompute) {
  const [groups, candidates, prompt, completion] = shape;
  const tokens = groups * candidates * (prompt + completion);
  console.log(`demo model, one update of ${groups} × ${candidates} sequences of ${prompt} + ${completion} tokens (${tokens} tokens)`);
  console.log('microBatchTokens  recompute  peak RSS (MB)  RSS before the update (MB)  peak − before (MB)  seconds (loaded machine)');
  for (const budget of BUDGETS) {
    const kept = measure(budget, false, shape);
    console.log(row(`${String(budget || 'off').padStart(16)}  ${'off'.padStart(9)}`, kept));
    if (!recompute) continue;
    const again = measure(budget, true, shape);
    console.log(`${row(`${''.padStart(16)}  ${'on'.padStart(9)}`, again)}   peak ${fixed(again.peakRssMb / kept.peakRssMb, 2)}×, `
      + `peak − before ${fixed((again.peakRssMb - again.rssBeforeMb) / (kept.peakRssMb - kept.rssBeforeMb), 2)}×, seconds ${fixed(again.seconds / kept.seconds, 2)}×`);
  }
}

function generateParent(shape) {
  const [groups, candidates, prompt, completion] = shape;
  console.log(`demo model, generate of ${groups} × ${candidates} rows: ${prompt}-token prompts, ${completion} new tokens each`);
  console.log('maxRows  peak RSS (MB)  RSS before generate (MB)  peak − before (MB)  seconds (loaded machine)');
  const runs = MAX_ROWS.map((maxRows) => measure(maxRows, false, shape, '--generate-child'));
  runs.forEach((r) => console.log(`${row(String(r.maxRows || 'all').padStart(7), r)}   peak − before ${fixed((r.peakRssMb - r.rssBeforeMb) / (runs[0].peakRssMb - runs[0].rssBeforeMb), 2)}× one call's`));
}

const args = process.argv.slice(2);
const recompute = args.includes('--recompute');
const numbers = args.filter((a) => a !== '--recompute' && a !== '--generate');
const shape = numbers.length === 4 ? numbers.map(Number) : [16, 8, 64, 160];
if (numbers[0] === '--child') await child(Number(numbers[1]), numbers[2] === 'true', numbers.slice(3).map(Number));
else if (numbers[0] === '--generate-child') await generateChild(Number(numbers[1]), numbers.slice(3).map(Number));
else if (args.includes('--generate')) generateParent(shape);
else parent(shape, recompute);
