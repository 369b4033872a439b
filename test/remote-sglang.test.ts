// The remote rollout backend speaking SGLang's native API (protocol "sglang") against fake SGLang servers on loopback
// (test/helpers/fake-sglang.ts), and fail-over for either protocol: the /generate body field by field, answers parsed
// into (step, prompt, candidate) slots, malformed answers typed, retries (a 503, an "abort" finish), an endpoint dying
// mid-call or hanging whose prompts go to the others (every key once), every endpoint down (a typed error naming
// each), SGLang's adapter push checked in loaded_adapters and its full-weight push checked in /get_model_info (a
// server answering success but reporting the old version is an error), and a push meeting an endpoint that is down.
import { afterEach, describe, expect, it } from 'vitest';
import { RemoteRollouts, requestSeed } from '../lib/rollout/remote.js';
import { expectedCandidate, fakeSglang, generateAnswer, type FakeSglang, type GenerateBody, type SglangBehaviour } from './helpers/fake-sglang.js';

const servers: FakeSglang[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
const serve = async (b: SglangBehaviour = {}) => {
  const s = await fakeSglang(b);
  servers.push(s);
  return s;
};

const prompts = (count: number) => Array.from({ length: count }, (_, p) => Int32Array.from([p + 1, 2 * p + 3, 5]));
// long enough that an answered request never times out on a loaded 2-core machine; only the hangs do
const fast = { timeoutMs: 1500, retries: 2, backoffMs: 5, protocol: 'sglang' as const };

/** Every rollout of `list` × n once, in its slot, with the fake server's candidate. */
function expectAll(rollouts: Awaited<ReturnType<RemoteRollouts['generate']>>, list: Int32Array[], n: number, step: number, maxTokens: number) {
  expect(rollouts).toHaveLength(list.length * n);
  rollouts.forEach((r, i) => {
    expect([r.step, r.prompt, r.candidate]).toEqual([step, Math.floor(i / n), i % n]);
    const e = expectedCandidate(Array.from(list[r.prompt]), r.candidate, maxTokens);
    expect([Array.from(r.tokens), Array.from(r.logp), r.truncated]).toEqual([e.tokens, e.logp, e.truncated]);
  });
}

describe('SGLang /generate', () => {
  it('sends the prompt n times with one sampling_params each, every sampling field explicit, and reads output_token_logprobs', async () => {
    const server = await serve();
    const remote = new RemoteRollouts({ endpoints: [server.url], model: 'policy', ...fast });
    const rollouts = await remote.generate(3, [Int32Array.from([4, 5, 6])], {
      model: 'policy-step-3', n: 2, maxTokens: 8, temperature: 0.7, topP: 0.9, topK: 20, minP: 0.05, stop: ['\n\n'], stopTokenIds: [0], seed: 42,
    });
    const seed = requestSeed(42, 3, 0);
    const params = (c: number) => ({
      max_new_tokens: 8, temperature: 0.7, top_p: 0.9, top_k: 20, min_p: 0.05, stop: ['\n\n'], stop_token_ids: [0], sampling_seed: seed + c,
    });
    expect(server.generates).toEqual([{
      input_ids: [[4, 5, 6], [4, 5, 6]], sampling_params: [params(0), params(1)], return_logprob: true, lora_path: ['policy-step-3', 'policy-step-3'], stream: false,
    }]);
    expectAll(rollouts, [Int32Array.from([4, 5, 6])], 2, 3, 8);
    // the base model (no lora_path), and off fields sent as their off values: SGLang would fill them from generation_config.json
    await remote.generate(0, [Int32Array.from([1])]);
    expect(server.generates[1]).toEqual({
      input_ids: [[1]], sampling_params: [{ max_new_tokens: 256, temperature: 1, top_p: 1, top_k: -1, min_p: 0 }], return_logprob: true, stream: false,
    });
  });

  it('retries a 503 and an "abort" finish on the same endpoint, with the same body', async () => {
    const aborted = (body: GenerateBody) => ({ json: generateAnswer(body).map((a, c) => (c === 1 ? { ...a, meta_info: { ...a.meta_info, finish_reason: { type: 'abort', message: 'weights updating' } } } : a)) });
    const server = await serve({ plan: (body, attempt) => (attempt > 1 ? undefined : body.input_ids[0][0] === 1 ? { status: 503 } : aborted(body)) });
    const heard: string[] = [];
    const remote = new RemoteRollouts({ endpoints: [server.url], ...fast, onRetry: (r) => heard.push(`${r.prompt}: ${r.reason}`) });
    const list = prompts(2);
    expectAll(await remote.generate(0, list, { n: 2, maxTokens: 6, seed: 1 }), list, 2, 0, 6);
    expect(heard.sort()).toEqual(['0: HTTP 503 {"error":"injected 503"}', '1: candidate 1 aborted by the server ("weights updating")']);
    expect(server.generates).toHaveLength(4);
    for (const p of [0, 1]) {
      const bodies = server.generates.filter((b) => b.input_ids[0][0] === p + 1);
      expect(bodies[1]).toEqual(bodies[0]);
    }
  });

  it('a malformed answer is GRPO_DATA_FORMAT naming the endpoint\'s /generate', async () => {
    const meta = (f: (m: Record<string, unknown>) => Record<string, unknown>) => (body: GenerateBody) => ({ json: generateAnswer(body).map((a) => ({ ...a, meta_info: f(a.meta_info) })) });
    const cases: [SglangBehaviour['plan'], RegExp][] = [
      [() => ({ json: { text: 'one answer' } }), /expected a list of 2 answers/],
      [(body) => ({ json: generateAnswer(body).slice(1) }), /expected 2 answers but received 1/],
      [meta(({ output_token_logprobs: _, ...m }) => m), /answer 0 needs meta_info.output_token_logprobs/],
      [meta((m) => ({ ...m, output_token_logprobs: [[0.5, 3, null]] })), /answer 0 needs meta_info.output_token_logprobs: one \[logprob <= 0/],
      [meta((m) => ({ ...m, output_token_logprobs: [[-0.5, -3, null]] })), /answer 0 needs meta_info.output_token_logprobs/],
      [meta(({ finish_reason: _, ...m }) => m), /answer 0 has no meta_info.finish_reason of type "stop" or "length" \(received null\)/],
    ];
    for (const [plan, message] of cases) {
      const server = await serve({ plan });
      const error = await new RemoteRollouts({ endpoints: [server.url], ...fast }).generate(0, prompts(1), { n: 2 }).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'GRPO_DATA_FORMAT', message: expect.stringContaining(`${server.url}/generate: `) });
      expect((error as Error).message).toMatch(message);
      expect(server.generates).toHaveLength(1); // not retried
    }
  });
});

describe('fail-over', () => {
  it('an endpoint dying mid-call hands its prompts to the others: every (step, prompt, candidate) once; it gets no more requests', async () => {
    const a = await serve({ delayMs: 20 }), b = await serve({ delayMs: 20 }), dying = await serve({ dieAfter: 3, delayMs: 20 });
    const remote = new RemoteRollouts({ endpoints: [a.url, dying.url, b.url], maxInFlight: 2, ...fast });
    const list = prompts(16);
    const rollouts = await remote.generate(5, list, { n: 3, maxTokens: 7, seed: 3 });
    expectAll(rollouts, list, 3, 5, 7);
    const stats = remote.endpointStats();
    expect(stats.map((s) => s.down === null)).toEqual([true, false, true]);
    expect(stats[1].down).toMatch(new RegExp(`^${dying.url} stayed down for rollout \\(step 5, prompt \\d+\\): connection failed`));
    // each prompt's candidates come from one server; what the dying one answered before its third request was not asked again
    const byPrompt = list.map((_, p) => new Set(rollouts.slice(3 * p, 3 * p + 3).map((r) => r.endpoint)));
    expect(byPrompt.every((e) => e.size === 1)).toBe(true);
    const fromDying = byPrompt.flatMap((e, p) => (e.has(dying.url) ? [p] : []));
    expect(fromDying.length).toBeGreaterThan(0);
    const fromLive = [...a.generates, ...b.generates].map((g) => g.input_ids[0][0] - 1);
    expect([...fromLive, ...fromDying].sort((x, y) => x - y)).toEqual(Array.from({ length: 16 }, (_, p) => p));
    const before = stats[1].requests;
    expectAll(await remote.generate(6, list.slice(0, 4), { n: 3, maxTokens: 7 }), list.slice(0, 4), 3, 6, 7);
    expect(remote.endpointStats()[1].requests).toBe(before);
  });

  it('an endpoint whose requests hang is given up after its retries; its prompts in flight go to the other', async () => {
    const good = await serve(), hanging = await serve({ plan: () => ({ hang: true }) });
    const remote = new RemoteRollouts({ endpoints: [hanging.url, good.url], maxInFlight: 2, ...fast, timeoutMs: 800, retries: 1 });
    const list = prompts(6);
    expectAll(await remote.generate(0, list, { n: 2, maxTokens: 5 }), list, 2, 0, 5);
    expect(remote.endpointStats()[0].down).toMatch(/no answer within 800 ms on 2 attempts/);
    expect(good.generates.map((g) => g.input_ids[0][0] - 1).sort()).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('every endpoint down: GRPO_REMOTE_UNAVAILABLE naming each and its last failure', async () => {
    const x = await serve({ plan: () => ({ status: 500 }) }), y = await serve({ plan: () => ({ status: 502 }) });
    const remote = new RemoteRollouts({ endpoints: [x.url, y.url], ...fast });
    const error = await remote.generate(2, prompts(3)).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'GRPO_REMOTE_UNAVAILABLE', message: expect.stringContaining(`every endpoint is down (${x.url}, ${y.url})`) });
    expect((error as Error).message).toContain(`${x.url} stayed down for rollout (step 2, prompt `);
    expect((error as Error).message).toMatch(new RegExp(`${y.url} stayed down .*HTTP 502 .* on 3 attempts`));
    await expect(remote.pushWeights({ path: '/w', version: 'v' })).rejects.toThrow(/every endpoint is down/);
  });
});

describe('SGLang weight sync', () => {
  it('loads the adapter and checks loaded_adapters, unloads the previous one; a push that may repeat unloads first', async () => {
    const a = await serve(), b = await serve();
    const remote = new RemoteRollouts({ endpoints: [a.url, b.url], model: 'base', ...fast });
    await remote.pushAdapter({ name: 'policy-step-1', path: '/shared/run/adapters/step-1' });
    await remote.pushAdapter({ name: 'policy-step-2', path: '/shared/run/adapters/step-2', unload: 'policy-step-1' });
    for (const s of [a, b]) expect([...s.loaded]).toEqual([['policy-step-2', '/shared/run/adapters/step-2']]);
    expect(a.syncs).toEqual([
      { path: '/load_lora_adapter', body: { lora_name: 'policy-step-1', lora_path: '/shared/run/adapters/step-1' } },
      { path: '/load_lora_adapter', body: { lora_name: 'policy-step-2', lora_path: '/shared/run/adapters/step-2' } },
      { path: '/unload_lora_adapter', body: { lora_name: 'policy-step-1' } },
    ]);
    await remote.pushAdapter({ name: 'policy-step-2', path: '/shared/run/adapters/step-2', again: true }); // loaded: unloaded, loaded again
    await remote.pushAdapter({ name: 'policy-step-3', path: '/shared/run/adapters/step-3', again: true }); // not loaded: the refusal ignored
    expect([...a.loaded.keys()]).toEqual(['policy-step-2', 'policy-step-3']);
    await remote.generate(3, prompts(1), { model: 'policy-step-3' });
    expect([...a.generates, ...b.generates].map((g) => g.lora_path)).toEqual([['policy-step-3']]);
  });

  it('a server that answers success but does not load the adapter, or refuses it, is an error naming it', async () => {
    const good = await serve(), stale = await serve({ stale: true }), refusing = await serve({ refuse: true });
    const push = { name: 'policy-step-5', path: '/shared/p' };
    await expect(new RemoteRollouts({ endpoints: [good.url, stale.url], ...fast }).pushAdapter(push)).rejects.toMatchObject({
      code: 'GRPO_REMOTE_UNAVAILABLE', message: `${stale.url} accepted adapter "policy-step-5" but its loaded_adapters do not list it (they list []): it would keep sampling another policy`,
    });
    await expect(new RemoteRollouts({ endpoints: [refusing.url], ...fast }).pushAdapter(push)).rejects.toMatchObject({
      code: 'GRPO_INVALID_ARGUMENT', message: expect.stringMatching(/load_lora_adapter refused the request: HTTP 400 .*LoRA is not enabled/),
    });
  });

  it('reloads full weights with a weight_version and checks /get_model_info; a stale server is an error; vLLM cannot', async () => {
    const a = await serve(), b = await serve();
    const remote = new RemoteRollouts({ endpoints: [a.url, b.url], ...fast });
    await remote.pushWeights({ path: '/shared/run/weights/step-1', version: 'policy-step-1' });
    expect([a.weightVersion, b.weightVersion]).toEqual(['policy-step-1', 'policy-step-1']);
    expect(a.syncs).toEqual([{ path: '/update_weights_from_disk', body: { model_path: '/shared/run/weights/step-1', weight_version: 'policy-step-1' } }]);
    await remote.pushWeights({ path: '/shared/run/weights/step-1', version: 'policy-step-1' }); // reports it already: no reload
    expect(a.syncs).toHaveLength(1);

    const stale = await serve({ stale: true });
    await expect(new RemoteRollouts({ endpoints: [stale.url], ...fast }).pushWeights({ path: '/w/step-2', version: 'policy-step-2' })).rejects.toMatchObject({
      code: 'GRPO_REMOTE_UNAVAILABLE',
      message: `${stale.url} answered success to ${stale.url}/update_weights_from_disk but /get_model_info reports weight_version "initial", not "policy-step-2": it would keep sampling another policy`,
    });
    await expect(new RemoteRollouts({ endpoints: [a.url], timeoutMs: 1000 }).pushWeights({ path: '/w', version: 'v' }))
      .rejects.toMatchObject({ code: 'GRPO_UNSUPPORTED', message: expect.stringContaining('docs.vllm.ai/en/latest/training/weight_transfer') });
    await expect(remote.pushWeights({ path: '', version: 'v' })).rejects.toThrow(/pushWeights path: expected a non-empty string/);
  });

  it('a push meeting an endpoint that is down gives it up (it never serves a stale version later); without fail-over it fails', async () => {
    const up = await serve(), down = await serve();
    await down.close();
    const remote = new RemoteRollouts({ endpoints: [down.url, up.url], ...fast });
    await remote.pushWeights({ path: '/w/step-1', version: 'policy-step-1' });
    expect(up.weightVersion).toBe('policy-step-1');
    expect(remote.endpointStats()[0].down).toMatch(new RegExp(`^${down.url} stayed down for reporting its weight version: connection failed \\(ECONNREFUSED\\)`));
    await remote.generate(1, prompts(3));
    expect(remote.endpointStats()[0].requests).toBe(0);
    await expect(new RemoteRollouts({ endpoints: [down.url, up.url], ...fast, failover: false }).pushWeights({ path: '/w/step-2', version: 'policy-step-2' }))
      .rejects.toMatchObject({ code: 'GRPO_REMOTE_UNAVAILABLE', message: expect.stringContaining(`${down.url} stayed down`) });
  });
});
