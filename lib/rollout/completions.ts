// One /v1/completions request of the OpenAI-compatible protocol as vLLM serves it
// (https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html, "Completions API" and "Extra Parameters"):
// the prompt as a list of token ids, `n` candidates, `logprobs` (the sampled token's log-prob in
// choices[i].logprobs.token_logprobs), `return_token_ids` (choices[i].token_ids: the completion's ids, so nothing
// is re-tokenized), max_tokens, temperature / top_p / top_k / min_p, stop, stop_token_ids and a per-request seed.
// Log-prob semantics: vLLM reports them before temperature, penalties and top-k/top-p/min-p unless started with
// `--logprobs-mode processed_logprobs` (vLLM's sampler, https://docs.vllm.ai/en/v0.20.0/api/vllm/v1/sample/sampler/:
// raw_logprobs are computed from the logits before any processing); docs/scale-out.md says which to use.
import { GrpoError } from '../errors.js';
import type { RemoteSampling } from './options.js';
import { isLogProb, isTokenId, type RemoteChoice } from './wire.js';

/** The JSON body of a request for `prompt`'s candidates. */
export function completionBody(prompt: ArrayLike<number>, s: RemoteSampling, model: string, seed: number | null): Record<string, unknown> {
  return {
    ...(model ? { model } : {}),
    prompt: Array.from(prompt),
    n: s.n,
    max_tokens: s.maxTokens,
    temperature: s.temperature,
    top_p: s.topP,
    ...(s.topK > 0 ? { top_k: s.topK } : {}),
    ...(s.minP > 0 ? { min_p: s.minP } : {}),
    ...(s.stop.length ? { stop: s.stop } : {}),
    ...(s.stopTokenIds.length ? { stop_token_ids: s.stopTokenIds } : {}),
    ...(seed === null ? {} : { seed }),
    logprobs: 1,
    return_token_ids: true,
    stream: false,
  };
}

type Json = Record<string, unknown>;

const isIds = (v: unknown): v is number[] => Array.isArray(v) && v.every(isTokenId);
const isLogps = (v: unknown): v is number[] => Array.isArray(v) && v.every(isLogProb);

/** The `n` candidates of a parsed response, by choice index; a malformed one is GRPO_DATA_FORMAT naming `endpoint`. */
export function parseCompletion(json: unknown, n: number, endpoint: string): RemoteChoice[] {
  const bad = (what: string) => new GrpoError('GRPO_DATA_FORMAT', `${endpoint}/v1/completions: ${what}`);
  const choices = (json as Json | null)?.choices;
  if (!Array.isArray(choices)) throw bad('the response has no "choices" array');
  if (choices.length !== n) throw bad(`expected ${n} choices but received ${choices.length}`);
  const out: (RemoteChoice | undefined)[] = new Array(n);
  for (const c of choices as Json[]) {
    const index = c?.index;
    if (!Number.isInteger(index) || (index as number) < 0 || (index as number) >= n) throw bad(`choice index ${JSON.stringify(index)} is not in [0, ${n})`);
    if (out[index as number]) throw bad(`choice index ${index} appears twice`);
    const ids = c.token_ids, logps = (c.logprobs as Json | null | undefined)?.token_logprobs;
    if (!isIds(ids)) throw bad(`choice ${index} has no "token_ids" list (vLLM returns it for return_token_ids: true, from v0.10.2)`);
    if (!isLogps(logps) || logps.length !== ids.length) {
      throw bad(`choice ${index} needs "logprobs.token_logprobs": ${ids.length} finite log-probs <= 0, one per token`);
    }
    out[index as number] = { tokens: Int32Array.from(ids), logp: Float32Array.from(logps), truncated: c.finish_reason === 'length' };
  }
  return out as RemoteChoice[];
}
