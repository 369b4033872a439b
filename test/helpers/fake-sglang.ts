// A loopback server speaking the subset of SGLang's native API the remote backend uses (lib/rollout/sglang.ts and
// sglang-sync.ts): POST /generate (input_ids as a batch of copies, one sampling_params each, return_logprob; answers a
// list of { output_ids, meta_info: { finish_reason, output_token_logprobs } }), POST /load_lora_adapter and
// /unload_lora_adapter (answering { success, loaded_adapters }), POST /update_weights_from_disk and GET /get_model_info
// (weight_version). Its candidates are a function of the prompt, the copy and max_new_tokens (`expectedCandidate`).
// `plan` may fail a /generate attempt (a status, a hang, a JSON answer of its own); `dieAfter` closes the server once it
// has received that many /generate requests (later ones and those in flight see a reset or refused connection).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type GenerateBody = Record<string, unknown> & { input_ids: number[][]; sampling_params: Record<string, unknown>[]; lora_path?: string[] };
export type GeneratePlan = (body: GenerateBody, attempt: number) => { status?: number; hang?: boolean; json?: unknown } | undefined;

export interface SglangBehaviour {
  plan?: GeneratePlan;
  dieAfter?: number;
  /** Answer success to loads and weight updates without applying them. */
  stale?: boolean;
  /** Refuse adapter loads (success: false, HTTP 400), as a server started without --enable-lora. */
  refuse?: boolean;
  delayMs?: number;
}

export interface FakeSglang {
  url: string;
  generates: GenerateBody[];
  /** Request bodies of the adapter and weight routes, with their path. */
  syncs: { path: string; body: unknown }[];
  loaded: Map<string, string>;
  readonly weightVersion: string;
  close(): Promise<void>;
}

/** Candidate `copy` of a prompt: its tokens, log-probs and whether it is truncated at `maxTokens`. */
export function expectedCandidate(prompt: number[], copy: number, maxTokens: number) {
  const sum = prompt.reduce((a, b) => a + b, 0), length = 1 + ((sum + copy) % maxTokens);
  return {
    tokens: Array.from({ length }, (_, k) => (sum + 13 * copy + k) % 97),
    logp: Array.from({ length }, (_, k) => Math.fround(-(k + 1) / 10 - copy / 100)),
    truncated: length === maxTokens,
  };
}

export function generateAnswer(body: GenerateBody) {
  return body.input_ids.map((ids, copy) => {
    const e = expectedCandidate(ids, copy, body.sampling_params[copy].max_new_tokens as number);
    return {
      text: '', output_ids: e.tokens,
      meta_info: {
        id: `req-${copy}`, prompt_tokens: ids.length, completion_tokens: e.tokens.length,
        finish_reason: e.truncated ? { type: 'length', length: e.tokens.length } : { type: 'stop', matched: 0 },
        output_token_logprobs: e.tokens.map((t, k) => [e.logp[k], t, null]),
      },
    };
  });
}

type Answer = { status?: number; json?: unknown; hang?: boolean };

function sync(state: FakeSglang & { version: string }, path: string, body: Record<string, unknown>, b: SglangBehaviour): Answer {
  state.syncs.push({ path, body });
  const loaded = () => Object.fromEntries(state.loaded);
  const name = String(body.lora_name);
  if (path === '/load_lora_adapter') {
    if (b.refuse) return { status: 400, json: { success: false, error_message: 'LoRA is not enabled (start with --enable-lora)' } };
    if (state.loaded.has(name)) return { status: 400, json: { success: false, error_message: `LoRA adapter ${name} already loaded` } };
    if (!b.stale) state.loaded.set(name, String(body.lora_path));
    return { json: { success: true, error_message: null, loaded_adapters: loaded() } };
  }
  if (path === '/unload_lora_adapter') {
    if (!state.loaded.delete(name)) return { status: 400, json: { success: false, error_message: `LoRA adapter ${name} is not loaded` } };
    return { json: { success: true, error_message: null, loaded_adapters: loaded() } };
  }
  if (path === '/update_weights_from_disk') {
    if (!b.stale) state.version = String(body.weight_version);
    return { json: { success: true, message: 'Succeeded to update model weights.', num_paused_requests: 0 } };
  }
  return { status: 404, json: { detail: 'Not Found' } };
}

/** A fake SGLang server on a free port of 127.0.0.1. */
export async function fakeSglang(b: SglangBehaviour = {}): Promise<FakeSglang> {
  const attempts = new Map<string, number>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let text = '';
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      const body = text ? JSON.parse(text) : {};
      let answer: Answer;
      if (req.url === '/get_model_info') answer = { json: { model_path: 'base', is_generation: true, weight_version: state.version } };
      else if (req.url !== '/generate') answer = sync(state, req.url ?? '', body, b);
      else {
        state.generates.push(body);
        const key = JSON.stringify(body.input_ids[0]), attempt = (attempts.get(key) ?? 0) + 1;
        attempts.set(key, attempt);
        const planned = b.plan?.(body, attempt) ?? {};
        answer = { ...planned, json: planned.status ? { error: `injected ${planned.status}` } : planned.json ?? generateAnswer(body) };
        if (b.dieAfter !== undefined && state.generates.length >= b.dieAfter) return void state.close();
      }
      if (answer.hang) return;
      setTimeout(() => res.writeHead(answer.status ?? 200, { 'content-type': 'application/json' }).end(JSON.stringify(answer.json)), b.delayMs ?? 10);
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  let closed: Promise<void> | undefined;
  const state = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, generates: [] as GenerateBody[], syncs: [] as { path: string; body: unknown }[],
    loaded: new Map<string, string>(), version: 'initial',
    get weightVersion() {
      return state.version;
    },
    close: () => (closed ??= new Promise<void>((done) => {
      server.close(() => done());
      server.closeAllConnections();
    })),
  };
  return state;
}
