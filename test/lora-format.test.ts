// LoRA options and PEFT's adapter format: defaults, validation naming the field, a bitwise round trip, PEFT's
// tensor names and adapter_config.json fields checked on the bytes of the files, reading what PEFT writes, typed errors.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GrpoError } from '../lib/errors.js';
import { LORA_DEFAULTS, LORA_OPTIONS, loraScale, type LoraSettings } from '../lib/options/lora.js';
import { checkOptions, kernelNaming } from '../lib/options/schema.js';
import type { ModelConfig } from '../lib/policy/config.js';
import { loadAdapter, loraTensorShapes, saveAdapter, type LoraAdapter } from '../lib/policy/lora-format.js';
import { fromFloat32, toFloat32, writeSafetensors } from '../lib/policy/safetensors.js';
import { randomNormal } from './helpers/random.js';

const tiny: ModelConfig = {
  vocabSize: 40, hiddenSize: 16, intermediateSize: 24, numLayers: 2, numHeads: 4, numKvHeads: 2, headDim: 4,
  maxPositions: 32, rmsNormEps: 1e-6, ropeTheta: 10000, tieEmbeddings: false, attentionBias: true, architecture: 'Qwen2ForCausalLM',
};
const scratch = () => mkdtempSync(join(tmpdir(), 'grpo-lora-'));
const settings = (over: Partial<LoraSettings> = {}): LoraSettings => ({ ...LORA_DEFAULTS, targetModules: ['q_proj', 'v_proj', 'down_proj'], rank: 3, ...over });

function randomAdapter(s: LoraSettings, seed = 1): LoraAdapter {
  return { settings: s, baseModel: 'Qwen/Qwen2.5-0.5B', tensors: loraTensorShapes(tiny, s).map((t, i) => ({ ...t, data: randomNormal(t.shape[0] * t.shape[1], 0.1, seed + i) })) };
}

/** The JSON header of a .safetensors file, read here without the library. */
function headerOf(path: string): Record<string, { dtype: string; shape: number[] }> {
  const bytes = readFileSync(path);
  const header = JSON.parse(bytes.subarray(8, 8 + Number(bytes.readBigUInt64LE(0))).toString('utf8'));
  delete header.__metadata__;
  return header;
}

/** Whether `stored` is a bf16 value (low 16 bits zero) no farther from `v` than either bf16 neighbour. */
function isNearestBf16(stored: number, v: number): boolean {
  const bits = new Uint32Array(new Float32Array([stored]).buffer)[0];
  const neighbour = (step: number) => new Float32Array(new Uint32Array([bits + step * 0x10000]).buffer)[0];
  return (bits & 0xffff) === 0 && Math.abs(stored - v) <= Math.abs(neighbour(1) - v) && Math.abs(stored - v) <= Math.abs(neighbour(-1) - v);
}

async function rejection(promise: Promise<unknown>): Promise<GrpoError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(GrpoError);
  return error as GrpoError;
}

const lora = (options: object) => checkOptions(LORA_OPTIONS, kernelNaming('lora'), options, LORA_DEFAULTS);

describe('lora options', () => {
  it('defaults to what TRL GRPO gets with --use_peft, target modules as PEFT picks for Llama/Qwen', () => {
    // trl/trainer/model_config.py (lora_r 16, lora_alpha 32, lora_dropout 0.05, use_rslora False; target_modules
    // None) and peft/src/peft/utils/constants.py lines 85, 95, 103-104 (llama, mistral, qwen2, qwen3: q_proj, v_proj)
    expect(LORA_DEFAULTS).toEqual({ rank: 16, alpha: 32, dropout: 0.05, targetModules: ['q_proj', 'v_proj'], rslora: false });
    expect(lora({ rank: 8, targetModules: ['gate_proj', 'up_proj'] })).toMatchObject({ rank: 8, alpha: 32, targetModules: ['gate_proj', 'up_proj'] });
    // a command line's --lora.targetModules q_proj,v_proj
    expect(lora({ targetModules: 'q_proj, v_proj' }).targetModules).toEqual(['q_proj', 'v_proj']);
  });

  it('refuses each bad value naming the field', () => {
    expect(() => lora({ rank: 0 })).toThrow('Expected lora rank >= 1 but received 0');
    expect(() => lora({ rank: 2.5 })).toThrow('Expected an integer for lora rank but received 2.5');
    expect(() => lora({ alpha: 0 })).toThrow('Expected lora alpha to be finite and > 0 but received 0');
    expect(() => lora({ dropout: 1 })).toThrow('Expected lora dropout in [0, 1) but received 1');
    expect(() => lora({ dropout: -0.1 })).toThrow('Expected lora dropout in [0, 1) but received -0.1');
    expect(() => lora({ targetModules: ['q_proj', 'lm_head'] })).toThrow('Expected lora targetModules[1] to be one of "q_proj"');
    expect(() => lora({ targetModules: [] })).toThrow('Expected lora targetModules to be a non-empty array');
    expect(() => lora({ targetModules: '' })).toThrow('Expected lora targetModules to be a non-empty array');
    expect(() => lora({ targetModules: 'q_proj,lm_head' })).toThrow('Expected lora targetModules[1] to be one of "q_proj"');
    expect(() => lora({ targetModules: ['q_proj', 'q_proj'] })).toThrow('"q_proj" appears twice');
    expect(() => lora({ ranks: 4 })).toThrow('Option "ranks" of lora is unknown; did you mean "rank"?');
  });

  it('scales by alpha / r, or alpha / √r with rslora (peft/src/peft/tuners/lora/layer.py 278-281)', () => {
    expect(loraScale({ rank: 16, alpha: 32, rslora: false })).toBe(2);
    expect(loraScale({ rank: 16, alpha: 32, rslora: true })).toBe(8);
  });
});

describe('float32 → bf16 / f16 on write (what a merged bf16 or f16 base is stored as)', () => {
  const roundTrip = (values: number[], dtype: 'BF16' | 'F16') => Array.from(toFloat32(fromFloat32(Float32Array.from(values), dtype), dtype, values.length));

  it('rounds f16 to nearest even through normals, subnormals and overflow (IEEE 754 binary16: 10 stored bits, max 65504)', () => {
    const ulp = 2 ** -10;
    expect(roundTrip([1 + ulp / 2, 1 + 1.5 * ulp, 1 + 0.6 * ulp, -2, 2 ** -14], 'F16')).toEqual([1, 1 + 2 * ulp, 1 + ulp, -2, 2 ** -14]);
    expect(roundTrip([2 ** -24, 2 ** -25, 3 * 2 ** -25, 2 ** -26, 5 * 2 ** -24 + 2 ** -26], 'F16')).toEqual([2 ** -24, 0, 2 ** -23, 0, 5 * 2 ** -24]);
    expect(roundTrip([65504, 65519, 65520, -1e6, Infinity], 'F16')).toEqual([65504, 65504, Infinity, -Infinity, Infinity]);
    expect(roundTrip([2 ** -14 - 2 ** -25], 'F16')).toEqual([2 ** -14]); // the largest subnormal rounds up into the normals
    expect(roundTrip([NaN], 'F16')[0]).toBeNaN();
  });

  it('rounds bf16 to nearest even (8 significant bits) and keeps NaN a NaN', () => {
    const ulp = 2 ** -7;
    const max = (2 - ulp) * 2 ** 127;
    expect(roundTrip([1 + ulp / 2, 1 + 1.5 * ulp, 1 + 0.6 * ulp, -max, 3.4e38], 'BF16')).toEqual([1, 1 + 2 * ulp, 1 + ulp, -max, Infinity]);
    expect(roundTrip([NaN], 'BF16')[0]).toBeNaN();
  });
});

describe('PEFT adapter format', () => {
  it('round-trips settings and tensors bitwise (float32)', async () => {
    const dir = join(scratch(), 'adapter'), adapter = randomAdapter(settings({ rslora: true, alpha: 5.5, dropout: 0.1 }));
    await saveAdapter(dir, adapter);
    const loaded = await loadAdapter(dir, tiny);
    expect(loaded.settings).toEqual(adapter.settings);
    expect(loaded.baseModel).toBe('Qwen/Qwen2.5-0.5B');
    expect(loaded.tensors.map((t) => t.name).sort()).toEqual(adapter.tensors.map((t) => t.name).sort());
    for (const t of adapter.tensors) expect(loaded.tensors.find((u) => u.name === t.name)!.data).toEqual(t.data);
  });

  it('stores bf16 when asked: each value the nearest bf16, stable on a second round trip', async () => {
    const root = scratch(), adapter = randomAdapter(settings());
    await saveAdapter(join(root, 'a'), adapter, 'BF16');
    const header = headerOf(join(root, 'a', 'adapter_model.safetensors'));
    expect(new Set(Object.values(header).map((e) => e.dtype))).toEqual(new Set(['BF16']));
    const once = await loadAdapter(join(root, 'a'));
    for (const t of adapter.tensors) {
      const back = once.tensors.find((u) => u.name === t.name)!.data;
      t.data.forEach((v, i) => expect(isNearestBf16(back[i], v)).toBe(true));
    }
    await saveAdapter(join(root, 'b'), once, 'BF16');
    expect(readFileSync(join(root, 'b', 'adapter_model.safetensors'))).toEqual(readFileSync(join(root, 'a', 'adapter_model.safetensors')));
  });

  it('writes the tensor names and adapter_config.json fields PEFT writes and reads', async () => {
    const dir = join(scratch(), 'adapter');
    await saveAdapter(dir, randomAdapter(settings()));
    // get_peft_model_state_dict drops the adapter name ("default"): peft/src/peft/utils/save_and_load.py 106-109;
    // the module path is PeftModelForCausalLM.base_model (LoraModel).model (Qwen2ForCausalLM).model.layers…
    const header = headerOf(join(dir, 'adapter_model.safetensors'));
    expect(header['base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight']).toEqual({ dtype: 'F32', shape: [3, 16], data_offsets: expect.any(Array) });
    expect(header['base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight'].shape).toEqual([16, 3]);
    expect(header['base_model.model.model.layers.1.self_attn.v_proj.lora_B.weight'].shape).toEqual([8, 3]); // 2 kv heads × 4
    expect(header['base_model.model.model.layers.1.mlp.down_proj.lora_A.weight'].shape).toEqual([3, 24]);
    expect(Object.keys(header)).toHaveLength(2 * 2 * 3);
    const json = JSON.parse(readFileSync(join(dir, 'adapter_config.json'), 'utf8'));
    expect(json).toMatchObject({
      peft_type: 'LORA', task_type: 'CAUSAL_LM', r: 3, lora_alpha: 32, lora_dropout: 0.05, target_modules: ['q_proj', 'v_proj', 'down_proj'],
      base_model_name_or_path: 'Qwen/Qwen2.5-0.5B', bias: 'none', fan_in_fan_out: false, use_rslora: false, use_dora: false,
      modules_to_save: null, inference_mode: true,
    });
  });

  it('reads an adapter_config.json as PEFT 0.18 writes it ("all-linear" targets, the fields it adds)', async () => {
    const dir = scratch(), all = settings({ targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] });
    const tensors = randomAdapter(all).tensors.map((t) => ({ ...t, name: `base_model.model.${t.name}` }));
    await writeSafetensors(join(dir, 'adapter_model.safetensors'), tensors);
    writeFileSync(join(dir, 'adapter_config.json'), JSON.stringify({
      alora_invocation_tokens: null, alpha_pattern: {}, arrow_config: null, auto_mapping: null, base_model_name_or_path: '/models/qwen', bias: 'none',
      corda_config: null, ensure_weight_tying: false, eva_config: null, exclude_modules: null, fan_in_fan_out: false, inference_mode: true,
      init_lora_weights: true, layer_replication: null, layers_pattern: null, layers_to_transform: null, loftq_config: {}, lora_alpha: 32,
      lora_bias: false, lora_dropout: 0.05, megatron_config: null, megatron_core: 'megatron.core', modules_to_save: null, peft_type: 'LORA',
      peft_version: '0.18.0', qalora_group_size: 16, r: 3, rank_pattern: {}, revision: null, target_modules: 'all-linear', target_parameters: null,
      task_type: 'CAUSAL_LM', trainable_token_indices: null, use_dora: false, use_qalora: false, use_rslora: false,
    }));
    const loaded = await loadAdapter(dir, tiny);
    expect(loaded.settings).toEqual(all);
    expect(loaded.baseModel).toBe('/models/qwen');
  });

  it('reads target_modules as a regular expression the way PEFT does: full match on each module name of the base', async () => {
    // check_target_module_exists (peft/src/peft/tuners/tuners_utils.py): re.fullmatch(config.target_modules, key) over
    // the base's module names (model.layers.{i}.self_attn.q_proj, …); the layer count comes from the base or the tensors
    const three = settings();
    for (const pattern of ['.*\\.(q_proj|v_proj|down_proj)', 'model\\.layers\\.\\d+\\.(self_attn\\.[qv]|mlp\\.down)_proj']) {
      const dir = join(scratch(), 'adapter');
      await saveAdapter(dir, randomAdapter(three));
      const path = join(dir, 'adapter_config.json');
      writeFileSync(path, JSON.stringify({ ...JSON.parse(readFileSync(path, 'utf8')), target_modules: pattern }));
      for (const config of [tiny, undefined]) expect((await loadAdapter(dir, config)).settings).toEqual(three);
    }
  });

  describe('typed errors', () => {
    async function writeWith(edit: (config: Record<string, unknown>) => void, tensors = randomAdapter(settings()).tensors): Promise<string> {
      const dir = join(scratch(), 'adapter');
      await saveAdapter(dir, randomAdapter(settings()));
      const path = join(dir, 'adapter_config.json'), config = JSON.parse(readFileSync(path, 'utf8'));
      edit(config);
      writeFileSync(path, JSON.stringify(config));
      await writeSafetensors(join(dir, 'adapter_model.safetensors'), tensors.map((t) => ({ ...t, name: `base_model.model.${t.name}` })));
      return dir;
    }

    it('a missing tensor names it, its module and layer', async () => {
      const tensors = randomAdapter(settings()).tensors.filter((t) => t.name !== 'model.layers.1.self_attn.v_proj.lora_B.weight');
      const e = await rejection(loadAdapter(await writeWith(() => undefined, tensors)));
      expect(e.code).toBe('GRPO_DATA_FORMAT');
      expect(e.message).toContain('tensor "model.layers.1.self_attn.v_proj.lora_B.weight" is missing (target module v_proj, layer 1)');
    });

    it('r disagreeing with the tensors, and a shape the base does not have', async () => {
      const rank = await rejection(loadAdapter(await writeWith((c) => { c.r = 4; })));
      expect(rank.code).toBe('GRPO_SHAPE_MISMATCH');
      expect(rank.message).toContain('"model.layers.0.self_attn.q_proj.lora_A.weight" has shape [3,16], rank 3, but the adapter\'s r is 4');
      const wider = { ...tiny, intermediateSize: 32 };
      const shape = await rejection(loadAdapter(await writeWith(() => undefined), wider));
      expect(shape.code).toBe('GRPO_SHAPE_MISMATCH');
      expect(shape.message).toContain('"model.layers.0.mlp.down_proj.lora_A.weight" has shape [3,24] but the base model needs [3,32]');
    });

    it('a tensor of no target module, and a file without PEFT\'s prefix', async () => {
      const extra = [...randomAdapter(settings()).tensors, { name: 'model.layers.0.self_attn.k_proj.lora_A.weight', shape: [3, 16], data: new Float32Array(48) }];
      const e = await rejection(loadAdapter(await writeWith(() => undefined, extra)));
      expect(e.message).toContain('tensor "model.layers.0.self_attn.k_proj.lora_A.weight" belongs to no target module (q_proj, v_proj, down_proj)');
      const dir = await writeWith(() => undefined);
      await writeSafetensors(join(dir, 'adapter_model.safetensors'), randomAdapter(settings()).tensors);
      expect((await rejection(loadAdapter(dir))).message).toContain('does not start with "base_model.model."');
    });

    it('unknown target modules, patterns and PEFT features not implemented are GRPO_UNSUPPORTED naming the field', async () => {
      const cases: [(c: Record<string, unknown>) => void, string][] = [
        [(c) => { c.target_modules = ['q_proj', 'lm_head']; }, 'target module "lm_head" is not supported'],
        [(c) => { c.target_modules = '(.*\\.)?(q_proj|lm_head)'; }, '"target_modules" "(.*\\\\.)?(q_proj|lm_head)" picks module "lm_head"; only q_proj, k_proj'],
        [(c) => { c.target_modules = 'model\\.layers\\.0\\..*'; }, 'picks module "model.layers.0.self_attn"'],
        [(c) => { c.target_modules = 'model\\.layers\\.1\\.\\w+\\.(q|v|down)_proj'; }, 'picks q_proj on layers 1 of 0..1; adapters go on every layer or on none'],
        [(c) => { c.target_modules = '(q_proj'; }, '"target_modules" "(q_proj" is not a regular expression this reads'],
        [(c) => { c.use_dora = true; }, 'use_dora = true is not supported'],
        [(c) => { c.bias = 'all'; }, 'bias = "all" is not supported'],
        [(c) => { c.modules_to_save = ['lm_head']; }, 'modules_to_save = ["lm_head"] is not supported'],
        [(c) => { c.rank_pattern = { q_proj: 8 }; }, 'rank_pattern {"q_proj":8} is not supported'],
        [(c) => { c.peft_type = 'IA3'; }, 'peft_type "IA3" is not supported (LORA only)'],
      ];
      for (const [edit, message] of cases) {
        const e = await rejection(loadAdapter(await writeWith(edit)));
        expect([e.code, e.message]).toEqual(['GRPO_UNSUPPORTED', expect.stringContaining(message)]);
      }
      const alpha = await rejection(loadAdapter(await writeWith((c) => { c.lora_alpha = -1; })));
      expect(alpha.message).toMatch(/Expected .*adapter_config.json "lora_alpha" to be finite and > 0 but received -1/);
      const missing = await rejection(loadAdapter(await writeWith((c) => { delete c.r; })));
      expect(missing.message).toContain('field "r" is missing');
      const none = await rejection(loadAdapter(await writeWith((c) => { c.target_modules = '.*\\.c_attn'; })));
      expect([none.code, none.message]).toEqual(['GRPO_DATA_FORMAT', expect.stringContaining('".*\\\\.c_attn" picks no module of the base')]);
    const targets = await rejection(loadAdapter(await writeWith((c) => { delete c.target_modules; })));
      expect(targets.message).toContain('field "target_modules" is missing');
    });

    it('a folder that is not there names the path and what an adapter folder holds', async () => {
      const e = await rejection(loadAdapter(join(scratch(), 'nowhere')));
      expect(e.code).toBe('GRPO_INVALID_ARGUMENT');
      expect(e.message).toContain("a LoRA adapter folder in PEFT's format (adapter_config.json and adapter_model.safetensors)");
    });
  });
});
