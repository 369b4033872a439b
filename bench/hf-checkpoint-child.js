// One mode of bench/hf-checkpoint.js in a process of its own, so the peaks it reads are that mode's: loads the
// folder, generates a few sequences, then runs one ReMaRk GRPO step through the trainer's own trainStep (the bundled
// movies task, the reference cloned as train() clones it). The peak (VmHWM) is reset after each phase
// (/proc/self/clear_refs), so each phase reports its own. Prints one JSON line.
// Run by the parent: node --expose-gc bench/hf-checkpoint-child.js '<json of the options>'
import { writeFileSync } from 'node:fs';
import { BuiltinPolicy, createTask, encodePrompt, GrpoError, needsReference, resolveConfig, setThreads, trainStep } from '../dist/index.js';
import { BUILTIN_OPTIONS } from '../dist/policy/options.js';
import { peakRssMb, rssMb } from './timing.js';

const MB = 2 ** 20;
const since = (start) => (performance.now() - start) / 1000;

/** Starts a new peak: writing 5 to clear_refs resets VmHWM to the current RSS (Linux ≥ 4.0). */
function resetPeak() {
  globalThis.gc?.();
  writeFileSync('/proc/self/clear_refs', '5');
}

/** The policy options of a mode: full fine-tuning (float32 weights and moments), or LoRA adapters on a frozen base. */
function policyOptions(o) {
  if (o.mode === 'full') return {};
  // LoRA training is the `lora` option of branch i-lora (issue 19); a build without it cannot run this mode
  if (!Object.hasOwn(BUILTIN_OPTIONS, 'lora')) {
    throw new GrpoError('GRPO_UNSUPPORTED', 'mode lora: this build has no LoRA training (BuiltinPolicy option `lora`, '
      + 'being built on branch i-lora, is not merged yet); run --modes full');
  }
  return { lora: { rank: o.rank } };
}

/** Load time and the resident memory the loaded policy holds. */
async function load(o) {
  const start = performance.now();
  const policy = await BuiltinPolicy.load(o.dir, policyOptions(o));
  const seconds = since(start);
  const peakMb = peakRssMb();
  globalThis.gc?.(); // the float32 copies the reader made
  return { policy, load: { seconds, peakMb, rssMb: rssMb() } };
}

/** Generation tokens/s: `rows` prompts of the task, `tokens` new tokens each (no stop tokens, so every row runs to the cap). */
async function generation(policy, texts, o) {
  resetPeak();
  const prompts = texts.slice(0, o.genRows).map((t) => encodePrompt(policy.tokenizer, t));
  const start = performance.now();
  const out = await policy.generate(prompts, { maxNewTokens: o.genTokens, stopTokens: [], seed: 1 });
  const seconds = since(start);
  const tokens = out.reduce((n, g) => n + g.tokens.length, 0);
  return { rows: prompts.length, tokens, seconds, tokensPerSecond: tokens / seconds, peakMb: peakRssMb() };
}

/** One ReMaRk step of requests × lists rows, as train() runs it (reference cloned before, not timed in the step). */
async function step(policy, o) {
  const config = resolveConfig({
    recipe: 'remark', steps: 1, groups: o.requests, candidates: o.lists, microBatchTokens: o.microBatchTokens, generation: { maxNewTokens: o.maxTokens },
  });
  const task = createTask(config, policy.tokenizer);
  const cloneStart = performance.now();
  const reference = needsReference(config) ? await policy.clone() : undefined;
  const referenceSeconds = since(cloneStart);
  const rssBeforeMb = rssMb();
  resetPeak();
  const start = performance.now();
  const record = await trainStep({ config, policy, reference, task, lossOptions: config.loss }, 0, 0, 0);
  const seconds = since(start);
  const peakMb = peakRssMb();
  globalThis.gc?.();
  return {
    referenceSeconds, rssBeforeMb, seconds, peakMb, rssAfterMb: rssMb(),
    rows: o.requests * o.lists, tokens: record.tokens, completionMax: record.completionLength.max, truncationRate: record.truncationRate,
    phases: record.time, loss: record.loss, gradNorm: record.gradNorm,
  };
}

async function main(o) {
  if (o.threads > 0) setThreads(o.threads);
  const startMb = rssMb();
  const { policy, load: loaded } = await load(o);
  const prompts = createTask(resolveConfig({ recipe: 'remark', groups: o.genRows }), policy.tokenizer).prompts(0).texts;
  const generated = await generation(policy, prompts, o);
  const stepped = await step(policy, o);
  const c = policy.config;
  const stepTokens = stepped.tokens.prompt + stepped.tokens.completion;
  console.log(JSON.stringify({
    mode: o.mode, startMb, load: loaded, generation: generated, step: stepped,
    model: { parameters: policy.parameterCount(), hiddenSize: c.hiddenSize, numLayers: c.numLayers },
    // the inputs of hf-estimate.js
    stateBytes: (stepped.rssAfterMb - startMb) * MB, transientBytes: Math.max(0, stepped.peakMb - stepped.rssAfterMb) * MB,
    stepSeconds: stepped.seconds, stepTokens, rows: stepped.rows,
  }));
  policy.dispose();
}

await main(JSON.parse(process.argv[2]));
