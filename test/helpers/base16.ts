// What a LoRA policy with a 16-bit frozen base must share with the same values held in a float32 base: two training
// steps' adapters, scores, the base view's scores and generation, bit for bit (test/lora-policy, test/lora-f16-base).
import { expect } from 'vitest';
import type { BuiltinPolicy } from '../../lib/policy/builtin.js';
import type { SequenceBatch } from '../../lib/policy/policy.js';

/** Trains `kept` and `wide` two steps alike (gradLogp `weights`) and expects the same bits from both throughout. */
export async function expectSameAsFloat32Base(kept: BuiltinPolicy, wide: BuiltinPolicy, batch: SequenceBatch, weights: Float32Array[]): Promise<void> {
  for (let s = 0; s < 2; s++) {
    for (const p of [kept, wide]) {
      const f = await p.forward(batch);
      await p.backward(f.handle, { gradLogp: weights });
      await p.optimizerStep();
    }
    expect(kept.getAdapterTensors()).toEqual(wide.getAdapterTensors());
  }
  expect((await kept.score(batch)).logp).toEqual((await wide.score(batch)).logp);
  expect((await kept.adapters!.base().score(batch)).logp).toEqual((await wide.adapters!.base().score(batch)).logp);
  const gen = { maxNewTokens: 8, seed: 2 };
  expect(await kept.generate(batch.prompts, gen)).toEqual(await wide.generate(batch.prompts, gen));
}
