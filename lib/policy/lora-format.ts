// LoRA adapters in PEFT's format, so that peft.PeftModel.from_pretrained reads what this writes and the other way
// round: a folder with adapter_config.json (LoraConfig's fields: peft/src/peft/tuners/lora/config.py lines 613-660,
// PeftConfig's: peft/src/peft/config.py lines 365-371) and adapter_model.safetensors (peft/src/peft/utils/constants.py
// lines 400-401). PEFT names each tensor by its module path in PeftModelForCausalLM with the adapter name removed
// (get_peft_model_state_dict, peft/src/peft/utils/save_and_load.py lines 106-109):
// `base_model.model.model.layers.{i}.self_attn.q_proj.lora_A.weight` [r, in] and `….lora_B.weight` [out, r]
// (nn.Linear(in, r) and nn.Linear(r, out): peft/src/peft/tuners/lora/layer.py lines 263-264).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { GrpoError } from '../errors.js';
import { LORA_OPTIONS, LORA_TARGET_MODULES, type LoraSettings, type LoraTargetModule } from '../options/lora.js';
import { checkOptions, defaultsOf, type Naming } from '../options/schema.js';
import { readUserJson, requireFolder } from '../user-files.js';
import { writeFolderAtomically } from './checkpoint.js';
import type { ModelConfig } from './config.js';
import { readSafetensors, writeJsonFile, writeSafetensors, type NamedTensor, type WeightDtype } from './safetensors.js';

export const ADAPTER_CONFIG_FILE = 'adapter_config.json';
export const ADAPTER_WEIGHTS_FILE = 'adapter_model.safetensors';
/** PeftModelForCausalLM → LoraModel → the transformers model: the path PEFT puts before the base's own names. */
const PEFT_PREFIX = 'base_model.model.';

/** An adapter: its settings, the base it was trained on, and its tensors. */
export interface LoraAdapter {
  settings: LoraSettings;
  /** adapter_config.json "base_model_name_or_path": a Hub name or a local folder. @defaultValue null */
  baseModel?: string | null;
  /**
   * A [rank, in] and B [out, rank] of every target module of every layer, named as the base's weight with
   * `lora_A` / `lora_B` for `weight` (`model.layers.0.self_attn.q_proj.lora_A.weight`): {@link loraTensorShapes}.
   */
  tensors: NamedTensor[];
}

const MLP_MODULES: readonly LoraTargetModule[] = ['gate_proj', 'up_proj', 'down_proj'];

/** The base weight a module's adapter updates: `model.layers.{layer}.self_attn.q_proj` (no `.weight`). */
export function moduleName(layer: number, module: LoraTargetModule): string {
  const block = MLP_MODULES.includes(module) ? 'mlp' : 'self_attn';
  return `model.layers.${layer}.${block}.${module}`;
}

/** [out, in] of a target module's weight in a model of `config`. */
export function moduleShape(config: ModelConfig, module: LoraTargetModule): [number, number] {
  const q = config.numHeads * config.headDim, kv = config.numKvHeads * config.headDim, h = config.hiddenSize, m = config.intermediateSize;
  const shapes: Record<LoraTargetModule, [number, number]> = {
    q_proj: [q, h], k_proj: [kv, h], v_proj: [kv, h], o_proj: [h, q], gate_proj: [m, h], up_proj: [m, h], down_proj: [h, m],
  };
  return shapes[module];
}

/** One target module's pair of tensors: their names. */
export interface LoraPair {
  layer: number;
  module: LoraTargetModule;
  /** the base weight's name: `model.layers.0.self_attn.q_proj.weight` */
  weight: string;
  a: string;
  b: string;
}

/** Every (layer, target module) pair of an adapter on `layers` layers, in layer order then LORA_TARGET_MODULES order. */
export function loraPairs(layers: number, targetModules: readonly LoraTargetModule[]): LoraPair[] {
  const pairs: LoraPair[] = [];
  for (let layer = 0; layer < layers; layer++) {
    for (const module of LORA_TARGET_MODULES.filter((m) => targetModules.includes(m))) {
      const base = moduleName(layer, module);
      pairs.push({ layer, module, weight: `${base}.weight`, a: `${base}.lora_A.weight`, b: `${base}.lora_B.weight` });
    }
  }
  return pairs;
}

/** Names and shapes of an adapter's tensors on a model of `config` (A then B of each pair). */
export function loraTensorShapes(config: ModelConfig, settings: Pick<LoraSettings, 'rank' | 'targetModules'>): { name: string; shape: number[] }[] {
  return loraPairs(config.numLayers, settings.targetModules).flatMap((p) => {
    const [out, inner] = moduleShape(config, p.module);
    return [{ name: p.a, shape: [settings.rank, inner] }, { name: p.b, shape: [out, settings.rank] }];
  });
}

/** adapter_config.json as PEFT writes it for a LoRA adapter of a causal LM (PeftModel.save_pretrained sets inference_mode). */
export function adapterConfigJson(settings: LoraSettings, baseModel: string | null): Record<string, unknown> {
  return {
    peft_type: 'LORA', task_type: 'CAUSAL_LM', base_model_name_or_path: baseModel, revision: null, inference_mode: true,
    r: settings.rank, lora_alpha: settings.alpha, lora_dropout: settings.dropout, target_modules: [...settings.targetModules],
    use_rslora: settings.rslora, bias: 'none', fan_in_fan_out: false, use_dora: false, lora_bias: false, modules_to_save: null,
    init_lora_weights: true, layers_to_transform: null, layers_pattern: null, rank_pattern: {}, alpha_pattern: {}, exclude_modules: null,
  };
}

/** Writes `dir` (atomically): adapter_config.json and adapter_model.safetensors with PEFT's tensor names, stored as `dtype`. */
export function saveAdapter(dir: string, adapter: LoraAdapter, dtype: WeightDtype = 'F32'): Promise<void> {
  return writeFolderAtomically(dir, (temp) => writeAdapterFiles(temp, adapter, dtype, dir));
}

/** {@link saveAdapter}'s two files written into the existing folder `dir` (checked first; errors name `where`). */
export async function writeAdapterFiles(dir: string, adapter: LoraAdapter, dtype: WeightDtype = 'F32', where = dir): Promise<void> {
  const settings = checkOptions(LORA_OPTIONS, ADAPTER_NAMING, adapter.settings, defaultsOf(LORA_OPTIONS));
  checkTensors(where, settings, adapter.tensors);
  await writeJsonFile(join(dir, ADAPTER_CONFIG_FILE), adapterConfigJson(settings, adapter.baseModel ?? null));
  const named = adapter.tensors.map((t) => ({ ...t, name: PEFT_PREFIX + t.name }));
  await writeSafetensors(join(dir, ADAPTER_WEIGHTS_FILE), named, { format: 'pt' }, dtype);
}

const ADAPTER_NAMING: Naming = { field: (path) => `lora ${path}`, object: (path) => (path ? `lora ${path}` : 'lora') };

/** Our option name → the adapter_config.json field it is read from. */
const PEFT_FIELDS: Record<keyof LoraSettings, string> = { rank: 'r', alpha: 'lora_alpha', dropout: 'lora_dropout', targetModules: 'target_modules', rslora: 'use_rslora' };

/** PEFT features the merge and the built-in model do not implement: the field and the values that are fine. */
const PLAIN_VALUES: Record<string, readonly unknown[]> = {
  bias: ['none'], fan_in_fan_out: [false, null], use_dora: [false, null], lora_bias: [false, null], use_qalora: [false, null],
  modules_to_save: [null], layers_to_transform: [null], layer_replication: [null], target_parameters: [null], exclude_modules: [null],
  // peft 0.21's LoRA variants and extras that change what the adapted model computes (aLoRA, Arrow routing, KaSA,
  // MonteCLoRA, BD-LoRA, trainable embedding tokens)
  alora_invocation_tokens: [null], arrow_config: [null], kasa_config: [null], monteclora_config: [null], use_bdlora: [null], trainable_token_indices: [null],
};

const isEmpty = (v: unknown) => v == null || (Array.isArray(v) ? v.length === 0 : typeof v === 'object' && Object.keys(v as object).length === 0);

/** GRPO_UNSUPPORTED naming the first field of `j` that asks for a PEFT feature not implemented here. */
function rejectUnsupported(j: Record<string, unknown>, path: string): void {
  const unsupported = (what: string) => new GrpoError('GRPO_UNSUPPORTED', `${path}: ${what}`);
  if (j.peft_type !== 'LORA') throw unsupported(`peft_type ${JSON.stringify(j.peft_type)} is not supported (LORA only)`);
  for (const [key, fine] of Object.entries(PLAIN_VALUES)) {
    const value = j[key];
    if (value !== undefined && !fine.includes(value) && !(fine.includes(null) && isEmpty(value))) throw unsupported(`${key} = ${JSON.stringify(value)} is not supported`);
  }
  for (const key of ['rank_pattern', 'alpha_pattern']) if (!isEmpty(j[key])) throw unsupported(`${key} ${JSON.stringify(j[key])} is not supported (one r and lora_alpha for every module)`);
  const targets = j.target_modules;
  const unknown = Array.isArray(targets) ? targets.find((m) => !(LORA_TARGET_MODULES as readonly unknown[]).includes(m)) : undefined;
  if (unknown !== undefined) throw unsupported(`target module ${JSON.stringify(unknown)} is not supported; expected some of ${LORA_TARGET_MODULES.join(', ')}`);
}

/**
 * Reads a parsed adapter_config.json into settings (`layers()`: the base's decoder layers, asked for when target_modules
 * is a pattern); PEFT features not implemented here are GRPO_UNSUPPORTED naming the field.
 */
export function adapterSettingsFromJson(json: unknown, path: string, layers: () => number): { settings: LoraSettings; baseModel: string | null } {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw new GrpoError('GRPO_DATA_FORMAT', `${path}: expected a JSON object`);
  const j = json as Record<string, unknown>;
  rejectUnsupported(j, path);
  // "all-linear" on a Llama/Qwen decoder is every linear layer but lm_head: the seven
  const t = j.target_modules;
  const targets = t === 'all-linear' ? [...LORA_TARGET_MODULES] : typeof t === 'string' ? modulesOfPattern(t, layers(), path) : t;
  const given = { rank: j.r, alpha: j.lora_alpha, dropout: j.lora_dropout ?? 0, targetModules: targets, rslora: j.use_rslora ?? false };
  const naming: Naming = {
    field: (p) => `${path} "${p.replace(/^\w+/, (key) => PEFT_FIELDS[key as keyof LoraSettings] ?? key)}"`,
    object: () => path,
  };
  const settings = checkOptions(LORA_OPTIONS, naming, given, {});
  for (const key of ['rank', 'alpha', 'targetModules'] as const) {
    if (settings[key] === undefined) throw new GrpoError('GRPO_DATA_FORMAT', `${path}: field "${PEFT_FIELDS[key]}" is missing`);
  }
  const base = j.base_model_name_or_path;
  return { settings, baseModel: typeof base === 'string' && base !== '' ? base : null };
}

/** The modules of a Llama/Qwen-family causal LM (transformers' names) besides the seven, that a pattern must not pick. */
function otherModules(layers: number): string[] {
  const perLayer = ['', '.self_attn', '.self_attn.q_norm', '.self_attn.k_norm', '.mlp', '.mlp.act_fn', '.input_layernorm', '.post_attention_layernorm'];
  const inLayers = Array.from({ length: layers }, (_, i) => perLayer.map((m) => `model.layers.${i}${m}`)).flat();
  return ['model', 'model.embed_tokens', 'model.layers', ...inLayers, 'model.norm', 'model.rotary_emb', 'lm_head'];
}

/**
 * The target modules a `target_modules` string picks: PEFT full-matches it against every module name of the base
 * (`re.fullmatch(config.target_modules, key)` in check_target_module_exists, peft/src/peft/tuners/tuners_utils.py),
 * so it has to pick each of the seven on every layer or on none, and nothing else.
 */
function modulesOfPattern(pattern: string, layers: number, path: string): LoraTargetModule[] {
  const field = `${path} "target_modules" ${JSON.stringify(pattern)}`;
  let regex: RegExp;
  try {
    regex = new RegExp(`^(?:${pattern})$`, 'u');
  } catch (error) {
    throw new GrpoError('GRPO_UNSUPPORTED', `${field} is not a regular expression this reads (${(error as Error).message})`);
  }
  const other = otherModules(layers).find((name) => regex.test(name));
  if (other !== undefined) throw new GrpoError('GRPO_UNSUPPORTED', `${field} picks module "${other}"; only ${LORA_TARGET_MODULES.join(', ')} can have adapters`);
  const modules = LORA_TARGET_MODULES.filter((module) => {
    const picked = Array.from({ length: layers }, (_, i) => i).filter((layer) => regex.test(moduleName(layer, module)));
    if (picked.length > 0 && picked.length < layers) {
      throw new GrpoError('GRPO_UNSUPPORTED', `${field} picks ${module} on layers ${picked.join(', ')} of 0..${layers - 1}; adapters go on every layer or on none`);
    }
    return picked.length > 0;
  });
  if (modules.length === 0) throw new GrpoError('GRPO_DATA_FORMAT', `${field} picks no module of the base (e.g. "${moduleName(0, 'q_proj')}")`);
  return modules;
}

/** What an adapter folder holds, for the error when it is missing or unreadable. */
const ADAPTER_FOLDER = `a LoRA adapter folder in PEFT's format (${ADAPTER_CONFIG_FILE} and ${ADAPTER_WEIGHTS_FILE})`;

/**
 * Reads an adapter folder. Its tensors are checked against its own settings (every pair present, ranks equal to r,
 * nothing else); with the base's `config`, their shapes too.
 */
export async function loadAdapter(dir: string, config?: ModelConfig): Promise<LoraAdapter> {
  requireFolder(dir, ADAPTER_FOLDER);
  const configPath = join(dir, ADAPTER_CONFIG_FILE);
  const json = await readUserJson(configPath, `the settings of ${ADAPTER_FOLDER}`);
  const weightsPath = join(dir, ADAPTER_WEIGHTS_FILE);
  if (!existsSync(weightsPath) && existsSync(join(dir, 'adapter_model.bin'))) {
    throw new GrpoError('GRPO_UNSUPPORTED', `${dir}: adapter_model.bin (pickled PyTorch) is not read; save the adapter with safe_serialization=True`);
  }
  const tensors = (await readSafetensors(weightsPath)).map((t) => {
    if (!t.name.startsWith(PEFT_PREFIX)) throw new GrpoError('GRPO_DATA_FORMAT', `${weightsPath}: tensor "${t.name}" does not start with "${PEFT_PREFIX}" (PEFT's names for a causal LM)`);
    return { ...t, name: t.name.slice(PEFT_PREFIX.length) };
  });
  const { settings, baseModel } = adapterSettingsFromJson(json, configPath, () => config?.numLayers ?? layersOf(weightsPath, tensors));
  checkTensors(weightsPath, settings, tensors, config);
  return { settings, baseModel, tensors };
}

const PAIR_NAME = /^model\.layers\.(\d+)\.(self_attn|mlp)\.(\w+)\.lora_(A|B)\.weight$/;

/** The number of layers the tensors cover (one more than the highest layer index named). */
function layersOf(where: string, tensors: readonly NamedTensor[]): number {
  let layers = 0;
  for (const t of tensors) {
    const match = PAIR_NAME.exec(t.name);
    if (!match) throw new GrpoError('GRPO_DATA_FORMAT', `${where}: tensor "${t.name}" is not a LoRA A or B weight of a decoder layer's linear module`);
    layers = Math.max(layers, Number(match[1]) + 1);
  }
  return layers;
}

/**
 * Checks an adapter's tensors: exactly one A and one B per (layer, target module), A [r, in] and B [out, r]; with
 * `config` each in / out is the base's, without it each module's in / out must be layer 0's.
 */
function checkTensors(where: string, settings: LoraSettings, tensors: readonly NamedTensor[], config?: ModelConfig): void {
  const byName = new Map(tensors.map((t) => [t.name, t]));
  if (byName.size !== tensors.length) throw new GrpoError('GRPO_DATA_FORMAT', `${where}: a tensor name appears twice`);
  const layers = config?.numLayers ?? layersOf(where, tensors);
  /** `q_proj A` → in features, `q_proj B` → out features */
  const features = new Map<string, number>();
  if (config) {
    for (const module of settings.targetModules) {
      const [out, inner] = moduleShape(config, module);
      features.set(`${module} A`, inner).set(`${module} B`, out);
    }
  }
  const check = (name: string, module: LoraTargetModule, layer: number, side: 'A' | 'B') => {
    const t = byName.get(name);
    if (!t) throw new GrpoError('GRPO_DATA_FORMAT', `${where}: tensor "${name}" is missing (target module ${module}, layer ${layer})`);
    if (t.shape.length !== 2) throw new GrpoError('GRPO_SHAPE_MISMATCH', `${where}: tensor "${name}" has shape [${t.shape}]; expected a matrix`);
    const [rank, feature] = side === 'A' ? t.shape : [t.shape[1], t.shape[0]];
    if (rank !== settings.rank) {
      throw new GrpoError('GRPO_SHAPE_MISMATCH', `${where}: tensor "${name}" has shape [${t.shape}], rank ${rank}, but the adapter's r is ${settings.rank}`);
    }
    const key = `${module} ${side}`, needed = features.get(key) ?? feature;
    if (feature !== needed) {
      const shape = side === 'A' ? [settings.rank, needed] : [needed, settings.rank];
      throw new GrpoError('GRPO_SHAPE_MISMATCH', `${where}: tensor "${name}" has shape [${t.shape}] but ${config ? 'the base model needs' : 'layer 0 has'} [${shape}]`);
    }
    features.set(key, needed);
    byName.delete(name);
  };
  for (const pair of loraPairs(layers, settings.targetModules)) {
    check(pair.a, pair.module, pair.layer, 'A');
    check(pair.b, pair.module, pair.layer, 'B');
  }
  const extra = byName.keys().next();
  if (!extra.done) throw new GrpoError('GRPO_DATA_FORMAT', `${where}: tensor "${extra.value}" belongs to no target module (${settings.targetModules.join(', ')}) of layers 0..${layers - 1}`);
}
