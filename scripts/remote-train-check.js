// `grpo train` on rollouts from a real engine (issue 21): llama.cpp through node-llama-cpp behind
// scripts/llama-completions-server.js (vLLM's completions and runtime adapter protocol, adapters by reload with
// merged weights), on loopback. node-llama-cpp lives in a folder outside the project (.ci/run installs it):
//   node scripts/remote-train-check.js /tmp/llama-engine [--json out.json]
// A tiny LoRA policy after a short SFT (remark recipe, movies-multi requests) has its base exported to GGUF (f32) and
// served; `train` (lib's, as `grpo train` calls it) runs 3 steps × 2 prompts × 3 candidates, ≤ 24 new tokens at
// temperature 1 without top-k/top-p, rollouts.backend "remote", pushEvery 1. Gated:
//   1. every (step, prompt) asked exactly once with n = 3 and its seed (the harness's request log), each step's
//      completion tokens those the engine served; each step sampled by the version pushed after the step before
//      (policyVersion of the metrics rows; loads and unloads in the log in that order);
//   2. the engine's log-probs against the trainer's scores of the same tokens: sampling_logp_difference/max ≤ 1e-3;
//   3. loss, grad norm and reward finite, the gradient non-zero at a step before the last (a pushed adapter differs
//      from the base);
//   4. a server killed mid-step 2 ends the run in GRPO_REMOTE_UNAVAILABLE naming it, with one metrics row and a
//      checkpoint; resuming against a fresh harness (another port: rollouts.endpoints changed) pushes the saved
//      version again, finishes the steps and logs the uninterrupted run's metrics (wall times aside);
//   5. two servers, one killed after 2 answers (at step 3): with fail-over (the default) its prompts go to the other,
//      the run finishes without an error, every (step, prompt) is answered exactly once over the two servers, and the
//      metrics are the uninterrupted run's.
// Reported: the trainer-side overhead per step (the generate phase minus the engine's own decode time, as a share
// of the step) and the harness's reload time per push. Exits 1 when a gate fails. Needs `npx tsc -p tsconfig.json`.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BuiltinPolicy, mixSeed, requestSeed, resume, train } from '../dist/index.js';
import { loadLlamaCpp, reportCheck } from './llama-engine.js';
import { llamaServing, loadPolicy, remoteConfig, rows, startingPolicy, tinyMovies } from './remote-train-fixture.js';

const STEPS = 3, GROUPS = 2, CANDIDATES = 3, SEED = 7, TOL_LOGP = 1e-3;
const deterministic = (runDir) => rows(runDir).map(({ time: _t, elapsed: _e, ...rest }) => rest);
const version = (step) => (step === 0 ? 'policy' : `policy-step-${step}`);
const sameJson = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/** The harness log steps `from` … STEPS − 1 should leave: each step's pushes, then its GROUPS requests; the last push. */
function expectedLog(from) {
  const entries = [];
  const push = (step) => entries.push(`load ${version(step)}`, ...(step > 1 ? [`unload ${version(step - 1)}`] : []));
  for (let step = from; step < STEPS; step++) {
    if (step > 0 && step === from) entries.push(`load ${version(step)}`); // a resume pushes the version it samples again
    for (let p = 0; p < GROUPS; p++) entries.push(`completion ${version(step)} n=${CANDIDATES} seed=${requestSeed(mixSeed(SEED, step) >>> 0, step, p)}`);
    push(step + 1);
  }
  return entries;
}
const logLines = (server) => server.log.map((e) => (e.kind === 'completion' ? `completion ${e.model} n=${e.n} seed=${e.seed}` : `${e.kind} ${e.model}`));

/** Per step of a run served by `server` from step `from`: the completion tokens served and the engine's decode seconds. */
function servedPerStep(server, from) {
  const completions = server.log.filter((e) => e.kind === 'completion');
  return Array.from({ length: STEPS - from }, (_, s) => {
    const step = completions.slice(s * GROUPS, (s + 1) * GROUPS);
    return { tokens: step.reduce((a, e) => a + e.tokens, 0), decodeSeconds: step.reduce((a, e) => a + e.decodeMs, 0) / 1e3 };
  });
}

const llamaCpp = await loadLlamaCpp(process.argv[2], 'remote-train-check.js');
const dir = mkdtempSync(join(tmpdir(), 'grpo-remote-train-'));
let serving, result;
try {
  const started = process.hrtime.bigint();
  const moviesDir = tinyMovies(join(dir, 'movies'), [1, 2, 1]);
  const start = await startingPolicy(moviesDir, join(dir, 'sft'));
  serving = await llamaServing(llamaCpp, start, dir);
  const serve = serving.serve;
  const run = async (url, runDir, rollouts = {}) => {
    const config = remoteConfig(moviesDir, url, { seed: SEED, steps: STEPS, groups: GROUPS, candidates: CANDIDATES }, rollouts);
    return train({ config, policy: await BuiltinPolicy.load(start.dir, { lora: config.lora }), runDir, loadPolicy });
  };

  // 1-3: an uninterrupted run
  const whole = await serve(STEPS * GROUPS);
  await run(whole.url, join(dir, 'whole'));
  const metrics = rows(join(dir, 'whole')), served = servedPerStep(whole, 0);
  const requestsOnce = sameJson(logLines(whole), expectedLog(0));
  const versions = metrics.map((m) => m.policyVersion);
  const candidatesUsed = metrics.every((m, s) => m.tokens.completion === served[s].tokens);
  const logpMax = metrics.map((m) => m['sampling/sampling_logp_difference/max']);
  const finite = metrics.every((m) => ['loss', 'grad_norm', 'reward'].every((k) => Number.isFinite(m[k])));
  // a step whose groups all score alike has no gradient; one before the last must move the adapter, or the pushes are all the base
  const adapterMoved = metrics.slice(0, -1).some((m) => m.grad_norm > 0);
  const overhead = metrics.map((m, s) => ({
    generateSeconds: m.time.generate, engineDecodeSeconds: served[s].decodeSeconds, stepSeconds: m.time.total,
    overheadShareOfStep: (m.time.generate - served[s].decodeSeconds) / m.time.total,
  }));

  // 4: killed mid-step 2 (answers step 1 and the first prompt of step 2), then resumed on a fresh harness
  const dying = await serve(GROUPS + 1);
  const killedDir = join(dir, 'killed');
  const error = await run(dying.url, killedDir).then(() => undefined, (e) => e);
  const killedTyped = error?.code === 'GRPO_REMOTE_UNAVAILABLE' && error.message.includes(dying.url);
  const leftCheckpoint = sameJson(rows(killedDir).map((m) => m.step), [1]) && existsSync(join(killedDir, 'latest.json'));
  const fresh = await serve((STEPS - 1) * GROUPS);
  const resumed = await resume(killedDir, { loadPolicy, overrides: { rollouts: { endpoints: [fresh.url], retries: 2 } } });
  const resumedRequestsOnce = sameJson(logLines(fresh), expectedLog(1));
  const resumedSame = sameJson(deterministic(killedDir), deterministic(join(dir, 'whole')));

  // 5: fail-over between two servers, one of them killed after 2 answers
  const [lasting, failing] = [await serve(Infinity), await serve(2)];
  const failoverDir = join(dir, 'failover');
  const failoverError = await run(lasting.url, failoverDir, { endpoints: [failing.url, lasting.url] }).then(() => undefined, (e) => e);
  const answered = [lasting, failing].flatMap(logLines).filter((l) => l.startsWith('completion ')).sort();
  const failoverAnsweredOnce = sameJson(answered, expectedLog(0).filter((l) => l.startsWith('completion ')).sort());
  const failoverSame = failoverError === undefined && sameJson(deterministic(failoverDir), deterministic(join(dir, 'whole')));

  const gates = {
    requestsOnce, policyVersions: sameJson(versions, [0, 1, 2].map(version)), candidatesUsed, logpWithinTolerance: logpMax.every((d) => d <= TOL_LOGP),
    finiteMetrics: finite, adapterMoved, killedTyped, leftCheckpoint, resumedSteps: resumed.steps === STEPS, resumedRequestsOnce, resumedSameMetrics: resumedSame,
    failoverAnsweredOnce, failoverSameMetrics: failoverSame,
  };
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  result = {
    pass: Object.values(gates).every(Boolean), gates, tolerance: TOL_LOGP,
    samplingLogpDifferenceMax: logpMax, importanceRatio: metrics.map((m) => [m['sampling/importance_sampling_ratio/min'], m['sampling/importance_sampling_ratio/max']]),
    policyVersions: versions, rewards: metrics.map((m) => m.reward), losses: metrics.map((m) => m.loss), gradNorms: metrics.map((m) => m.grad_norm),
    completionTokens: served.map((s) => s.tokens), killedServer: error ? `${error.code}: ${error.message}` : 'no error',
    failover: { answered: [failing, lasting].map((s) => s.log.filter((e) => e.kind === 'completion').length),
      error: failoverError ? `${failoverError.code}: ${failoverError.message}` : 'none' },
    overheadPerStep: overhead, meanOverheadShareOfStep: mean(overhead.map((o) => o.overheadShareOfStep)),
    reloadSecondsPerPush: whole.log.filter((e) => e.kind === 'load').map((e) => e.reloadMs / 1e3),
    harnessLog: logLines(whole), seconds: Number(process.hrtime.bigint() - started) / 1e9,
  };
} finally {
  await serving?.close();
  rmSync(dir, { recursive: true, force: true });
}
reportCheck(result, 'remote-train-check');
