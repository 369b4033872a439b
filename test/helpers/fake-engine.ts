// A loopback inference server for trainer tests that speaks the subset of vLLM's OpenAI-compatible protocol the
// remote backend uses (lib/rollout/): POST /v1/completions (prompt token ids, n, max_tokens, temperature, top_p,
// top_k, seed; answers token_ids and logprobs.token_logprobs), GET /v1/models, POST /v1/load_lora_adapter and
// /v1/unload_lora_adapter; and of SGLang's native API: POST /generate (input_ids as n copies of the prompt, sampled
// together with the first copy's sampling_seed; answers meta_info.output_token_logprobs), POST
// /update_weights_from_disk (the base model reloaded from the folder, under its weight_version), GET /get_model_info,
// and POST /load_lora_adapter and /unload_lora_adapter (answering the loaded adapters). Its "engine" is the built-in
// policy: a request is sampled by the model it names (the base, or an adapter folder loaded from disk as vLLM and
// SGLang would) and its log-probs are that model's scores of the sampled tokens, so they agree with the trainer's when
// the engine serves the trainer's current weights. Requests run one at a time.
// With `stopAfter`, the server closes itself after answering that many completions.
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
  /** Adapter names loaded, or weight versions reloaded from disk, in order. */
  loads: string[];
  served(): string[];
  close(): Promise<void>;
}

type Body = Record<string, unknown>;

interface Request {
  model: string;
  prompt: number[];
  n: number;
  maxNewTokens: number;
  temperature: number;
  topP: number;
  topK: number;
  seed: number;
}

/** Samples and scores a request's n candidates with the model it names; null when that model is not served. */
async function sample(models: Map<string, Policy>, r: Request, log: CompletionLog[]) {
  const policy = models.get(r.model);
  if (!policy) return null;
  const prompts = Array.from({ length: r.n }, () => Int32Array.from(r.prompt));
  const out = await policy.generate(prompts, { maxNewTokens: r.maxNewTokens, temperature: r.temperature, topP: r.topP, topK: r.topK, seed: r.seed });
  const scores = await policy.score({ prompts, completions: out.map((g) => g.tokens) }, { temperature: r.temperature });
  log.push({ model: r.model, prompt: r.prompt, n: r.n, seed: r.seed, tokens: out.reduce((a, g) => a + g.tokens.length, 0) });
  return out.map((g, i) => ({ tokens: Array.from(g.tokens), logp: Array.from(scores.logp[i]), truncated: g.truncated }));
}

async function complete(models: Map<string, Policy>, body: Body, log: CompletionLog[]) {
  const out = await sample(models, {
    model: String(body.model), prompt: body.prompt as number[], n: body.n as number, maxNewTokens: body.max_tokens as number,
    temperature: body.temperature as number, topP: body.top_p as number, topK: (body.top_k as number) ?? 0, seed: body.seed as number,
  }, log);
  if (!out) return { status: 404, json: { error: `model ${String(body.model)} not served` } };
  return {
    json: {
      choices: out.map((g, index) => ({ index, token_ids: g.tokens, logprobs: { token_logprobs: g.logp }, finish_reason: g.truncated ? 'length' : 'stop' })),
    },
  };
}

async function generate(models: Map<string, Policy>, base: string, body: Body, log: CompletionLog[]) {
  const ids = body.input_ids as number[][], params = (body.sampling_params as Record<string, number>[])[0];
  const model = (body.lora_path as string[] | undefined)?.[0] ?? base;
  const out = await sample(models, {
    model, prompt: ids[0], n: ids.length, maxNewTokens: params.max_new_tokens, temperature: params.temperature, topP: params.top_p,
    topK: params.top_k === -1 ? 0 : params.top_k, seed: params.sampling_seed,
  }, log);
  if (!out) return { status: 400, json: { error: `LoRA adapter ${model} not loaded` } };
  return {
    json: out.map((g) => ({
      output_ids: g.tokens,
      meta_info: { finish_reason: { type: g.truncated ? 'length' : 'stop' }, output_token_logprobs: g.tokens.map((t, k) => [g.logp[k], t, null]) },
    })),
  };
}

async function route(models: Map<string, Policy>, req: IncomingMessage, body: Body, engine: FakeEngine & { base: string; version: string }) {
  if (req.method === 'GET' && req.url === '/v1/models') return { json: { data: [...models.keys()].map((id) => ({ id })) } };
  if (req.url === '/v1/completions') return complete(models, body, engine.completions);
  if (req.url === '/generate') return generate(models, engine.base, body, engine.completions);
  if (req.url === '/get_model_info') return { json: { model_path: engine.base, weight_version: engine.version } };
  if (req.url === '/update_weights_from_disk') {
    models.get(engine.base)?.dispose();
    models.set(engine.base, await BuiltinPolicy.load(String(body.model_path)));
    engine.version = String(body.weight_version);
    engine.loads.push(engine.version);
    return { json: { success: true, message: 'Succeeded to update model weights.' } };
  }
  const name = String(body.lora_name);
  // SGLang answers with the adapters loaded after the call; vLLM with plain text
  const loaded = () => ({ json: { success: true, loaded_adapters: Object.fromEntries([...models.keys()].filter((m) => m !== engine.base).map((m) => [m, m])) } });
  if (req.url === '/v1/load_lora_adapter' || req.url === '/load_lora_adapter') {
    models.set(name, await BuiltinPolicy.load(String(body.lora_path)));
    engine.loads.push(name);
    return req.url === '/load_lora_adapter' ? loaded() : { text: `Success: LoRA adapter '${name}' added successfully.` };
  }
  if (req.url === '/v1/unload_lora_adapter' || req.url === '/unload_lora_adapter') {
    if (!models.has(name)) return { status: 400, json: { success: false, error_message: `LoRA adapter ${name} is not loaded` } };
    models.get(name)!.dispose();
    models.delete(name);
    return req.url === '/unload_lora_adapter' ? loaded() : { text: `Success: LoRA adapter '${name}' removed successfully.` };
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
  const engine = {
    url: `http://127.0.0.1:${port}`, completions: [] as CompletionLog[], loads: [] as string[], base: name, version: 'initial',
    served: () => [...models.keys()],
    close: () => (closed ??= new Promise<void>((done) => {
      server.close(() => done());
      server.closeAllConnections();
    })),
  };
  return engine;
}
