// One POST /generate request of SGLang's native API for a prompt's n candidates
// (https://docs.sglang.io/basic_usage/sampling_params.html, "/generate Endpoint" and "Sampling parameters";
// https://docs.sglang.io/basic_usage/native_api.html, "Generate"). The prompt's token ids go in `input_ids`, repeated n
// times as one batch rather than sent once with sampling_params.n, which the sampling-parameters page discourages
// ("repeating the same prompts several times offers better control and efficiency"); copy c is candidate c, with its
// own `sampling_params`: max_new_tokens, temperature, top_p, top_k, min_p, stop, stop_token_ids and `sampling_seed`
// (the request's seed + c; SGLang's per-request seed, https://docs.sglang.io/advanced_features/deterministic_inference.html,
// "Deterministic Inference with Non-Greedy Sampling"). SGLang fills fields left out from the model's
// generation_config.json (--sampling-defaults model, its default), so every sampling field is sent, those that are off
// as their off values (top_k -1, min_p 0). `return_logprob: true` asks for meta_info.output_token_logprobs, one
// [logprob, token id, text] triple per completion token: the tokens and their log-probs at once, nothing re-tokenized.
// meta_info.finish_reason.type is "length" (truncated), "stop", or "abort" (the server dropped the request, e.g. for a
// weight update: retried). A call naming an adapter other than the base model sends it as `lora_path`, the name given
// to /load_lora_adapter (https://docs.sglang.io/advanced_features/lora.html).
import { GrpoError } from '../errors.js';
import { Retryable } from './http.js';
import type { RemoteSampling } from './options.js';
import { isLogProb, isTokenId, type RemoteChoice, type RequestTarget } from './wire.js';

/** The sampling_params of every copy; candidate c's seed is `seed` + c. */
function samplingParams(s: RemoteSampling, seed: number | null, candidate: number): Record<string, unknown> {
  return {
    max_new_tokens: s.maxTokens,
    temperature: s.temperature,
    top_p: s.topP,
    top_k: s.topK > 0 ? s.topK : -1,
    min_p: s.minP,
    ...(s.stop.length ? { stop: s.stop } : {}),
    ...(s.stopTokenIds.length ? { stop_token_ids: s.stopTokenIds } : {}),
    ...(seed === null ? {} : { sampling_seed: (seed + candidate) & 0x7fffffff }),
  };
}

/** The JSON body of a /generate request for `prompt`'s s.n candidates. */
export function generateBody(prompt: ArrayLike<number>, s: RemoteSampling, target: RequestTarget, seed: number | null): Record<string, unknown> {
  const ids = Array.from(prompt), copies = Array.from({ length: s.n }, (_, c) => c);
  const adapter = target.model !== '' && target.model !== target.base ? target.model : null;
  return {
    input_ids: copies.map(() => ids),
    sampling_params: copies.map((c) => samplingParams(s, seed, c)),
    return_logprob: true,
    ...(adapter === null ? {} : { lora_path: copies.map(() => adapter) }),
    stream: false,
  };
}

type Json = Record<string, unknown>;

const isTriple = (t: unknown): t is [number, number, unknown] => Array.isArray(t) && t.length >= 2 && isLogProb(t[0]) && isTokenId(t[1]);

/** Candidate `c` of an answer. */
function candidate(answer: unknown, c: number, bad: (what: string) => GrpoError): RemoteChoice {
  const meta = (answer as Json | null)?.meta_info as Json | null | undefined;
  const finish = meta?.finish_reason as Json | null | undefined;
  if (finish?.type === 'abort') throw new Retryable(`candidate ${c} aborted by the server (${JSON.stringify(finish.message ?? null)})`);
  if (finish?.type !== 'length' && finish?.type !== 'stop') {
    throw bad(`answer ${c} has no meta_info.finish_reason of type "stop" or "length" (received ${JSON.stringify(finish ?? null)})`);
  }
  const list = meta!.output_token_logprobs;
  const triples = Array.isArray(list) ? Array.from(list) : null; // holes become undefined, which the check refuses
  if (triples === null || !triples.every(isTriple)) {
    throw bad(`answer ${c} needs meta_info.output_token_logprobs: one [logprob <= 0, token id, text] per completion token (SGLang returns it for return_logprob: true)`);
  }
  return { tokens: Int32Array.from(triples, (t) => t[1]), logp: Float32Array.from(triples, (t) => t[0]), truncated: finish.type === 'length' };
}

/** The n candidates of a /generate answer (a list, one entry per copy of the prompt, in order). */
export function parseGenerate(json: unknown, n: number, endpoint: string): RemoteChoice[] {
  const bad = (what: string) => new GrpoError('GRPO_DATA_FORMAT', `${endpoint}/generate: ${what}`);
  if (!Array.isArray(json)) throw bad(`expected a list of ${n} answers, one per copy of the prompt, but received ${JSON.stringify(json)?.slice(0, 80)}`);
  if (json.length !== n) throw bad(`expected ${n} answers but received ${json.length}`);
  return Array.from(json, (answer, c) => candidate(answer, c, bad));
}
