// Generation through the native model: prompt checks, one batched call with the KV cache, then
// decoding and stop strings (cut after the first match; native stopping covers stop tokens).
import { GrpoError } from '../errors.js';
import { callAsync } from '../kernels/native-call.js';
import { nativeSamplingParams } from '../kernels/sampling-params.js';
import * as check from '../validate.js';
import { checkOptions } from '../options/schema.js';
import type { ModelConfig } from './config.js';
import type { ModelBinding, ModelHandle, NativeSamplingParams } from '../binding/index.js';
import { GENERATE_DEFAULTS, GENERATE_OPTIONS, type GenerateOptions } from './options.js';
import type { Generation } from './policy.js';
import type { Tokenizer } from './tokenizer.js';

export { GENERATE_DEFAULTS } from './options.js';

/** The sampler's options of generate are given, not defaulted: the sampler fills its own defaults. */
const NO_DEFAULTS = {};

function promptIds(prompt: ArrayLike<number> | string, i: number, config: ModelConfig, tokenizer: Tokenizer | undefined): ArrayLike<number> {
  if (typeof prompt === 'string') {
    if (!tokenizer) throw new GrpoError('GRPO_INVALID_ARGUMENT', `prompts[${i}] is text but this policy has no tokenizer; pass token ids`);
    return tokenizer.encode(prompt).ids;
  }
  if (prompt.length === 0) throw new GrpoError('GRPO_SHAPE_MISMATCH', `Expected prompts[${i}] to hold at least one token but it is empty`);
  for (let t = 0; t < prompt.length; t++) {
    if (!Number.isInteger(prompt[t]) || prompt[t] < 0 || prompt[t] >= config.vocabSize) {
      throw new GrpoError('GRPO_INDEX_RANGE', `Expected prompts[${i}][${t}] to be a token id in [0, ${config.vocabSize}) but received ${prompt[t]}`);
    }
  }
  if (prompt.length >= config.maxPositions) {
    throw new GrpoError('GRPO_SHAPE_MISMATCH', `prompts[${i}] has ${prompt.length} tokens, leaving no room under max_position_embeddings = ${config.maxPositions}`);
  }
  return prompt;
}

function resolve(options: GenerateOptions, rows: number, config: ModelConfig, tokenizer: Tokenizer | undefined) {
  const { maxNewTokens, stopTokens, stopStrings, maxRows, ...sampler } = checkOptions(GENERATE_OPTIONS,
    { field: (path) => `generate ${path}`, object: () => 'generate options' }, options, NO_DEFAULTS);
  const stops = Int32Array.from(stopTokens ?? (tokenizer?.eosTokenId === undefined ? [] : [tokenizer.eosTokenId]));
  stops.forEach((id, i) => check.integer(`generate stopTokens[${i}]`, id, 0, config.vocabSize - 1));
  if ((stopStrings ?? []).length > 0 && !tokenizer) throw new GrpoError('GRPO_INVALID_ARGUMENT', 'generate stopStrings needs a policy with a tokenizer');
  return {
    maxNewTokens: maxNewTokens ?? GENERATE_DEFAULTS.maxNewTokens,
    stopTokens: stops,
    stopStrings: stopStrings ?? [],
    maxRows: maxRows || rows,
    sampling: nativeSamplingParams('generate', sampler, rows, config.vocabSize),
  };
}

/** Cuts a completion after the first stop string: the fewest tokens whose text contains it. */
function applyStopStrings(g: Generation, stops: readonly string[], tokenizer: Tokenizer): Generation {
  const text = g.text ?? '';
  let cut = -1;
  for (const s of stops) {
    const at = text.indexOf(s);
    if (at >= 0 && (cut < 0 || at + s.length < cut)) cut = at + s.length;
  }
  if (cut < 0) return g;
  let keep = 1;
  while (keep < g.tokens.length && tokenizer.decode(g.tokens.subarray(0, keep), { skipSpecialTokens: true }).length < cut) keep++;
  return { tokens: g.tokens.slice(0, keep), logp: g.logp.slice(0, keep), text: text.slice(0, cut), truncated: false };
}

/** The sampler settings of rows [r0, r1) of a batch, drawing as rows r0.. of the whole batch (generate has no history). */
function rowsOf(s: NativeSamplingParams, r0: number, r1: number, vocab: number): NativeSamplingParams {
  const rows = <T extends Float32Array | Int32Array | Uint32Array>(a: T | null, width = 1) => (a ? a.subarray(r0 * width, r1 * width) as T : null);
  return {
    ...s,
    temperature: rows(s.temperature), topK: rows(s.topK), topP: rows(s.topP), minP: rows(s.minP),
    repetitionPenalty: rows(s.repetitionPenalty), presencePenalty: rows(s.presencePenalty), frequencyPenalty: rows(s.frequencyPenalty),
    allow: rows(s.allow, Math.ceil(vocab / 32)),
    firstRow: s.firstRow + r0,
  };
}

/** Completions of `prompts` from the model `handle` of `addon` (the addon that created it). */
export async function generateWith(
  addon: ModelBinding, handle: ModelHandle, config: ModelConfig, tokenizer: Tokenizer | undefined, prompts: readonly (ArrayLike<number> | string)[],
  options: GenerateOptions,
): Promise<Generation[]> {
  if (!Array.isArray(prompts) || prompts.length === 0) throw new GrpoError('GRPO_SHAPE_MISMATCH', 'Expected a non-empty array of prompts');
  const ids = prompts.map((p, i) => promptIds(p, i, config, tokenizer));
  const o = resolve(options, ids.length, config, tokenizer);
  const offsets = new Float64Array(ids.length + 1);
  ids.forEach((p, i) => (offsets[i + 1] = offsets[i] + p.length));
  const packed = new Int32Array(offsets[ids.length]);
  ids.forEach((p, i) => packed.set(Array.from(p), offsets[i]));
  const n = ids.length, N = o.maxNewTokens;
  const tokens = new Int32Array(n * N), logp = new Float32Array(n * N), lengths = new Float64Array(n), truncated = new Uint8Array(n);
  for (let r0 = 0; r0 < n; r0 += o.maxRows) {
    const r1 = Math.min(n, r0 + o.maxRows);
    const chunkOffsets = offsets.slice(r0, r1 + 1).map((x) => x - offsets[r0]);
    const native = { maxNewTokens: N, stopTokens: o.stopTokens, sampling: rowsOf(o.sampling, r0, r1, config.vocabSize) };
    await callAsync((a) => addon.modelGenerate(handle, packed.subarray(offsets[r0], offsets[r1]), chunkOffsets, native,
      tokens.subarray(r0 * N, r1 * N), logp.subarray(r0 * N, r1 * N), lengths.subarray(r0, r1), truncated.subarray(r0, r1), a), () => undefined);
  }
  return ids.map((_, i) => {
    const g: Generation = {
      tokens: tokens.slice(i * N, i * N + lengths[i]),
      logp: logp.slice(i * N, i * N + lengths[i]),
      truncated: truncated[i] === 1,
    };
    if (tokenizer) g.text = tokenizer.decode(g.tokens, { skipSpecialTokens: true });
    return tokenizer && o.stopStrings.length > 0 ? applyStopStrings(g, o.stopStrings, tokenizer) : g;
  });
}
