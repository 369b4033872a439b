#!/usr/bin/env node
// LoRA adapters against the real peft and transformers (issue 19), both ways, on tiny Llama, Qwen2 (q/k/v biases,
// tied embeddings) and Qwen3 (untied, head_dim · heads ≠ hidden) models:
//   ours → theirs: a base folder and a PEFT adapter saved here (all seven modules, A and B random) load in
//     PeftModel.from_pretrained with every tensor read and no warning, and its logits are ours; `grpo merge`'s folder
//     loads in AutoModelForCausalLM alone with the same logits, and its weights are PEFT's merge_and_unload's;
//   theirs → ours: a base saved by transformers and an adapter by get_peft_model (random B; plain and use_rslora)
//     load here through lora.from with PEFT's logits, our merge gives PEFT's merged weights, and adapters that use
//     PEFT features not implemented here are GRPO_UNSUPPORTED naming the field.
// Prints one JSON summary; exits 1 when a gate fails. Needs `npx tsc -p tsconfig.json` and a Python with torch,
// transformers and peft (scripts/hf-interop.py says how); it is not a CI step. --write-fixture copies the Qwen2 case
// of theirs → ours to test/fixtures/peft-real (test/peft-real.test.ts).
//   node scripts/hf-interop.js --python /tmp/hfenv/bin/python [--write-fixture] [--keep]
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BuiltinPolicy, LORA_TARGET_MODULES, mergeAdapter, readModelWeights, readSafetensors } from '../dist/index.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const LOGIT_TOLERANCE = 1e-4, WEIGHT_TOLERANCE = 1e-6;
/** How much more than the tolerance the adapter must move the logits, so that ignoring it fails the gate. */
const EFFECT_FACTOR = 100;
const LORA = { rank: 4, alpha: 8, dropout: 0, targetModules: [...LORA_TARGET_MODULES] };
const SEQUENCES = [[3, 17, 42, 8, 25, 11, 0, 99], [9, 4, 120]];
const SHAPE = { vocabSize: 160, hiddenSize: 32, intermediateSize: 64, numLayers: 2, numHeads: 4, numKvHeads: 2, maxPositions: 64, rmsNormEps: 1e-6, ropeTheta: 10000 };
const OURS = [
  { name: 'llama', config: { ...SHAPE, headDim: 8, tieEmbeddings: false, attentionBias: false, architecture: 'LlamaForCausalLM' } },
  { name: 'qwen2', config: { ...SHAPE, headDim: 8, tieEmbeddings: true, attentionBias: true, architecture: 'Qwen2ForCausalLM' } },
  { name: 'qwen3', config: { ...SHAPE, headDim: 16, tieEmbeddings: false, attentionBias: false, qkNorm: true, architecture: 'Qwen3ForCausalLM' } },
];

const args = process.argv.slice(2);
const python = args.includes('--python') ? args[args.indexOf('--python') + 1] : 'python3';
const root = mkdtempSync(join(tmpdir(), 'grpo-hf-interop-'));
const failures = [];
const gate = (ok, what) => {
  if (!ok) failures.push(what);
};

/** `n` normal values of standard deviation `scale` from a mulberry32 stream keyed by `seed`. */
function normals(n, scale, seed) {
  let state = seed >>> 0;
  const uniform = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), state | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return Float32Array.from({ length: n }, () => scale * Math.sqrt(-2 * Math.log(Math.max(uniform(), 1e-12))) * Math.cos(2 * Math.PI * uniform()));
}

/** [T, vocab] rows of packed logits. */
const rows = (flat, vocab) => Array.from({ length: flat.length / vocab }, (_, t) => Array.from(flat.subarray(t * vocab, (t + 1) * vocab)));
const maxDiff = (a, b) => a.flat().reduce((m, v, i) => Math.max(m, Math.abs(v - b.flat()[i])), 0);
const runPython = (mode) => JSON.parse(execFileSync(python, [join(HERE, 'hf-interop.py'), mode, root], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 1 << 28 }));

async function logitsOf(dir, options) {
  const policy = await BuiltinPolicy.load(dir, options);
  const out = rows(await policy.logits(SEQUENCES), policy.config.vocabSize);
  policy.dispose();
  return out;
}

/** Ours → theirs, step one: a random base (norms near 1, biases non-zero), a random adapter, our merge, our logits. */
async function writeOurs({ name, config }, seed) {
  const dir = join(root, `ours-${name}`), base = join(dir, 'base'), adapter = join(dir, 'adapter'), merged = join(dir, 'merged');
  const policy = BuiltinPolicy.create(config, { seed, lora: LORA });
  policy.setTensors(policy.getTensors().map((t, i) => {
    const noise = normals(t.data.length, /norm/.test(t.name) ? 0.1 : 0.2, seed * 1000 + i);
    return { ...t, data: /norm/.test(t.name) ? noise.map((v) => 1 + v) : noise };
  }));
  policy.setAdapterTensors(policy.getAdapterTensors().map((t, i) => ({ ...t, data: normals(t.data.length, 0.2, seed * 2000 + i) })));
  await policy.adapters.saveBase(base);
  await policy.save(adapter);
  const logits = rows(await policy.logits(SEQUENCES), config.vocabSize);
  policy.dispose();
  await mergeAdapter(base, adapter, merged);
  const mergedLogits = await logitsOf(merged);
  const effect = maxDiff(logits, await logitsOf(base));
  return { name, base, adapter, merged, sequences: SEQUENCES, logits, ourMergedVsOurs: maxDiff(mergedLogits, logits), adapterEffect: effect };
}

function gateOurs(ours, theirs) {
  const c = theirs, name = `ours→theirs ${c.name}`;
  gate(c.load_warnings.length === 0, `${name}: PeftModel.from_pretrained warned: ${c.load_warnings.join(' | ')}`);
  gate(Object.keys(c.base_load_problems).length === 0 && Object.keys(c.merged_load_problems).length === 0, `${name}: transformers reported keys: ${JSON.stringify([c.base_load_problems, c.merged_load_problems])}`);
  gate(c.tensors_peft_did_not_read.length === 0 && c.peft_params_not_in_file.length === 0 && c.adapter_tensor_max_diff === 0, `${name}: PEFT did not read every adapter tensor as saved`);
  gate(c.peft_vs_ours_max_abs_logit <= LOGIT_TOLERANCE, `${name}: PEFT's logits differ by ${c.peft_vs_ours_max_abs_logit}`);
  gate(c.merged_transformers_vs_ours_max_abs_logit <= LOGIT_TOLERANCE, `${name}: the merged folder's logits in transformers differ by ${c.merged_transformers_vs_ours_max_abs_logit}`);
  gate(c.peft_merge_vs_ours_max_abs_weight <= WEIGHT_TOLERANCE, `${name}: merge_and_unload's weights differ by ${c.peft_merge_vs_ours_max_abs_weight}`);
  gate(c.merged_target_weights === LORA.targetModules.length * SHAPE.numLayers, `${name}: ${c.merged_target_weights} merged target weights`);
  gate(ours.ourMergedVsOurs <= LOGIT_TOLERANCE && ours.adapterEffect > EFFECT_FACTOR * LOGIT_TOLERANCE, `${name}: our merge or the adapter's effect is off`);
  const { load_warnings: _w, ...measured } = c;
  return { ...measured, our_merged_vs_ours_max_abs_logit: ours.ourMergedVsOurs, adapter_effect_max_abs_logit: ours.adapterEffect };
}

/** The error loading `adapter` on `base` through lora.from raises (undefined when it loads). */
async function loadError(base, adapter) {
  try {
    (await BuiltinPolicy.load(base, { lora: { from: adapter } })).dispose();
    return undefined;
  } catch (error) {
    return error;
  }
}

/** Theirs → ours: PEFT's adapters read through lora.from, merged here, and PEFT features refused by name. */
async function checkTheirs(c) {
  const name = `theirs→ours ${c.name}`, base = join(c.folder, 'base'), expected = JSON.parse(readFileSync(join(c.folder, 'expected.json'), 'utf8'));
  const logits = await logitsOf(base, { lora: { from: join(c.folder, 'adapter') } });
  const baseLogits = await logitsOf(base);
  const rslora = await logitsOf(base, { lora: { from: join(c.folder, 'adapter-rslora') } });
  await mergeAdapter(base, join(c.folder, 'adapter'), join(c.folder, 'merged'));
  const merged = await readModelWeights(join(c.folder, 'merged'));
  const peftMerged = await readSafetensors(join(c.folder, 'peft-merged.safetensors'));
  const weightDiff = peftMerged.reduce((m, t) => Math.max(m, maxDiff([Array.from(t.data)], [Array.from(merged.find((u) => u.name === t.name).data)])), 0);
  const out = {
    name: c.name, lora_from_vs_peft_max_abs_logit: maxDiff(logits, expected.logits), base_vs_transformers_max_abs_logit: maxDiff(baseLogits, expected.base_logits),
    adapter_effect_max_abs_logit: maxDiff(expected.logits, expected.base_logits), rslora_vs_peft_max_abs_logit: maxDiff(rslora, c.rslora_logits),
    our_merge_vs_peft_merge_max_abs_weight: weightDiff, merged_weights_compared: peftMerged.length, refused: {},
  };
  gate(out.lora_from_vs_peft_max_abs_logit <= LOGIT_TOLERANCE && out.rslora_vs_peft_max_abs_logit <= LOGIT_TOLERANCE, `${name}: logits differ from PEFT's`);
  gate(out.base_vs_transformers_max_abs_logit <= LOGIT_TOLERANCE, `${name}: the base's logits differ from transformers'`);
  gate(out.adapter_effect_max_abs_logit > EFFECT_FACTOR * LOGIT_TOLERANCE, `${name}: the adapter barely moves the logits`);
  gate(weightDiff <= WEIGHT_TOLERANCE && peftMerged.length === LORA.targetModules.length * SHAPE.numLayers, `${name}: our merge differs from merge_and_unload by ${weightDiff}`);
  for (const [field, adapter] of Object.entries(c.variants)) {
    const error = await loadError(base, adapter);
    out.refused[field] = error ? { code: error.code, message: error.message.replace(`${adapter}/`, '') } : { loaded: true };
    gate(error?.code === 'GRPO_UNSUPPORTED' && error.message.includes(field), `${name}: an adapter with ${field} is not refused naming the field`);
  }
  return out;
}

const ours = [];
for (const [i, c] of OURS.entries()) ours.push(await writeOurs(c, 20 + i));
writeFileSync(join(root, 'cases.json'), JSON.stringify(ours));
const read = runPython('read');
const oursToTheirs = read.cases.map((c, i) => gateOurs(ours[i], c));
const written = runPython('write');
const theirsToOurs = [];
for (const c of written.cases) theirsToOurs.push(await checkTheirs(c));
if (args.includes('--write-fixture')) {
  const fixture = join(HERE, '..', 'test', 'fixtures', 'peft-real'), from = join(root, 'qwen2');
  mkdirSync(join(fixture, 'adapter'), { recursive: true });
  const entries = ['base', 'adapter/adapter_config.json', 'adapter/adapter_model.safetensors', 'peft-merged.safetensors', 'expected.json'];
  for (const entry of entries) cpSync(join(from, entry), join(fixture, entry), { recursive: true });
}
console.log(JSON.stringify({ versions: read.versions, tolerances: { logit: LOGIT_TOLERANCE, weight: WEIGHT_TOLERANCE }, oursToTheirs, theirsToOurs, failures }, null, 2));
if (!args.includes('--keep')) rmSync(root, { recursive: true, force: true });
process.exitCode = failures.length > 0 ? 1 : 0;
