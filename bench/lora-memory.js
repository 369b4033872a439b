// Peak resident memory of one training step (forward → loss → backward → AdamW) of a mid-sized Llama-family model,
// full fine-tuning against LoRA, with its frozen base in float32 and (loaded from a checkpoint of bfloat16 or float16
// values) in bfloat16 or float16 (docs/policy.md, "LoRA adapters": what it saves). Each mode runs in a fresh process (the peak, VmHWM, only
// rises; it is reset after loading, so it is the step's), which prints its peak and its resident size before the step
// (after a garbage collection).
// Run: npx tsc -p tsconfig.json && node bench/lora-memory.js [mode ...]  (default: every mode)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BuiltinPolicy, mulberry32, sftLoss } from '../dist/index.js';
import { fromFloat32, toFloat32 } from '../dist/policy/safetensors.js';
import { fixed, peakRssMb, rssMb } from './timing.js';

/** 8 layers of hidden 512 (8 heads, 2 KV heads), a 32,000-token vocabulary tied to the LM head. */
const SHAPE = {
  vocabSize: 32000, hiddenSize: 512, intermediateSize: 1408, numLayers: 8, numHeads: 8, numKvHeads: 2, headDim: 64, maxPositions: 512,
  rmsNormEps: 1e-6, ropeTheta: 10000, tieEmbeddings: true, attentionBias: false, architecture: 'LlamaForCausalLM',
};
const ALL = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'];
/** Each mode's lora option, and the checkpoint its base is loaded from (BF16 or F16 values: kept in that type), if any. */
const MODES = {
  full: { lora: undefined }, 'lora r16 q,v': { lora: { rank: 16 } }, 'lora r16 all 7': { lora: { rank: 16, targetModules: ALL } },
  'lora r16 q,v bf16': { lora: { rank: 16 }, base: 'BF16' }, 'lora r16 all bf16': { lora: { rank: 16, targetModules: ALL }, base: 'BF16' },
  'lora r16 q,v f16': { lora: { rank: 16 }, base: 'F16' }, 'lora r16 all f16': { lora: { rank: 16, targetModules: ALL }, base: 'F16' },
};
const SEQUENCES = 16, PROMPT = 32, COMPLETION = 96;

/** The model of seed 1 with every weight rounded to `dtype` (BF16 or F16), saved (as float32 values) into `root`. */
async function roundedCheckpoint(root, dtype) {
  const policy = BuiltinPolicy.create(SHAPE, { seed: 1 });
  policy.setTensors(policy.getTensors().map((t) => ({ ...t, data: toFloat32(fromFloat32(t.data, dtype), dtype, t.data.length) })));
  const dir = join(root, dtype);
  await policy.save(dir);
  return dir;
}

async function child(mode, root) {
  const { lora, base } = MODES[mode];
  const policy = base ? await BuiltinPolicy.load(join(root, base), { seed: 1, lora }) : BuiltinPolicy.create(SHAPE, { seed: 1, lora });
  // the loaded float32 copies are external memory, freed after a collection and a turn of the event loop
  global.gc();
  await new Promise((done) => setTimeout(done, 100));
  global.gc();
  writeFileSync('/proc/self/clear_refs', '5'); // resets VmHWM to the current RSS (Linux): the peak below is the step's
  const random = mulberry32(1);
  const ids = (n) => Int32Array.from({ length: n }, () => Math.floor(random() * SHAPE.vocabSize));
  const batch = { prompts: Array.from({ length: SEQUENCES }, () => ids(PROMPT)), completions: Array.from({ length: SEQUENCES }, () => ids(COMPLETION)) };
  const before = rssMb();
  const start = performance.now();
  await policy.step(batch, sftLoss(), { learningRate: 1e-4 });
  const seconds = (performance.now() - start) / 1000, peak = peakRssMb();
  const trained = policy.getOptimizerState().m.length; // after the peak is read: these copies of the moments are not the step's
  console.log(JSON.stringify({ mode, base: policy.adapters?.baseDtype ?? 'f32', parameters: policy.parameterCount(), trained, rssBeforeMb: before, peakRssMb: peak, seconds }));
}

async function parent(modes) {
  const root = mkdtempSync(join(tmpdir(), 'grpo-lora-memory-'));
  for (const dtype of new Set(modes.map((m) => MODES[m].base).filter(Boolean))) await roundedCheckpoint(root, dtype);
  console.log(`one step of ${SEQUENCES} sequences of ${PROMPT} + ${COMPLETION} tokens (${JSON.stringify(SHAPE)})`);
  console.log('mode               base  parameters  trained     peak RSS (MB)  RSS before the step (MB)  peak − before (MB)  seconds (loaded machine)');
  for (const mode of modes) {
    const out = execFileSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--child', mode, root], { encoding: 'utf8' });
    const r = JSON.parse(out.trim().split('\n').at(-1));
    console.log(`${mode.padEnd(17)}  ${r.base.padEnd(4)}  ${String(r.parameters).padStart(10)}  ${String(r.trained).padStart(10)}  ${fixed(r.peakRssMb, 0).padStart(13)}  ${fixed(r.rssBeforeMb, 0).padStart(24)}  `
      + `${fixed(r.peakRssMb - r.rssBeforeMb, 0).padStart(18)}  ${fixed(r.seconds, 1).padStart(7)}`);
  }
  rmSync(root, { recursive: true, force: true });
}

const args = process.argv.slice(2);
if (args[0] === '--child') await child(args[1], args[2]);
else {
  const unknown = args.filter((m) => !Object.hasOwn(MODES, m));
  if (unknown.length > 0) throw new Error(`unknown mode(s) ${unknown.join(', ')}; modes: ${Object.keys(MODES).join(', ')}`);
  await parent(args.length > 0 ? args : Object.keys(MODES));
}
