// A loopback inference server for trainer tests that speaks the subset of vLLM's OpenAI-compatible protocol the
// remote backend uses (lib/rollout/): POST /v1/completions (prompt token ids, n, max_tokens, temperature, top_p,
// top_k, seed; answers token_ids and logprobs.token_logprobs), GET /v1/models, POST /v1/load_lora_adapter and
// /v1/unload_lora_adapter. Its "engine" is the built-in policy: a completion request is sampled by the model it
// names (the base, or an adapter folder loaded from disk as vLLM would) and its log-probs are that model's scores of
// the sampled tokens, so they agree with the trainer's when the engine serves the trainer's current weights.
// Requests run one at a time. With `stopAfter`, the server closes itself after answering that many completions.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BuiltinPolicy } from '../../lib/policy/builtin.js';
import type { Policy } from '../../lib/policy/policy.js';

export interface CompletionLog {
  model: string;
  prompt: number[];
  n: number;
  seed: number;
  /** completion tokens served, summed over the n candidates */
  tokens: number;
}

export interface FakeEngine {
  url: string;
  completions: CompletionLog[];
  loads: string[];
  served(): string[];
  close(): Promise<void>;
}

type Body = Record<string, unknown>;

async function complete(models: Map<string, Policy>, body: Body, log: CompletionLog[]) {
  const name = String(body.model), policy = models.get(name);
  if (!policy) return { status: 404, json: { error: `model ${name} not served` } };
  const prompt = body.prompt as number[], n = body.n as number, temperature = body.temperature as number;
  const prompts = Array.from({ length: n }, () => Int32Array.from(prompt));
  const out = await policy.generate(prompts, {
    maxNewTokens: body.max_tokens as number, temperature, topP: body.top_p as number, topK: (body.top_k as number) ?? 0, seed: body.seed as number,
  });
  const scores = await policy.score({ prompts, completions: out.map((g) => g.tokens) }, { temperature });
  log.push({ model: name, prompt, n, seed: body.seed as number, tokens: out.reduce((a, g) => a + g.tokens.length, 0) });
  return {
    json: {
      choices: out.map((g, index) => ({
        index, token_ids: Array.from(g.tokens), logprobs: { token_logprobs: Array.from(scores.logp[index]) }, finish_reason: g.truncated ? 'length' : 'stop',
      })),
    },
  };
}

async function route(models: Map<string, Policy>, req: IncomingMessage, body: Body, engine: FakeEngine) {
  if (req.method === 'GET' && req.url === '/v1/models') return { json: { data: [...models.keys()].map((id) => ({ id })) } };
  if (req.url === '/v1/completions') return complete(models, body, engine.completions);
  if (req.url === '/v1/load_lora_adapter') {
    models.set(String(body.lora_name), await BuiltinPolicy.load(String(body.lora_path)));
    engine.loads.push(String(body.lora_name));
    return { text: `Success: LoRA adapter '${String(body.lora_name)}' added successfully.` };
  }
  if (req.url === '/v1/unload_lora_adapter') {
    models.get(String(body.lora_name))?.dispose();
    models.delete(String(body.lora_name));
    return { text: `Success: LoRA adapter '${String(body.lora_name)}' removed successfully.` };
  }
  return { status: 404, json: { error: `no route ${req.url}` } };
}

/** Serves `base` as model `name` on a free port of 127.0.0.1. */
export async function fakeEngine(base: Policy, name: string, options: { stopAfter?: number } = {}): Promise<FakeEngine> {
  const models = new Map<string, Policy>([[name, base]]);
  let queue = Promise.resolve();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let text = '';
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      queue = queue.then(async () => {
        const answer: { status?: number; json?: unknown; text?: string } = await route(models, req, text ? JSON.parse(text) : {}, engine)
          .catch((error: Error) => ({ status: 500, json: { error: error.message } }));
        res.writeHead(answer.status ?? 200, { 'content-type': answer.text === undefined ? 'application/json' : 'text/plain' });
        const stop = options.stopAfter !== undefined && engine.completions.length >= options.stopAfter;
        res.end(answer.text ?? JSON.stringify(answer.json), () => void (stop && engine.close()));
      });
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as AddressInfo).port;
  let closed: Promise<void> | undefined;
  const engine: FakeEngine = {
    url: `http://127.0.0.1:${port}`, completions: [], loads: [],
    served: () => [...models.keys()],
    close: () => (closed ??= new Promise<void>((done) => {
      server.close(() => done());
      server.closeAllConnections();
    })),
  };
  return engine;
}
