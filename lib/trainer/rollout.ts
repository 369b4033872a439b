// Rollouts: G prompts → S sampled completions each, as token ids, text and the padded [B, T] layout
// the advantage and loss kernels read (B = G·S, T = the longest completion).
import { GrpoError } from '../errors.js';
import type { Policy } from '../policy/policy.js';
import type { Tokenizer } from '../policy/tokenizer.js';
import type { GenerationConfig, TrainerConfig } from './config.js';

export interface Rollout {
  groups: number;
  candidates: number;
  /** promptIds [B]: the prompt of row b = g·S + s */
  promptIds: Int32Array[];
  /** completions [B] */
  completions: Int32Array[];
  /** texts [B] (special tokens skipped) */
  texts: string[];
  /** truncated [B]: 1 where the completion hit the cap before a stop token */
  truncated: Uint8Array;
  /** T, the longest completion */
  width: number;
  /** mask [B, T]: 1 on completion tokens */
  mask: Uint8Array;
}

/** The policy's tokenizer, or a typed error (the recipes read and write text). */
export function tokenizerOf(policy: Policy): Tokenizer {
  if (!policy.tokenizer) throw new GrpoError('GRPO_INVALID_ARGUMENT', 'The trainer needs a policy with a tokenizer (the recipes score text)');
  return policy.tokenizer;
}

/** Prompt text → ids, with the tokenizer's BOS in front when it has one. */
export function encodePrompt(tokenizer: Tokenizer, text: string): Int32Array {
  const ids = tokenizer.encode(text).ids;
  // A chat template that writes {{ bos_token }} already put it there (transformers encodes such text without specials).
  if (tokenizer.bosTokenId === undefined || ids[0] === tokenizer.bosTokenId) return ids;
  const out = new Int32Array(ids.length + 1);
  out[0] = tokenizer.bosTokenId;
  out.set(ids, 1);
  return out;
}

/** mask [B, T] of rows of the given lengths. */
export function rowMask(lengths: readonly number[], width: number): Uint8Array {
  const mask = new Uint8Array(lengths.length * width);
  lengths.forEach((n, b) => mask.fill(1, b * width, b * width + n));
  return mask;
}

/** Per-row arrays laid into one zero-padded [B, T] array. */
export function padRows<T extends Float32Array | Int32Array>(rows: readonly ArrayLike<number>[], width: number, make: (n: number) => T, fill = 0): T {
  const out = make(rows.length * width);
  if (fill !== 0) out.fill(fill);
  rows.forEach((row, b) => out.set(row, b * width));
  return out;
}

/** [B, T] → one array per row, cut to the row's length. */
export function unpadRows(values: Float32Array, lengths: readonly number[], width: number): Float32Array[] {
  return lengths.map((n, b) => values.slice(b * width, b * width + n));
}

/**
 * Samples S completions of each prompt with a seed that depends only on (run seed, step), so a resumed
 * run draws exactly what an uninterrupted one draws.
 */
export async function generateRollout(
  policy: Policy, prompts: readonly string[], candidates: number, generation: GenerationConfig, seed: number,
): Promise<Rollout> {
  const tokenizer = tokenizerOf(policy);
  const encoded = prompts.map((p) => encodePrompt(tokenizer, p));
  const promptIds = encoded.flatMap((ids) => Array.from({ length: candidates }, () => ids));
  const out = await policy.generate(promptIds, { ...generation, seed });
  const completions = out.map((g) => g.tokens);
  const width = Math.max(1, ...completions.map((c) => c.length));
  return {
    groups: prompts.length,
    candidates,
    promptIds,
    completions,
    texts: out.map((g) => g.text ?? tokenizer.decode(g.tokens, { skipSpecialTokens: true })),
    truncated: Uint8Array.from(out, (g) => (g.truncated ? 1 : 0)),
    width,
    mask: rowMask(completions.map((c) => c.length), width),
  };
}

/** Greedy completions of each prompt (evaluation): evalMaxNewTokens (0 = generation.maxNewTokens), generation.maxRows per call. */
export async function greedyCompletions(policy: Policy, prompts: readonly string[], config: TrainerConfig): Promise<{ texts: string[]; tokens: number[] }> {
  const tokenizer = tokenizerOf(policy);
  const maxNewTokens = config.evalMaxNewTokens || config.generation.maxNewTokens;
  const out = await policy.generate(prompts.map((p) => encodePrompt(tokenizer, p)), { maxNewTokens, temperature: 0, maxRows: config.generation.maxRows });
  return { texts: out.map((g) => g.text ?? tokenizer.decode(g.tokens, { skipSpecialTokens: true })), tokens: out.map((g) => g.tokens.length) };
}
