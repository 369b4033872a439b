// The remote rollout backend (lib/rollout/remote.ts) against a real engine (issue 21): llama.cpp through
// node-llama-cpp behind scripts/llama-completions-server.js, the subset of vLLM's /v1/completions the backend uses,
// on loopback. node-llama-cpp lives in a folder outside the project (.ci/run installs it):
//   node scripts/remote-llama-check.js /tmp/llama-engine [--json out.json]
// A small built-in llama policy is exported to GGUF (exportGguf) and served by two such servers. Checked:
//   1. 4 prompts × 4 candidates over both endpoints: every (step, prompt, candidate) arrives once, both endpoints
//      serve, and the engine's log-prob of each sampled token (temperature 1, no truncation) agrees with the
//      trainer's policy.score of the same tokens within 1e-3;
//   2. a server that stops answering after 2 requests (killed mid-step) ends the call in GRPO_REMOTE_UNAVAILABLE
//      naming it.
// Reported: with top-k 40 / top-p 0.95 the engine's processed log-probs against the trainer's full-vocabulary ones.
// Exits 1 when a gated check fails. Needs `npx tsc -p tsconfig.json` first.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportGguf, RemoteRollouts } from '../dist/index.js';
import { serveCompletions } from './llama-completions-server.js';
import { EXACT_CONTEXT, loadLlamaCpp, PROMPTS, reportCheck, testPolicy, testTokenizer } from './llama-engine.js';

const TOL_SAMPLED = 1e-3;

/** Max and mean of (engine log-prob − trainer log-prob) over every token of `rollouts`. */
async function logpGap(policy, prompts, rollouts) {
  const { logp } = await policy.score({ prompts: rollouts.map((r) => prompts[r.prompt]), completions: rollouts.map((r) => r.tokens) });
  const diffs = rollouts.flatMap((r, i) => Array.from(r.logp, (l, t) => l - logp[i][t]));
  return { maxAbs: Math.max(...diffs.map(Math.abs)), mean: diffs.reduce((a, b) => a + b, 0) / diffs.length, tokens: diffs.length };
}

const llamaCpp = await loadLlamaCpp(process.argv[2], 'remote-llama-check.js');
const dir = mkdtempSync(join(tmpdir(), 'grpo-remote-check-'));
const servers = [];
let result;
try {
  const tok = testTokenizer(), policy = testPolicy('LlamaForCausalLM', tok);
  await policy.save(join(dir, 'policy'));
  await exportGguf(join(dir, 'policy'), join(dir, 'policy.gguf'));
  const llama = await llamaCpp.getLlama({ gpu: false, build: 'never', logLevel: 'error' });
  const model = await llama.loadModel({ modelPath: join(dir, 'policy.gguf') });
  const vocab = policy.config.vocabSize;
  for (let i = 0; i < 2; i++) servers.push(await serveCompletions(model, EXACT_CONTEXT, { vocab }));
  const prompts = PROMPTS.map((p) => Array.from(tok.encode(p).ids));

  const retries = [];
  const onRetry = (r) => retries.push(`${r.endpoint} (${r.step}, ${r.prompt}) attempt ${r.attempt}: ${r.reason}`);
  const remote = new RemoteRollouts({ endpoints: servers.map((s) => s.url), maxInFlight: 2, timeoutMs: 60_000, onRetry });
  const rollouts = await remote.generate(0, prompts, { n: 4, maxTokens: 12, temperature: 1, seed: 7 });
  const keys = new Set(rollouts.map((r) => `${r.step}/${r.prompt}/${r.candidate}`));
  const everyOnce = rollouts.length === 16 && keys.size === 16 && rollouts.every((r, i) => r.prompt === Math.floor(i / 4) && r.candidate === i % 4);
  const sampled = await logpGap(policy, prompts, rollouts);
  const perEndpoint = remote.endpointStats().map((s) => s.requests);

  const truncatedRollouts = await remote.generate(1, prompts, { n: 2, maxTokens: 12, temperature: 1, topK: 40, topP: 0.95, seed: 9 });
  const truncated = await logpGap(policy, prompts, truncatedRollouts);

  const dying = await serveCompletions(model, EXACT_CONTEXT, { vocab, stopAfter: 2 });
  servers.push(dying);
  const killed = await new RemoteRollouts({ endpoints: [dying.url], maxInFlight: 1, retries: 2, backoffMs: 50, timeoutMs: 30_000 })
    .generate(2, prompts, { n: 2, maxTokens: 4 }).then(() => undefined, (error) => error);
  const killedTyped = killed?.code === 'GRPO_REMOTE_UNAVAILABLE' && killed.message.includes(dying.url);

  result = {
    pass: everyOnce && perEndpoint.every((n) => n > 0) && sampled.maxAbs <= TOL_SAMPLED && killedTyped,
    rollouts: rollouts.length, everyOnce, requestsPerEndpoint: perEndpoint, retries, sampledTokens: sampled.tokens, sampledMaxAbsLogpGap: sampled.maxAbs,
    truncatedTokens: truncated.tokens, truncatedMeanLogpExcess: truncated.mean, killedServer: killed ? `${killed.code}: ${killed.message}` : 'no error',
  };
  policy.dispose();
} finally {
  for (const s of servers) await s.close();
  rmSync(dir, { recursive: true, force: true });
}
reportCheck(result, 'remote-llama-check');
