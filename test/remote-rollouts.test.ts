// The remote rollout backend against fake OpenAI-compatible servers on loopback (node:http): every (step, prompt,
// candidate) arrives exactly once with the server's tokens and log-probs while the servers answer 503, hang past the
// timeout or refuse connections; in-flight requests per endpoint stay within the bound; the request carries vLLM's
// fields; an endpoint that stays down, a refused request and a malformed answer end in typed errors naming it; a LoRA
// adapter pushed to fake vLLM servers is checked in their /v1/models, and a server that does not serve it is an error.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { RemoteRollouts, requestSeed } from '../lib/rollout/remote.js';

type Body = Record<string, unknown> & { prompt: number[]; n: number; max_tokens: number; seed?: number };
/** What the fake server does with attempt `attempt` (1-based) of a prompt: answer, fail with a status, hang, or answer `json`. */
type Plan = (body: Body, attempt: number) => { status?: number; hang?: boolean; json?: unknown } | undefined;

interface Fake {
  url: string;
  bodies: Body[];
  attempts: Map<string, number>;
  readonly peak: number;
  close(): Promise<void>;
}

const servers: Fake[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** The candidates the fake server returns for a prompt: a function of the prompt, the candidate and the token index. */
function expected(prompt: number[], candidate: number, maxTokens: number) {
  const sum = prompt.reduce((a, b) => a + b, 0), length = 1 + ((sum + candidate) % maxTokens);
  return {
    tokens: Array.from({ length }, (_, k) => (sum + 13 * candidate + k) % 97),
    logp: Array.from({ length }, (_, k) => Math.fround(-(k + 1) / 10 - candidate / 100)),
    truncated: length === maxTokens,
  };
}

function answer(body: Body) {
  return {
    id: 'cmpl-fake', object: 'text_completion', model: body.model ?? 'fake',
    choices: Array.from({ length: body.n }, (_, c) => {
      const e = expected(body.prompt, c, body.max_tokens);
      return { index: c, text: '', token_ids: e.tokens, logprobs: { token_logprobs: e.logp, tokens: e.tokens.map(String) }, finish_reason: e.truncated ? 'length' : 'stop' };
    }),
  };
}

async function fake(plan: Plan = () => undefined, delayMs = 15): Promise<Fake> {
  let inFlight = 0;
  const state = { bodies: [] as Body[], attempts: new Map<string, number>(), peak: 0 };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let text = '';
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      const body = JSON.parse(text) as Body;
      state.bodies.push(body);
      const key = JSON.stringify(body.prompt), attempt = (state.attempts.get(key) ?? 0) + 1;
      state.attempts.set(key, attempt);
      const action = plan(body, attempt) ?? {};
      if (action.hang) return; // never answered: the client's timeout aborts it (not counted in flight here)
      inFlight++;
      state.peak = Math.max(state.peak, inFlight);
      setTimeout(() => {
        inFlight--;
        res.writeHead(action.status ?? 200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(action.status ? { error: `injected ${action.status}` } : action.json ?? answer(body)));
      }, delayMs);
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const fakeState: Fake = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies: state.bodies, attempts: state.attempts,
    get peak() {
      return state.peak;
    },
    close: () => new Promise<void>((done) => {
      server.closeAllConnections();
      server.close(() => done());
    }),
  };
  servers.push(fakeState);
  return fakeState;
}

const prompts = (count: number) => Array.from({ length: count }, (_, p) => Int32Array.from([p + 1, 2 * p + 3, 5]));
// Timeouts long enough that an answered request never times out on a loaded 2-core machine; only the hangs do.
const fast = { timeoutMs: 1500, retries: 3, backoffMs: 5 };

describe('remote rollouts', () => {
  it('every (step, prompt, candidate) arrives once through 503s and timeouts, within the in-flight bound of each endpoint', async () => {
    const flaky: Plan = (body, attempt) => (attempt > 1 ? undefined : body.prompt[0] % 3 === 0 ? { status: 503 } : body.prompt[0] % 3 === 1 ? { hang: true } : undefined);
    const a = await fake(flaky), b = await fake(flaky);
    const heard: string[] = [];
    const onRetry = (r: { endpoint: string; step: number; prompt: number; attempt: number; reason: string }) => heard.push(`${r.step}/${r.prompt}/${r.attempt}: ${r.reason}`);
    const remote = new RemoteRollouts({ endpoints: [a.url, b.url], maxInFlight: 2, ...fast, onRetry });
    const list = prompts(12);
    const rollouts = await remote.generate(7, list, { n: 3, maxTokens: 5, seed: 11 });
    expect(rollouts).toHaveLength(36);
    expect(new Set(rollouts.map((r) => `${r.step}/${r.prompt}/${r.candidate}`)).size).toBe(36);
    rollouts.forEach((r, i) => {
      expect([r.step, r.prompt, r.candidate]).toEqual([7, Math.floor(i / 3), i % 3]);
      const e = expected(Array.from(list[r.prompt]), r.candidate, 5);
      expect([Array.from(r.tokens), Array.from(r.logp), r.truncated]).toEqual([e.tokens, e.logp, e.truncated]);
    });
    // both servers worked, never above 2 requests at once each (the client's count includes the hung ones); 8 of the
    // 12 prompts failed once and were retried
    expect(a.bodies.length).toBeGreaterThan(0);
    expect(b.bodies.length).toBeGreaterThan(0);
    expect(Math.max(a.peak, b.peak)).toBeLessThanOrEqual(2);
    const stats = remote.endpointStats();
    expect(stats.map((s) => s.peakInFlight)).toEqual([2, 2]);
    expect(stats.reduce((sum, s) => sum + s.retries, 0)).toBe(8);
    expect(stats.reduce((sum, s) => sum + s.requests, 0)).toBe(20);
    // prompt p starts with token p + 1: 503 where that is a multiple of 3, a hang where it is 1 more
    expect(heard.sort()).toEqual([2, 5, 8, 11].map((p) => `7/${p}/1: HTTP 503 {"error":"injected 503"}`)
      .concat([0, 3, 6, 9].map((p) => `7/${p}/1: no answer within 1500 ms`)).sort());
  });

  it('sends vLLM\'s completion fields; a retried request carries the same seed', async () => {
    const server = await fake((_, attempt) => (attempt === 1 ? { status: 502 } : undefined));
    const remote = new RemoteRollouts({ endpoints: [`${server.url}/`], model: 'policy-step-3', ...fast });
    await remote.generate(3, [Int32Array.from([4, 5, 6])], {
      n: 2, maxTokens: 8, temperature: 0.7, topP: 0.9, topK: 20, minP: 0.05, stop: ['\n\n'], stopTokenIds: [0], seed: 42,
    });
    expect(server.bodies).toHaveLength(2);
    expect(server.bodies[0]).toEqual({
      model: 'policy-step-3', prompt: [4, 5, 6], n: 2, max_tokens: 8, temperature: 0.7, top_p: 0.9, top_k: 20, min_p: 0.05, stop: ['\n\n'],
      stop_token_ids: [0], seed: requestSeed(42, 3, 0), logprobs: 1, return_token_ids: true, stream: false,
    });
    expect(server.bodies[1]).toEqual(server.bodies[0]);
    expect(requestSeed(42, 3, 0)).not.toBe(requestSeed(42, 4, 0));
    expect(requestSeed(42, 3, 0)).not.toBe(requestSeed(42, 3, 1));
    await remote.generate(0, [Int32Array.from([1])]);
    expect(Object.keys(server.bodies[2]).sort()).toEqual(['logprobs', 'max_tokens', 'model', 'n', 'prompt', 'return_token_ids', 'stream', 'temperature', 'top_p']);
  });

  it('without fail-over an endpoint that stays down ends the call with GRPO_REMOTE_UNAVAILABLE naming it', async () => {
    const good = await fake(), down = await fake(() => ({ status: 500 }));
    const remote = new RemoteRollouts({ endpoints: [good.url, down.url], maxInFlight: 1, ...fast, failover: false });
    const error = await remote.generate(1, prompts(6), { n: 2 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'GRPO_REMOTE_UNAVAILABLE' });
    expect((error as Error).message).toContain(`${down.url} stayed down`);
    expect((error as Error).message).toMatch(/HTTP 500 .* on 4 attempts \(retries: 3\)/);
    expect(Math.max(...down.attempts.values())).toBe(4);

    const hanging = await fake(() => ({ hang: true }));
    await expect(new RemoteRollouts({ endpoints: [hanging.url], ...fast, retries: 1 }).generate(0, prompts(1)))
      .rejects.toThrow(new RegExp(`${hanging.url} stayed down .*no answer within 1500 ms on 2 attempts`));

    const closed = await fake();
    await closed.close();
    await expect(new RemoteRollouts({ endpoints: [closed.url], ...fast, retries: 0 }).generate(0, prompts(1)))
      .rejects.toThrow(new RegExp(`${closed.url} stayed down .*connection failed \\(ECONNREFUSED\\) on 1 attempt `));
  });

  it('a refused request is not retried; a malformed answer is GRPO_DATA_FORMAT naming the endpoint', async () => {
    const refusing = await fake(() => ({ status: 400 }));
    await expect(new RemoteRollouts({ endpoints: [refusing.url], ...fast }).generate(0, prompts(1)))
      .rejects.toMatchObject({ code: 'GRPO_INVALID_ARGUMENT', message: expect.stringMatching(/refused the request: HTTP 400 .*injected 400/) });
    expect(refusing.bodies).toHaveLength(1);

    const noIds = (body: Body) => ({ json: { choices: answer(body).choices.map(({ token_ids: _, ...c }) => c) } });
    const twice = (body: Body) => ({ json: { choices: answer(body).choices.map((c) => ({ ...c, index: 0 })) } });
    const short = (body: Body) => ({ json: { choices: answer(body).choices.slice(1) } });
    const cases: [Plan, RegExp][] = [
      [noIds, /choice 0 has no "token_ids" list/], [twice, /choice index 0 appears twice/], [short, /expected 2 choices but received 1/],
      [() => ({ json: { nope: 1 } }), /no "choices" array/],
    ];
    for (const [plan, message] of cases) {
      const server = await fake(plan);
      const error = await new RemoteRollouts({ endpoints: [server.url], ...fast }).generate(0, prompts(1), { n: 2 }).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'GRPO_DATA_FORMAT' });
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).toContain(`${server.url}/v1/completions`);
    }
  });

  it('checks its options and prompts', async () => {
    expect(() => new RemoteRollouts({})).toThrow(/RemoteRollouts endpoints to be a non-empty array of server URLs/);
    expect(() => new RemoteRollouts({ endpoints: ['ftp://host'] })).toThrow(/endpoints\[0\] to be an http or https URL/);
    expect(() => new RemoteRollouts({ endpoints: ['not a url'] })).toThrow(/endpoints\[0\] to be a URL/);
    expect(() => new RemoteRollouts({ endpoints: ['http://h'], maxInflight: 2 } as object as { endpoints: string[] })).toThrow(expect.objectContaining({ code: 'GRPO_UNKNOWN_OPTION' }));
    const remote = new RemoteRollouts({ endpoints: ['http://127.0.0.1:9'] });
    await expect(remote.generate(0, [[]])).rejects.toThrow(/prompts\[0\]: expected a non-empty list of token ids/);
    await expect(remote.generate(-1, [[1]])).rejects.toThrow(/step: expected an integer >= 0/);
    await expect(remote.generate(0, [[1]], { topP: 0 })).rejects.toThrow(/topP/);
  });
});

/** A fake vLLM with runtime LoRA loading: load/unload (plain-text answers), /v1/models, and completions recording "model". */
async function loraServer(behaviour: { refuse?: boolean; failFirstLoad?: boolean; stale?: boolean } = {}) {
  const served = new Set(['base']), models: unknown[] = [], loads: unknown[] = [];
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      const body = text ? JSON.parse(text) : undefined;
      if (req.url === '/v1/models') return void res.writeHead(200).end(JSON.stringify({ object: 'list', data: [...served].map((id) => ({ id, object: 'model' })) }));
      if (req.url === '/v1/load_lora_adapter') {
        loads.push(body);
        if (behaviour.refuse) return void res.writeHead(400).end('{"message":"runtime LoRA updating is disabled"}');
        if (behaviour.failFirstLoad && loads.length === 1) return void res.writeHead(503).end('busy');
        if (!behaviour.stale) served.add(body.lora_name);
        return void res.writeHead(200).end(`Success: LoRA adapter '${body.lora_name}' added successfully.`);
      }
      if (req.url === '/v1/unload_lora_adapter') {
        served.delete(body.lora_name);
        return void res.writeHead(200).end(`Success: LoRA adapter '${body.lora_name}' removed successfully.`);
      }
      models.push(body.model);
      res.writeHead(200).end(JSON.stringify(answer(body)));
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  servers.push({ url, bodies: [], attempts: new Map(), peak: 0, close: () => new Promise<void>((done) => server.close(() => done())) });
  return { url, served, models, loads };
}

describe('adapter push (vLLM runtime LoRA loading)', () => {
  it('loads the step\'s adapter on every server, checks /v1/models, unloads the previous one; generate then names it', async () => {
    const a = await loraServer(), b = await loraServer({ failFirstLoad: true });
    const remote = new RemoteRollouts({ endpoints: [a.url, b.url], model: 'base', ...fast });
    await remote.pushAdapter({ name: 'policy-step-1', path: '/shared/run/step-1/policy' });
    await remote.pushAdapter({ name: 'policy-step-2', path: '/shared/run/step-2/policy', unload: 'policy-step-1' });
    for (const s of [a, b]) expect([...s.served].sort()).toEqual(['base', 'policy-step-2']);
    expect(a.loads).toEqual([{ lora_name: 'policy-step-1', lora_path: '/shared/run/step-1/policy' }, { lora_name: 'policy-step-2', lora_path: '/shared/run/step-2/policy' }]);
    expect(b.loads).toHaveLength(3); // the 503 retried
    await remote.generate(2, prompts(4), { model: 'policy-step-2' });
    await remote.generate(3, prompts(2));
    expect([...a.models, ...b.models].sort()).toEqual([...Array(4).fill('policy-step-2'), 'base', 'base'].sort());
  });

  it('a server that answers but does not serve the adapter, or refuses runtime loading, is an error naming it', async () => {
    const good = await loraServer(), stale = await loraServer({ stale: true }), refusing = await loraServer({ refuse: true });
    const push = { name: 'policy-step-5', path: '/shared/p' };
    await expect(new RemoteRollouts({ endpoints: [good.url, stale.url], ...fast }).pushAdapter(push)).rejects.toMatchObject({
      code: 'GRPO_REMOTE_UNAVAILABLE', message: expect.stringContaining(`${stale.url} accepted adapter "policy-step-5" but /v1/models does not list it (it lists ["base"])`),
    });
    await expect(new RemoteRollouts({ endpoints: [refusing.url], ...fast }).pushAdapter(push)).rejects.toMatchObject({
      code: 'GRPO_INVALID_ARGUMENT', message: expect.stringMatching(/load_lora_adapter refused the request: HTTP 400 .*runtime LoRA updating is disabled/),
    });
    expect(refusing.loads).toHaveLength(1);
    await expect(new RemoteRollouts({ endpoints: [good.url], ...fast }).pushAdapter({ name: '', path: '/p' })).rejects.toThrow(/pushAdapter name: expected a non-empty string/);
  });
});
