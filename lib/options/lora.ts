// LoRA adapters (lib/policy/lora-format.ts, lib/policy/lora-merge.ts), declared once. The defaults are what TRL's
// GRPO script gets with --use_peft (trl/trainer/model_config.py ModelConfig: lora_r 16, lora_alpha 32,
// lora_dropout 0.05, use_rslora false; lora_target_modules None, for which PEFT picks q_proj and v_proj on
// llama / mistral / qwen2 / qwen3: peft/src/peft/utils/constants.py lines 85, 95, 103-104).
import { GrpoError } from '../errors.js';
import { describe, oneOf } from '../validate.js';
import { boolean, defaultsOf, integer, nullable, number, POSITIVE, string, type Field, type Naming, type OptionsOf, type Range, type ValuesOf } from './schema.js';

/** The linear layers of a Llama/Qwen-family decoder layer an adapter may target (PEFT's module names). */
export const LORA_TARGET_MODULES = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] as const;
export type LoraTargetModule = (typeof LORA_TARGET_MODULES)[number];

const BELOW_ONE: Range = { ok: (v) => v >= 0 && v < 1, expectation: 'in [0, 1)' };

/** A non-empty list of distinct target modules (a command line's `q_proj,v_proj` is the list of its comma-separated names). */
function targetModules(def: LoraTargetModule[], doc: string): Field<LoraTargetModule[]> {
  return {
    type: `array of ${LORA_TARGET_MODULES.map((m) => `"${m}"`).join(' | ')}`, doc, default: def,
    read: (given, path, n) => {
      const v = typeof given === 'string' && given !== '' ? given.split(',').map((m) => m.trim()) : given;
      if (!Array.isArray(v) || v.length === 0) {
        throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${n.field(path)} to be a non-empty array of module names but received ${describe(given)}`);
      }
      const modules = v.map((m, i) => oneOf(n.field(`${path}[${i}]`), m, LORA_TARGET_MODULES));
      const twice = modules.find((m, i) => modules.indexOf(m) !== i);
      if (twice) throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${n.field(path)} to list each module once but "${twice}" appears twice`);
      return modules;
    },
  };
}

export const LORA_OPTIONS = {
  rank: integer(16, 'r: the inner dimension of each adapter (A [r, in], B [out, r]).', 1),
  alpha: number(32, 'lora_alpha: the update B·A is scaled by alpha / rank (alpha / √rank with `rslora`).', POSITIVE),
  dropout: number(0.05, 'lora_dropout: dropout on the adapter\'s input during training (not applied by merge or inference).', BELOW_ONE),
  targetModules: targetModules(['q_proj', 'v_proj'], 'The linear layers of every decoder layer that get an adapter.'),
  rslora: boolean(false, 'use_rslora: Rank-Stabilized LoRA, scaling alpha / √rank instead of alpha / rank.'),
};

/** What a caller writes: `lora: { rank: 16, targetModules: ['q_proj', 'v_proj'] }`. */
export type LoraOptions = OptionsOf<typeof LORA_OPTIONS>;
/** Every LoRA setting present. */
export type LoraSettings = ValuesOf<typeof LORA_OPTIONS>;

export const LORA_DEFAULTS = defaultsOf(LORA_OPTIONS);

/** The `lora` table of BuiltinPolicy.load and of the trainer: an adapter's settings, and the adapter folder to start from. */
export const LORA_START_OPTIONS = {
  ...LORA_OPTIONS,
  from: nullable(string('', 'A LoRA adapter folder in PEFT\'s format (adapter_config.json + adapter_model.safetensors, as PEFT or a LoRA run saves it) '
      + 'whose A and B the adapters start from, on the base being loaded: its r, lora_alpha, target_modules and use_rslora are the '
      + 'adapters\' (the fields beside `from` may only repeat them), its lora_dropout unless `dropout` is given; the AdamW moments '
      + 'start at zero. null = new adapters (A from the seed, B zero).')),
};

/** What a caller writes to load a policy with LoRA: `lora: { from: 'adapters/run-1' }` or `lora: { rank: 8 }`. */
export type LoraStartOptions = OptionsOf<typeof LORA_START_OPTIONS>;
export type LoraStartSettings = ValuesOf<typeof LORA_START_OPTIONS>;

/** The fields that fix what an adapter computes: given beside `from`, they must repeat the adapter's. */
const FIXED_BY_ADAPTER = ['rank', 'alpha', 'targetModules', 'rslora'] as const;

/**
 * The settings of adapters started from an adapter folder `where` of settings `adapter`: the `given` fields (checked
 * values, absent ones undefined) must repeat the adapter's (GRPO_INVALID_ARGUMENT named by `naming`); `dropout` replaces its.
 */
export function startFromAdapter(adapter: LoraSettings, given: Partial<LoraSettings>, naming: Naming, where: string): LoraSettings {
  for (const key of FIXED_BY_ADAPTER) {
    const value = given[key];
    if (value !== undefined && !sameLoraSettings(adapter, { ...adapter, [key]: value })) {
      throw new GrpoError('GRPO_INVALID_ARGUMENT', `${naming.field(key)} is ${JSON.stringify(value)} but the adapter ${where} has ${JSON.stringify(adapter[key])}; `
        + 'leave it out to take the adapter\'s');
    }
  }
  return { ...adapter, dropout: given.dropout ?? adapter.dropout };
}

/** Whether two settings describe the same adapters (target modules in any order). */
export function sameLoraSettings(a: LoraSettings, b: LoraSettings): boolean {
  const modules = (s: LoraSettings) => [...s.targetModules].sort().join();
  return a.rank === b.rank && a.alpha === b.alpha && a.dropout === b.dropout && a.rslora === b.rslora && modules(a) === modules(b);
}

/** The factor on B·A: alpha / r, or alpha / √r with rslora (peft/src/peft/tuners/lora/layer.py lines 278-281). */
export function loraScale(s: Pick<LoraSettings, 'rank' | 'alpha' | 'rslora'>): number {
  return s.rslora ? s.alpha / Math.sqrt(s.rank) : s.alpha / s.rank;
}
