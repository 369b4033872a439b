// RoPE scaling: the "rope_scaling" object of a Hugging Face config.json, read into a typed form, written
// back, and handed to the native model (native/model/rope.cc computes the frequencies, as transformers'
// modeling_rope_utils.py does). Types: linear, dynamic, yarn, llama3; "type" is the old spelling of "rope_type".
import type { NativeRopeScaling } from '../binding/index.js';
import { GrpoError } from '../errors.js';

/** Position interpolation: every frequency ÷ factor. */
export interface LinearRope { type: 'linear'; factor: number }
/**
 * Dynamic NTK: transformers raises the base only for a sequence longer than max_position_embeddings; the built-in
 * model never runs one (packing and generation stop there), so its frequencies are the plain ones.
 */
export interface DynamicRope { type: 'dynamic'; factor: number }
/** Llama 3.1: long wavelengths ÷ factor, short ones kept, a blend between. */
export interface Llama3Rope { type: 'llama3'; factor: number; lowFreqFactor: number; highFreqFactor: number; originalMaxPositions: number }
/** YaRN: NTK-by-parts frequencies and a cos/sin scale (attentionFactor, or one derived from factor and mscale). */
export interface YarnRope {
  type: 'yarn';
  factor: number;
  /** @defaultValue max_position_embeddings */
  originalMaxPositions: number;
  /** @defaultValue 32 */
  betaFast: number;
  /** @defaultValue 1 */
  betaSlow: number;
  mscale?: number;
  mscaleAllDim?: number;
  attentionFactor?: number;
  /** Floor/ceil the correction range. @defaultValue true */
  truncate: boolean;
}
export type RopeScaling = LinearRope | DynamicRope | Llama3Rope | YarnRope;

type Json = Record<string, unknown>;

/** The keys each type reads (transformers' validators), beside rope_type / type. */
const KEYS: Record<RopeScaling['type'], readonly string[]> = {
  linear: ['factor'],
  dynamic: ['factor'],
  llama3: ['factor', 'low_freq_factor', 'high_freq_factor', 'original_max_position_embeddings'],
  yarn: ['factor', 'original_max_position_embeddings', 'beta_fast', 'beta_slow', 'mscale', 'mscale_all_dim', 'attention_factor', 'truncate'],
};

const unsupported = (what: string) => new GrpoError('GRPO_UNSUPPORTED', `config.json: ${what}`);

function number(s: Json, key: string, required: boolean, min: number): number | undefined {
  const value = s[key];
  if (value == null && !required) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min) {
    throw new GrpoError('GRPO_DATA_FORMAT', `config.json: expected rope_scaling.${key} to be a number >= ${min} but received ${JSON.stringify(value)}`);
  }
  return value;
}

/** The typed rope_scaling, or undefined for none (absent, null, or rope_type "default"). */
export function ropeScalingFromHf(raw: unknown, maxPositions: number): RopeScaling | undefined {
  if (raw == null) return undefined;
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new GrpoError('GRPO_DATA_FORMAT', `config.json: expected rope_scaling to be an object or null but received ${JSON.stringify(raw)}`);
  const s = raw as Json;
  const type = s.rope_type ?? s.type;
  if (type === 'default') return undefined;
  if (typeof type !== 'string' || !Object.hasOwn(KEYS, type)) {
    throw unsupported(`rope_scaling.rope_type ${JSON.stringify(type)} is not supported; expected one of default, ${Object.keys(KEYS).join(', ')}`);
  }
  const t = type as RopeScaling['type'];
  const extra = Object.keys(s).find((key) => key !== 'rope_type' && key !== 'type' && !KEYS[t].includes(key));
  if (extra !== undefined) throw unsupported(`rope_scaling.${extra} is not supported with rope_type "${t}"`);
  const factor = number(s, 'factor', true, 1)!;
  if (t === 'linear' || t === 'dynamic') return { type: t, factor };
  if (t === 'llama3') {
    return {
      type: t, factor, lowFreqFactor: number(s, 'low_freq_factor', true, 0)!, highFreqFactor: number(s, 'high_freq_factor', true, 0)!,
      originalMaxPositions: number(s, 'original_max_position_embeddings', true, 1)!,
    };
  }
  if (s.truncate != null && typeof s.truncate !== 'boolean') {
    throw new GrpoError('GRPO_DATA_FORMAT', `config.json: expected rope_scaling.truncate to be a boolean but received ${JSON.stringify(s.truncate)}`);
  }
  const optional = (key: string) => number(s, key, false, 0);
  return {
    type: t, factor,
    // transformers 4.57 modeling_rope_utils.py 310-312 and 328-329: `x or default`, so 0 takes the default too
    originalMaxPositions: optional('original_max_position_embeddings') || maxPositions,
    betaFast: optional('beta_fast') || 32, betaSlow: optional('beta_slow') || 1,
    ...(optional('mscale') ? { mscale: optional('mscale') } : {}),
    ...(optional('mscale_all_dim') ? { mscaleAllDim: optional('mscale_all_dim') } : {}),
    ...(s.attention_factor != null ? { attentionFactor: number(s, 'attention_factor', true, Number.MIN_VALUE) } : {}),
    truncate: s.truncate !== false,
  };
}

/** The rope_scaling object a Hugging Face loader reads back into the same frequencies. */
export function ropeScalingToHf(r: RopeScaling): Json {
  switch (r.type) {
    case 'linear':
    case 'dynamic':
      return { rope_type: r.type, factor: r.factor };
    case 'llama3':
      return { rope_type: r.type, factor: r.factor, low_freq_factor: r.lowFreqFactor, high_freq_factor: r.highFreqFactor, original_max_position_embeddings: r.originalMaxPositions };
    case 'yarn':
      return {
        rope_type: r.type, factor: r.factor, original_max_position_embeddings: r.originalMaxPositions, beta_fast: r.betaFast, beta_slow: r.betaSlow,
        ...(r.mscale === undefined ? {} : { mscale: r.mscale }), ...(r.mscaleAllDim === undefined ? {} : { mscale_all_dim: r.mscaleAllDim }),
        ...(r.attentionFactor === undefined ? {} : { attention_factor: r.attentionFactor }), truncate: r.truncate,
      };
  }
}

/** The native form: every field present (those a type ignores are 0); dynamic runs as plain RoPE (see {@link DynamicRope}). */
export function ropeScalingToNative(r: RopeScaling | undefined): NativeRopeScaling {
  const none: NativeRopeScaling = {
    type: 'default', factor: 1, lowFreqFactor: 0, highFreqFactor: 0, originalMaxPositions: 0, betaFast: 0, betaSlow: 0,
    mscale: 0, mscaleAllDim: 0, attentionFactor: 0, truncate: true,
  };
  if (r === undefined || r.type === 'dynamic') return none;
  if (r.type === 'linear') return { ...none, type: 'linear', factor: r.factor };
  if (r.type === 'llama3') return { ...none, ...r };
  return { ...none, ...r, mscale: r.mscale ?? 0, mscaleAllDim: r.mscaleAllDim ?? 0, attentionFactor: r.attentionFactor ?? 0 };
}
