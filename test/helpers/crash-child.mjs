// One crash-hunting run in its own process (test/crash-*.test.ts spawn it, scripts/test-native.js runs it under
// ASan), so that a crash fails its case instead of killing the test runner.
//   node --expose-gc test/helpers/crash-child.mjs transfer <case>   inputs detached / collected mid-call
//   node --expose-gc test/helpers/crash-child.mjs policy             dispose mid-call, calls after dispose
//   node --expose-gc test/helpers/crash-child.mjs threads            concurrent calls from main and worker_threads
//   node --expose-gc test/helpers/crash-child.mjs all                every case, then threads (the ASan run)
// Prints one line per check; exits 0 when every check held, 1 (with the failures) otherwise. Transfer runs want
// UV_THREADPOOL_SIZE=1 in their environment (see occupyPool).
import * as g from '../../dist/index.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { CASES, detach, expected, same, shared, withoutInput } from './crash-cases.mjs';

const failures = [];

function report(ok, what) {
  if (!ok) failures.push(what);
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
}

async function rejectsWith(promise, code) {
  try {
    await promise;
    return 'resolved';
  } catch (error) {
    return error?.name === 'GrpoError' && error.code === code ? true : `${error?.name} ${error?.code} ${error?.message}`;
  }
}

/**
 * An async matmul that keeps libuv's only thread busy (UV_THREADPOOL_SIZE=1), so that the call queued after it
 * starts only once the main thread has detached its inputs: a worker reading JS memory then reads scribbles.
 */
function occupyPool() {
  const n = 768;
  return g.matmul(new Float32Array(n * n).fill(1), new Float32Array(n * n).fill(1), { m: n, n, k: n });
}

/** Each input detached right after the async call starts, then the inputs collected mid-call; outputs detached. */
async function transferCase(name) {
  const c = CASES[name], want = expected(name);
  for (const input of Object.keys(c.inputs()).filter((k) => !c.outputs.includes(k))) {
    const x = c.inputs();
    const blocker = occupyPool();
    const pending = c.run(x, true);
    detach(x[input]);
    globalThis.gc();
    const got = withoutInput(await pending, x, input);
    report(same(got, withoutInput(want.result, want.inputs, input)), `${name}: ${input} transferred mid-call, result as the sync call's`);
    await blocker;
  }
  const collected = c.run(c.inputs(), true);
  globalThis.gc();
  report(same(await collected, want.result), `${name}: inputs garbage-collected mid-call, result as the sync call's`);
  const onShared = c.run(Object.fromEntries(Object.entries(c.inputs()).map(([k, v]) => [k, shared(v)])), true);
  globalThis.gc();
  report(same(await onShared, want.result), `${name}: inputs and outputs on SharedArrayBuffers (used in place) collected mid-call`);
  for (const output of c.outputs) {
    const x = c.inputs();
    const blocker = occupyPool();
    const pending = c.run(x, true);
    detach(x[output]);
    globalThis.gc();
    const outcome = await rejectsWith(pending, 'GRPO_DETACHED_BUFFER');
    report(outcome === true, `${name}: output ${output} transferred mid-call rejects GRPO_DETACHED_BUFFER (${outcome})`);
    await blocker;
  }
}

const MODEL = {
  vocabSize: 512, hiddenSize: 128, intermediateSize: 256, numLayers: 3, numHeads: 4, numKvHeads: 2, headDim: 32,
  maxPositions: 160, rmsNormEps: 1e-6, ropeTheta: 10000, tieEmbeddings: false, attentionBias: true, architecture: 'Qwen2ForCausalLM',
};
const PROMPTS = Array.from({ length: 6 }, (_, i) => Array.from({ length: 8 + i }, (_, t) => (i * 31 + t * 7) % MODEL.vocabSize));
const BATCH = { prompts: PROMPTS, completions: PROMPTS.map((p) => p.map((t) => (t * 3 + 1) % MODEL.vocabSize)) };

/** Every async method of a policy, as calls on it. */
const POLICY_CALLS = {
  generate: (p) => p.generate(PROMPTS, { maxNewTokens: 48, seed: 3 }),
  score: (p) => p.score(BATCH),
  step: (p) => p.step(BATCH, g.sftLoss()),
  logits: (p) => p.logits(PROMPTS),
  clone: (p) => p.clone(),
  save: (p) => {
    const dir = mkdtempSync(join(tmpdir(), 'grpo-crash-'));
    return p.save(join(dir, 'policy')).finally(() => rmSync(dir, { recursive: true, force: true }));
  },
};

/** Every sync method of a policy that touches its model. */
const POLICY_SYNC_CALLS = {
  parameterCount: (p) => p.parameterCount(),
  getTensors: (p) => p.getTensors(),
  setTensors: (p, tensors) => p.setTensors(tensors),
  getOptimizerState: (p) => p.getOptimizerState(),
};

/** Two policies with the same seed, each generating, scoring and stepping at once: their results agree. */
async function policyRound() {
  const run = async () => {
    const policy = await g.BuiltinPolicy.createAsync(MODEL, { seed: 2 });
    const [generated, scored] = await Promise.all([POLICY_CALLS.generate(policy), POLICY_CALLS.score(policy)]);
    const { loss } = await POLICY_CALLS.step(policy);
    policy.dispose();
    return { tokens: generated.map((x) => x.tokens), logp: scored.logp, loss };
  };
  const [a, b] = await Promise.all([run(), run()]);
  return same(a, b);
}

/** Every kernel case twice at once and two policies at once on this thread; true when all results agree. */
async function concurrentRound() {
  const names = Object.keys(CASES);
  const wants = names.map((name) => expected(name).result);
  const [results, policies] = await Promise.all([
    Promise.all([...names, ...names].map((name) => CASES[name].run(CASES[name].inputs(), true))), policyRound()]);
  return policies && results.every((r, i) => same(r, wants[i % names.length]));
}

/** 'resolved', 'GrpoError <code>' or what else the promise did. */
async function settle(promise) {
  try {
    await promise;
    return 'resolved';
  } catch (error) {
    return error?.name === 'GrpoError' ? `GrpoError ${error.code}` : `${error?.name}: ${error?.message}`;
  }
}

function threw(call) {
  try {
    call();
    return 'returned';
  } catch (error) {
    return error?.name === 'GrpoError' ? `GrpoError ${error.code}` : `${error?.name}: ${error?.message}`;
  }
}

const typed = (outcome) => outcome.startsWith('GrpoError');

/** After this, a policy call made before it is running in native code (its queue turn has come). */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** dispose() mid-call for each async method (and mid-step after its scoring), calls after dispose, sync calls mid-call. */
async function policyCases() {
  for (const [name, call] of Object.entries(POLICY_CALLS)) {
    for (const when of ['queued', 'running']) {
      const policy = g.BuiltinPolicy.create(MODEL, { seed: 1 });
      const pending = call(policy);
      if (when === 'running') await nextTurn();
      policy.dispose();
      globalThis.gc();
      const outcome = await settle(pending);
      // A running native call keeps the model and completes; a step's later stages (backward, AdamW) are refused.
      const completes = when === 'running' && name !== 'step';
      report(outcome === (completes ? 'resolved' : 'GrpoError GRPO_INVALID_ARGUMENT'),
        `policy: dispose() while ${name} is ${when}: ${completes ? 'it completes' : 'a typed error'} (${outcome})`);
      const after = await settle(call(policy));
      report(after === 'GrpoError GRPO_INVALID_ARGUMENT', `policy: ${name} after dispose() is a typed error (${after})`);
    }
  }
  const stepping = g.BuiltinPolicy.create(MODEL, { seed: 1 });
  const step = stepping.step(BATCH, g.sftLoss(), { onProgress: (f) => f === 0.5 && stepping.dispose() });
  const outcome = await settle(step);
  report(outcome === 'GrpoError GRPO_INVALID_ARGUMENT', `policy: dispose() between a step's scoring and its backward rejects the step (${outcome})`);

  const typedPrompts = () => PROMPTS.map((p) => Int32Array.from(p));
  const reference = await POLICY_CALLS.generate(g.BuiltinPolicy.create(MODEL, { seed: 1 }));
  const prompts = typedPrompts();
  const generating = g.BuiltinPolicy.create(MODEL, { seed: 1 }).generate(prompts, { maxNewTokens: 48, seed: 3 });
  prompts.forEach(detach);
  globalThis.gc();
  report(same((await generating).map((x) => x.tokens), reference.map((x) => x.tokens)), 'policy: generate with its Int32Array prompts transferred mid-call');
  const scoring = g.BuiltinPolicy.create(MODEL, { seed: 1 });
  const batch = { prompts: typedPrompts(), completions: BATCH.completions.map((c) => Int32Array.from(c)) };
  const scored = scoring.score(batch);
  [...batch.prompts, ...batch.completions].forEach(detach);
  globalThis.gc();
  report(same((await scored).logp, (await scoring.score(BATCH)).logp), 'policy: score with its Int32Array batch transferred mid-call');

  const busy = g.BuiltinPolicy.create(MODEL, { seed: 1 });
  const tensors = busy.getTensors();
  for (const [name, call] of Object.entries(POLICY_SYNC_CALLS)) {
    const pending = busy.step(BATCH, g.sftLoss());
    await nextTurn();
    const during = threw(() => call(busy, tensors));
    report(name === 'parameterCount' ? during === 'returned' : during === 'GrpoError GRPO_INVALID_ARGUMENT',
      `policy: ${name}() while a step is in flight (${during})`);
    report(await settle(pending) === 'resolved', `policy: the step in flight during ${name}() completes`);
  }
  const queued = [busy.generate(PROMPTS, { maxNewTokens: 8 }), busy.score(BATCH), busy.step(BATCH, g.sftLoss())];
  busy.dispose();
  busy.dispose();
  const outcomes = await Promise.all(queued.map(settle));
  report(outcomes.every((o) => o === 'resolved' || typed(o)), `policy: calls queued behind dispose() settle (${outcomes})`);
  for (const [name, call] of Object.entries(POLICY_SYNC_CALLS)) {
    const after = threw(() => call(busy, tensors));
    report(after === 'GrpoError GRPO_INVALID_ARGUMENT', `policy: ${name}() after dispose() is a typed error (${after})`);
  }
}

function startWorker(mode) {
  const worker = new Worker(new URL(import.meta.url), { workerData: mode });
  const done = new Promise((resolve, reject) => {
    worker.on('message', resolve);
    worker.on('error', reject);
    worker.on('exit', (code) => resolve(`exited ${code}`));
  });
  return { worker, done };
}

/** Two workers and the main thread call every kernel at once; a third worker is terminated mid-call. */
async function threads() {
  const workers = [startWorker('round'), startWorker('round')];
  const main = await concurrentRound();
  report(main, 'threads: concurrent async kernel and policy calls on the main thread agree with the sync results');
  const answers = await Promise.all(workers.map((w) => w.done));
  report(answers.every((a) => a === true), `threads: the same in two worker_threads at once (${answers})`);
  const doomed = startWorker('hold');
  await new Promise((resolve) => doomed.worker.once('message', resolve));
  await doomed.worker.terminate();
  report(await concurrentRound(), 'threads: a worker terminated mid-call leaves the process working');
}

async function main() {
  const [mode, name] = process.argv.slice(2);
  if (mode === 'transfer') await transferCase(name);
  else if (mode === 'policy') await policyCases();
  else if (mode === 'threads') await threads();
  else if (mode === 'all') {
    for (const caseName of Object.keys(CASES)) await transferCase(caseName);
    await policyCases();
    await threads();
  } else throw new Error(`unknown mode ${mode}`);
  if (failures.length > 0) {
    console.error(`${failures.length} check(s) failed`);
    process.exit(1);
  }
}

async function workerMain() {
  if (workerData === 'round') {
    parentPort.postMessage(await concurrentRound());
    return;
  }
  // 'hold': keep kernel calls in flight until terminated.
  const c = CASES.logprobsBackward;
  for (let i = 0; ; ++i) {
    const pending = c.run(c.inputs(), true);
    if (i === 0) parentPort.postMessage('started');
    await pending;
  }
}

if (isMainThread) await main();
else await workerMain();
