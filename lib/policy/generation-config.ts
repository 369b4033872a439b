// generation_config.json of a Hugging Face folder: the defaults it gives generate(), as transformers 4.57.6 reads
// it (generation/configuration_utils.py 344-398: do_sample false, temperature 1, top_k 50, top_p 1, min_p none,
// repetition_penalty 1, eos_token_id one id or a list; generation/utils.py 1142 and 1262-1279: the repetition
// penalty always applies, temperature / top-k / top-p / min-p only when sampling).
import { GrpoError } from '../errors.js';
import type { GenerateOptions } from './options.js';

/** The generate options a generation_config.json sets when the caller leaves them out. */
export type GenerationDefaults = Pick<GenerateOptions, 'stopTokens' | 'temperature' | 'topK' | 'topP' | 'minP' | 'repetitionPenalty'>;

type Json = Record<string, unknown>;

function badField(key: string, expected: string, value: unknown): GrpoError {
  return new GrpoError('GRPO_DATA_FORMAT', `generation_config.json: expected "${key}" to be ${expected} but received ${JSON.stringify(value)}`);
}

function number(json: Json, key: string, fallback: number): number {
  const value = json[key] ?? fallback;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw badField(key, 'a number', value);
  return value;
}

/** eos_token_id: one id or a list of them (Llama-3 Instruct and Qwen list several). */
function eosIds(value: unknown): number[] | undefined {
  if (value == null) return undefined;
  const ids = Array.isArray(value) ? value : [value];
  if (!ids.every((id) => Number.isInteger(id) && id >= 0)) throw badField('eos_token_id', 'a token id or a list of them', value);
  return ids as number[];
}

/** Sampling settings: given only when do_sample is set (true: its warpers with transformers' defaults; false: greedy). */
function sampling(json: Json): GenerationDefaults {
  if (json.do_sample == null) return {};
  if (typeof json.do_sample !== 'boolean') throw badField('do_sample', 'a boolean', json.do_sample);
  if (!json.do_sample) return { temperature: 0 };
  const minP = json.min_p == null ? {} : { minP: number(json, 'min_p', 0) };
  return { temperature: number(json, 'temperature', 1), topK: number(json, 'top_k', 50), topP: number(json, 'top_p', 1), ...minP };
}

/** The generate defaults of a parsed generation_config.json ({} for none). */
export function generationDefaults(json: unknown): GenerationDefaults {
  if (json == null) return {};
  if (typeof json !== 'object' || Array.isArray(json)) throw new GrpoError('GRPO_DATA_FORMAT', 'generation_config.json: expected a JSON object');
  const j = json as Json;
  const stopTokens = eosIds(j.eos_token_id), penalty = number(j, 'repetition_penalty', 1);
  return { ...(stopTokens ? { stopTokens } : {}), ...sampling(j), ...(penalty === 1 ? {} : { repetitionPenalty: penalty }) };
}

/** `options` over `defaults`: an option the caller set (not undefined) wins. */
export function withGenerationDefaults(options: GenerateOptions, defaults: GenerationDefaults): GenerateOptions {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) return options; // generate's checks name the mistake
  const given = Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
  return { ...defaults, ...given };
}
