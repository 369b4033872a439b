// The shape every inference server's protocol takes for RemoteRollouts (remote.ts): how a prompt's request is written
// and its answer read (vLLM's /v1/completions: completions.ts; SGLang's /generate: sglang.ts), and how a new policy
// reaches a server and is checked there (vLLM: adapter-sync.ts; SGLang: sglang-sync.ts). protocols.ts names them.
import type { RemoteSampling } from './options.js';

/** One candidate as the server returned it. */
export interface RemoteChoice {
  tokens: Int32Array;
  /** The log-prob the server reports for each sampled token. */
  logp: Float32Array;
  /** The completion hit max_tokens (vLLM finish_reason "length", SGLang finish_reason.type "length"). */
  truncated: boolean;
}

/** Who samples a request: the call's model name and the backend's own (the base model, sampled until a push). */
export interface RequestTarget {
  model: string;
  base: string;
}

export interface SyncSettings {
  timeoutMs: number;
  retries: number;
  backoffMs: number;
}

export interface AdapterPush {
  /** The name requests will use as "model": carry the step in it (policy-step-12) so each version is distinct. */
  name: string;
  /** The adapter folder as the servers see it. */
  path: string;
  /** An adapter to unload once `name` is served (the previous step's). */
  unload?: string;
  /** The servers may serve `name` already (a resumed run pushing its version again). */
  again?: boolean;
}

export interface WeightsPush {
  /** A Hugging Face checkpoint folder (config.json, safetensors) as the servers see it. */
  path: string;
  /** The version label the servers must report afterwards: carry the step in it (policy-step-12). */
  version: string;
}

type Push<P> = (endpoint: string, push: P, s: SyncSettings, signal: AbortSignal) => Promise<void>;

export interface Protocol {
  /** The generate route after the endpoint's base URL. */
  path: string;
  /** The JSON body asking for `prompt`'s s.n candidates. */
  body(prompt: ArrayLike<number>, s: RemoteSampling, target: RequestTarget, seed: number | null): unknown;
  /** The n candidates of an answer, by candidate; a malformed one is GRPO_DATA_FORMAT naming `endpoint`. */
  parse(json: unknown, n: number, endpoint: string): RemoteChoice[];
  pushAdapter: Push<AdapterPush>;
  /** Full weights reloaded from a checkpoint folder; absent where the server documents no such endpoint. */
  pushWeights?: Push<WeightsPush>;
}

export const isTokenId = (x: unknown): x is number => Number.isInteger(x) && (x as number) >= 0;
export const isLogProb = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x) && x <= 0;
