// A LoRA adapter written by the real peft (0.21.0, get_peft_model with random B) on a Qwen2 base written by the real
// transformers (5.17.0): test/fixtures/peft-real, made by `node scripts/hf-interop.js --write-fixture` (its README).
// Read through lora.from it gives PEFT's logits, our merge gives merge_and_unload's weights, and PEFT's own
// adapter_config.json (every field peft 0.21 writes) reads; no Python needed.
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GrpoError } from '../lib/errors.js';
import { LORA_TARGET_MODULES } from '../lib/options/lora.js';
import { BuiltinPolicy, type BuiltinOptions } from '../lib/policy/builtin.js';
import { mergeAdapter } from '../lib/policy/lora-merge.js';
import { readModelWeights, readSafetensors } from '../lib/policy/safetensors.js';
import { expectClose } from './helpers/close.js';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'peft-real');
const BASE = join(FIXTURE, 'base'), ADAPTER = join(FIXTURE, 'adapter');
/** float32 on both sides: the largest difference scripts/hf-interop.js measured was 4e-6 */
const LOGIT_TOLERANCE = 1e-4, WEIGHT_TOLERANCE = 1e-6;

interface Expected {
  sequences: number[][];
  /** PEFT's logits [sum of lengths][vocab], then the base's without the adapter */
  logits: number[][];
  base_logits: number[][];
}
const expected = JSON.parse(readFileSync(join(FIXTURE, 'expected.json'), 'utf8')) as Expected;

async function logitsOf(dir: string, options?: BuiltinOptions): Promise<Float32Array> {
  const policy = await BuiltinPolicy.load(dir, options);
  const out = await policy.logits(expected.sequences);
  policy.dispose();
  return out;
}

const maxDiff = (a: ArrayLike<number>, b: ArrayLike<number>) => Array.from(a).reduce((m, v, i) => Math.max(m, Math.abs(v - b[i])), 0);

describe('a real PEFT adapter (test/fixtures/peft-real)', () => {
  it('loads through lora.from with PEFT\'s settings and logits; the base alone has transformers\' logits', async () => {
    const policy = await BuiltinPolicy.load(BASE, { lora: { from: ADAPTER } });
    expect(policy.config).toMatchObject({ architecture: 'Qwen2ForCausalLM', tieEmbeddings: true, attentionBias: true });
    expect({ ...policy.adapters!.settings, targetModules: [...policy.adapters!.settings.targetModules].sort() })
      .toEqual({ rank: 4, alpha: 8, dropout: 0.05, rslora: false, targetModules: [...LORA_TARGET_MODULES].sort() });
    const adapted = await policy.logits(expected.sequences);
    policy.dispose();
    expectClose(adapted, expected.logits.flat(), { atol: LOGIT_TOLERANCE, rtol: 0 });
    const base = await logitsOf(BASE);
    expectClose(base, expected.base_logits.flat(), { atol: LOGIT_TOLERANCE, rtol: 0 });
    // an ignored adapter would fail: it moves the logits far more than the tolerance
    expect(maxDiff(adapted, base)).toBeGreaterThan(1000 * LOGIT_TOLERANCE);
  });

  it('merges to merge_and_unload\'s weights, every other tensor untouched, and the merged folder has PEFT\'s logits', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'grpo-peft-real-')), 'merged');
    expect((await mergeAdapter(BASE, ADAPTER, out)).merged).toBe(14);
    const merged = new Map((await readModelWeights(out)).map((t) => [t.name, t.data]));
    const peftMerged = await readSafetensors(join(FIXTURE, 'peft-merged.safetensors'));
    expect(peftMerged).toHaveLength(14);
    for (const t of peftMerged) expectClose(merged.get(t.name)!, t.data, { atol: WEIGHT_TOLERANCE, rtol: 0 });
    const base = await readModelWeights(BASE);
    for (const t of base.filter((u) => !peftMerged.some((p) => p.name === u.name))) expect(merged.get(t.name)).toEqual(t.data);
    expect(Math.max(...peftMerged.map((t) => maxDiff(t.data, base.find((u) => u.name === t.name)!.data)))).toBeGreaterThan(1000 * WEIGHT_TOLERANCE);
    expectClose(await logitsOf(out), expected.logits.flat(), { atol: LOGIT_TOLERANCE, rtol: 0 });
  });

  it('PEFT\'s config with a feature that changes the adapted model is GRPO_UNSUPPORTED naming the field', async () => {
    const saved = JSON.parse(readFileSync(join(ADAPTER, 'adapter_config.json'), 'utf8'));
    const features = { alora_invocation_tokens: [7, 8], trainable_token_indices: [5], arrow_config: { top_k: 3 } };
    for (const [field, value] of Object.entries(features)) {
      const folder = join(mkdtempSync(join(tmpdir(), 'grpo-peft-real-')), 'adapter');
      cpSync(ADAPTER, folder, { recursive: true });
      writeFileSync(join(folder, 'adapter_config.json'), JSON.stringify({ ...saved, [field]: value }));
      const error = await BuiltinPolicy.load(BASE, { lora: { from: folder } }).then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(GrpoError);
      expect((error as GrpoError).code).toBe('GRPO_UNSUPPORTED');
      expect((error as Error).message).toContain(`${field} = ${JSON.stringify(value)} is not supported`);
    }
  });
});
