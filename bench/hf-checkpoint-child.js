// One mode of bench/hf-checkpoint.js in a process of its own, so the peaks it reads are that mode's: loads the
// folder, generates a few sequences, then runs one ReMaRk GRPO step through the trainer's own trainStep (the bundled
// movies task, the reference made as train() makes it: a clone, or LoRA's base with adapters off). The peak (VmHWM) is
// reset before each measured phase and call (/proc/self/clear_refs), so each reports its own. Prints one JSON line.
// Run by the parent: node --expose-gc bench/hf-checkpoint-child.js '<json of the options>'
import { writeFileSync } from 'node:fs';
import { setTimeout } from 'node:timers/promises';
import { BuiltinPolicy, createTask, encodePrompt, GrpoError, needsReference, resolveConfig, setThreads, trainStep } from '../dist/index.js';
import { BUILTIN_OPTIONS } from '../dist/policy/options.js';
import { peakRssMb, rssMb } from './timing.js';

const MB = 2 ** 20;
const since = (start) => (performance.now() - start) / 1000;

/** The highest VmHWM seen before the resets since the last {@link highestPeakMb}. */
let highest = 0;

/** Frees what JavaScript dropped: V8 releases the memory of collected ArrayBuffers on a background thread, after the gc. */
async function settle() {
  const start = performance.now();
  globalThis.gc?.();
  await setTimeout(1000);
  globalThis.gc?.();
  return since(start);
}

/** Starts a new peak, once the memory dropped is freed: writing 5 to clear_refs resets VmHWM to the current RSS (Linux ≥ 4.0). */
async function resetPeak() {
  highest = Math.max(highest, peakRssMb());
  const paused = await settle();
  writeFileSync('/proc/self/clear_refs', '5');
  return paused;
}

/** The peak since the last call, across the resets in between. */
function highestPeakMb() {
  const peak = Math.max(highest, peakRssMb());
  highest = 0;
  return peak;
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
  await settle(); // the float32 copies the reader made
  return { policy, load: { seconds, peakMb, rssMb: rssMb() } };
}

/** Generation tokens/s: `rows` prompts of the task, `tokens` new tokens each (no stop tokens, so every row runs to the cap). */
async function generation(policy, texts, o) {
  await resetPeak();
  const prompts = texts.slice(0, o.genRows).map((t) => encodePrompt(policy.tokenizer, t));
  const start = performance.now();
  const out = await policy.generate(prompts, { maxNewTokens: o.genTokens, stopTokens: [], seed: 1 });
  const seconds = since(start);
  const tokens = out.reduce((n, g) => n + g.tokens.length, 0);
  return { rows: prompts.length, tokens, seconds, tokensPerSecond: tokens / seconds, peakMb: peakRssMb() };
}

/** Sum of the prompt + completion lengths of a batch. */
const batchTokens = (batch) => batch.prompts.reduce((n, p, i) => n + p.length + batch.completions[i].length, 0);

/**
 * `policy` with its generate and forward calls measured: the peak during each call above the RSS before it, and the
 * RSS it leaves; `size` is the tokens of a forward, rows × (longest prompt + cap) of a generate (its KV cache's
 * positions); `pausedSeconds` the settling before it, which the step's times leave out.
 */
function traced(policy, trace) {
  const measure = (call, size, run) => async (...args) => {
    const pausedSeconds = await resetPeak();
    const before = rssMb();
    const result = await run(...args);
    trace.push({ call, size: size(...args), peakAboveMb: peakRssMb() - before, grewMb: rssMb() - before, pausedSeconds });
    return result;
  };
  const generate = measure('generate', (prompts, options) => prompts.length * (Math.max(...prompts.map((p) => p.length)) + options.maxNewTokens),
    (prompts, options) => policy.generate(prompts, options));
  const forward = measure('forward', batchTokens, (batch, options) => policy.forward(batch, options));
  return new Proxy(policy, {
    get: (target, key) => (key === 'generate' ? generate : key === 'forward' ? forward : typeof target[key] === 'function' ? target[key].bind(target) : target[key]),
  });
}

/** One ReMaRk step of requests × lists rows, as train() runs it (the reference made before, not timed in the step). */
async function step(policy, o) {
  const config = resolveConfig({
    recipe: 'remark', steps: 1, groups: o.requests, candidates: o.lists, microBatchTokens: o.microBatchTokens, generation: { maxNewTokens: o.maxTokens },
  });
  const task = createTask(config, policy.tokenizer);
  const cloneStart = performance.now();
  // train()'s rule: under LoRA the policy's base with its adapters off (policy.adapters, branch i-lora), else a clone
  const reference = needsReference(config) ? (policy.adapters?.base() ?? (await policy.clone())) : undefined;
  const referenceSeconds = since(cloneStart);
  const trace = [];
  await resetPeak();
  highestPeakMb();
  const rssBeforeMb = rssMb();
  const start = performance.now();
  const record = await trainStep({ config, policy: traced(policy, trace), reference, task, lossOptions: config.loss }, 0, 0, 0);
  const peakMb = highestPeakMb();
  // the step's time without the pauses of the measuring calls (each inside its phase)
  const paused = (call) => trace.filter((t) => t.call === call).reduce((sum, t) => sum + t.pausedSeconds, 0);
  const phases = { ...record.time, generate: record.time.generate - paused('generate'), forward: record.time.forward - paused('forward') };
  phases.total = record.time.total - paused('generate') - paused('forward');
  const seconds = since(start) - paused('generate') - paused('forward');
  await settle();
  return {
    referenceSeconds, rssBeforeMb, seconds, peakMb, rssAfterMb: rssMb(), trace,
    rows: o.requests * o.lists, tokens: record.tokens, completionMax: record.completionLength.max, truncationRate: record.truncationRate,
    phases, loss: record.loss, gradNorm: record.gradNorm,
  };
}

/** The inputs of bench/hf-estimate.js from the step's trace. */
function estimateInputs(startMb, s, o) {
  const forwards = s.trace.filter((t) => t.call === 'forward'), rollout = s.trace.find((t) => t.call === 'generate');
  const keptMb = forwards.reduce((sum, t) => sum + Math.max(0, t.grewMb), 0);
  const largest = forwards.reduce((a, b) => (b.size > a.size ? b : a));
  return {
    stateBytes: (s.rssAfterMb - startMb - keptMb) * MB,
    activationBytesPerToken: Math.max(...forwards.map((t) => (t.peakAboveMb * MB) / t.size)),
    runTokens: largest.size,
    generationBytes: rollout.peakAboveMb * MB, generationPositions: rollout.size, cacheLength: rollout.size / s.rows,
    stepSeconds: s.seconds, optimizerSeconds: s.phases.optimizer, stepTokens: s.tokens.prompt + s.tokens.completion, rows: s.rows,
    promptTokens: s.tokens.prompt, completionTokens: s.tokens.completion, maxTokens: o.maxTokens, microBatchTokens: o.microBatchTokens,
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
  const model = { parameters: policy.parameterCount(), hiddenSize: c.hiddenSize, numLayers: c.numLayers, kvDim: c.numKvHeads * c.headDim };
  console.log(JSON.stringify({ mode: o.mode, startMb, load: loaded, generation: generated, step: stepped, model, ...estimateInputs(startMb, stepped, o) }));
  policy.dispose();
}

const options = JSON.parse(process.argv[2]);
try {
  await main(options);
} catch (error) {
  // the parent prints the reason a mode could not run; the stack goes to stderr
  console.log(JSON.stringify({ mode: options.mode, error: `${error.code ?? error.name}: ${error.message}` }));
  console.error(error);
  process.exitCode = 1;
}
