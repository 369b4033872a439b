// Options of the remote rollout backend (remote.ts): where the inference servers are, which protocol they speak and
// how hard to try them (REMOTE_OPTIONS), and what each rollout call samples (REMOTE_SAMPLING_OPTIONS, the fields of
// vLLM's /v1/completions request: https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html, "Completions
// API" and its "Extra Parameters" top_k, min_p, stop_token_ids, return_token_ids; sglang.ts maps them onto SGLang's
// sampling_params).
import { GrpoError } from '../errors.js';
import { describe, integer, string } from '../validate.js';
import * as opt from '../options/schema.js';

/** A non-empty list of http(s) base URLs (`http://host:8000`, the part before /v1). */
export function endpointList(doc: string): opt.Field<string[]> {
  return {
    type: 'array of http(s) URLs', doc, default: undefined, required: true,
    read: (v, path, n) => {
      if (!Array.isArray(v) || v.length === 0) {
        throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${n.field(path)} to be a non-empty array of server URLs but received ${describe(v)}`);
      }
      return v.map((u, i) => {
        const text = string(n.field(`${path}[${i}]`), u);
        let url: URL;
        try {
          url = new URL(text);
        } catch {
          throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${n.field(`${path}[${i}]`)} to be a URL like http://host:8000 but received ${JSON.stringify(text)}`);
        }
        if (url.protocol !== 'http:' && url.protocol !== 'https:') {
          throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${n.field(`${path}[${i}]`)} to be an http or https URL but received ${JSON.stringify(text)}`);
        }
        return text.replace(/\/+$/, '');
      });
    },
  };
}

/** A list of strings (stop strings). */
function strings(doc: string): opt.Field<string[]> {
  return {
    type: 'array of strings', doc, default: [],
    read: (v, path, n) => {
      if (!Array.isArray(v)) throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${n.field(path)} to be an array of strings but received ${describe(v)}`);
      return v.map((s, i) => string(n.field(`${path}[${i}]`), s));
    },
  };
}

/** A list of token ids >= 0. */
function tokenIds(doc: string): opt.Field<number[]> {
  return {
    type: 'array of integers >= 0', doc, default: [],
    read: (v, path, n) => {
      if (!Array.isArray(v)) throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${n.field(path)} to be an array of token ids but received ${describe(v)}`);
      return v.map((id, i) => integer(n.field(`${path}[${i}]`), id, 0));
    },
  };
}

export const REMOTE_OPTIONS = {
  endpoints: endpointList('The servers\' base URLs (vLLM, SGLang or llama.cpp\'s server), all speaking `protocol`.'),
  protocol: opt.choice(['vllm', 'sglang'] as const, 'vllm', '`"vllm"`: POST /v1/completions (vLLM\'s OpenAI-compatible server, or one speaking its subset); '
    + '`"sglang"`: SGLang\'s native POST /generate with input_ids, and its adapter and weight reload endpoints.'),
  model: opt.string('', 'vLLM: the "model" field of each request (the served model, or a loaded adapter\'s name; empty: left out). '
    + 'SGLang: the base model\'s name; a call naming another model samples that loaded adapter (`lora_path`).'),
  failover: opt.boolean(true, 'An endpoint that stays down (its retries spent) is given up for the rest of the run: its prompts go to the '
    + 'endpoints still up, and it gets no more requests or pushes; GRPO_REMOTE_UNAVAILABLE once every endpoint is down. false: the first one down ends the call.'),
  maxInFlight: opt.integer(4, 'Requests in flight per endpoint at most (each request is one prompt with n candidates).', 1),
  timeoutMs: opt.integer(120_000, 'A request that has not answered after this long is aborted and retried.', 1),
  retries: opt.integer(3, 'Retries of a request after a timeout, a connection error or a 5xx or 429 answer; then GRPO_REMOTE_UNAVAILABLE.', 0),
  backoffMs: opt.integer(250, 'Wait before the first retry; doubled before each further one.', 0),
  onRetry: opt.callback<(retry: RetryInfo) => void>(() => undefined, '(retry: RetryInfo) => void',
    'Called before each retry with the endpoint, the rollout (step, prompt), the attempt that failed (1-based) and why.', 'none'),
};

/** What {@link REMOTE_OPTIONS} onRetry hears. */
export interface RetryInfo {
  endpoint: string;
  step: number;
  prompt: number;
  attempt: number;
  reason: string;
}

export const REMOTE_SAMPLING_OPTIONS = {
  model: opt.string('', 'The "model" field for this call (e.g. the adapter pushed for this step); empty: the backend\'s `model`.'),
  n: opt.integer(1, 'Candidates per prompt (the group size).', 1),
  maxTokens: opt.integer(256, 'max_tokens: completion tokens at most.', 1),
  temperature: opt.number(1, 'temperature (0: greedy).'),
  topP: opt.number(1, 'top_p (1: off).', opt.UNIT_OPEN_CLOSED),
  topK: opt.integer(0, 'top_k (0: off, not sent).', 0),
  minP: opt.number(0, 'min_p (0: off, not sent).', opt.UNIT),
  stop: strings('stop: strings that end a completion (not included in it).'),
  stopTokenIds: tokenIds('stop_token_ids: token ids that end a completion (beside the model\'s EOS).'),
  seed: opt.nullable(opt.integer(0, 'seed: each request gets a hash of (seed, step, prompt), so a retry samples the same candidates.', 0)),
};

export type RemoteOptions = opt.OptionsOf<typeof REMOTE_OPTIONS>;
export type RemoteSettings = opt.ValuesOf<typeof REMOTE_OPTIONS>;
export type RemoteSamplingOptions = opt.OptionsOf<typeof REMOTE_SAMPLING_OPTIONS>;
export type RemoteSampling = opt.ValuesOf<typeof REMOTE_SAMPLING_OPTIONS>;
