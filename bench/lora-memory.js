// Peak resident memory of one training step (forward → loss → backward → AdamW) of a mid-sized Llama-family model,
// full fine-tuning against LoRA (docs/policy.md, "LoRA adapters": what it saves). Each mode runs in a fresh process
// (the peak, VmHWM, only rises), which prints its peak and its resident size before the step.
// Run: npx tsc -p tsconfig.json && node bench/lora-memory.js
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { BuiltinPolicy, mulberry32, sftLoss } from '../dist/index.js';
import { fixed, peakRssMb, rssMb } from './timing.js';

/** 8 layers of hidden 512 (8 heads, 2 KV heads), a 32,000-token vocabulary tied to the LM head. */
const SHAPE = {
  vocabSize: 32000, hiddenSize: 512, intermediateSize: 1408, numLayers: 8, numHeads: 8, numKvHeads: 2, headDim: 64, maxPositions: 512,
  rmsNormEps: 1e-6, ropeTheta: 10000, tieEmbeddings: true, attentionBias: false, architecture: 'LlamaForCausalLM',
};
const MODES = { full: undefined, 'lora r16 q,v': { rank: 16 }, 'lora r16 all 7': { rank: 16, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] } };
const SEQUENCES = 16, PROMPT = 32, COMPLETION = 96;

async function child(mode) {
  const policy = BuiltinPolicy.create(SHAPE, { seed: 1, lora: MODES[mode] });
  const random = mulberry32(1);
  const ids = (n) => Int32Array.from({ length: n }, () => Math.floor(random() * SHAPE.vocabSize));
  const batch = { prompts: Array.from({ length: SEQUENCES }, () => ids(PROMPT)), completions: Array.from({ length: SEQUENCES }, () => ids(COMPLETION)) };
  const before = rssMb();
  const start = performance.now();
  await policy.step(batch, sftLoss(), { learningRate: 1e-4 });
  const seconds = (performance.now() - start) / 1000, peak = peakRssMb();
  const trained = policy.getOptimizerState().m.length; // after the peak is read: these copies of the moments are not the step's
  console.log(JSON.stringify({ mode, parameters: policy.parameterCount(), trained, rssBeforeMb: before, peakRssMb: peak, seconds }));
}

function parent() {
  console.log(`one step of ${SEQUENCES} sequences of ${PROMPT} + ${COMPLETION} tokens (${JSON.stringify(SHAPE)})`);
  console.log('mode              parameters  trained     peak RSS (MB)  RSS before the step (MB)  peak − before (MB)  seconds (loaded machine)');
  for (const mode of Object.keys(MODES)) {
    const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--child', mode], { encoding: 'utf8' });
    const r = JSON.parse(out.trim().split('\n').at(-1));
    console.log(`${mode.padEnd(16)}  ${String(r.parameters).padStart(10)}  ${String(r.trained).padStart(10)}  ${fixed(r.peakRssMb, 0).padStart(13)}  ${fixed(r.rssBeforeMb, 0).padStart(24)}  `
      + `${fixed(r.peakRssMb - r.rssBeforeMb, 0).padStart(18)}  ${fixed(r.seconds, 1).padStart(7)}`);
  }
}

const args = process.argv.slice(2);
if (args[0] === '--child') await child(args[1]);
else parent();
