// Peak resident memory of one GRPO update of the demo model (docs/trainer.md, "Memory: micro-batches") with and
// without microBatchTokens: old log-probs scored, forward → loss → backward, one AdamW step. Each budget runs in a
// fresh process (the peak, VmHWM, only rises), which prints the process's peak and its resident size before the update.
// Run: npx tsc -p tsconfig.json && node bench/micro-batch-memory.js [groups candidates promptTokens completionTokens]
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { DEMO_MODELS } from '../dist/cli/models.js';
import { accumulateGradients, BuiltinPolicy, mulberry32, scoreInMicroBatches } from '../dist/index.js';
import { fixed, peakRssMb, rssMb } from './timing.js';

const VOCAB = 1024; // the demo's BPE
const BUDGETS = [0, 16384, 4096, 1024];

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

async function child(budget, shape) {
  const policy = BuiltinPolicy.create({ ...DEMO_MODELS.demo, vocabSize: VOCAB }, { seed: 1 });
  const update = updateBatch(...shape);
  const before = rssMb();
  const start = performance.now();
  const old = await scoreInMicroBatches(policy, update.batch, budget, {});
  const stored = { old: Float32Array.from(old.logp.flatMap((row) => Array.from(row))) };
  await accumulateGradients(policy, { ...update, stored }, { loss: { aggregation: 'seqMeanTokenMean' }, microBatchTokens: budget, temperature: 1 });
  await policy.optimizerStep({ learningRate: 1e-4 });
  const seconds = (performance.now() - start) / 1000;
  console.log(JSON.stringify({ microBatchTokens: budget, rssBeforeMb: before, peakRssMb: peakRssMb(), seconds }));
}

function parent(shape) {
  const [groups, candidates, prompt, completion] = shape;
  const tokens = groups * candidates * (prompt + completion);
  console.log(`demo model, one update of ${groups} × ${candidates} sequences of ${prompt} + ${completion} tokens (${tokens} tokens)`);
  console.log('microBatchTokens  peak RSS (MB)  RSS before the update (MB)  peak − before (MB)  seconds (loaded machine)');
  for (const budget of BUDGETS) {
    const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--child', String(budget), ...shape.map(String)], { encoding: 'utf8' });
    const r = JSON.parse(out.trim().split('\n').at(-1));
    console.log(`${String(budget || 'off').padStart(16)}  ${fixed(r.peakRssMb, 0).padStart(13)}  ${fixed(r.rssBeforeMb, 0).padStart(26)}  `
      + `${fixed(r.peakRssMb - r.rssBeforeMb, 0).padStart(18)}  ${fixed(r.seconds, 1).padStart(7)}`);
  }
}

const args = process.argv.slice(2);
if (args[0] === '--child') await child(Number(args[1]), args.slice(2).map(Number));
else parent(args.length === 4 ? args.map(Number) : [16, 8, 64, 160]);
