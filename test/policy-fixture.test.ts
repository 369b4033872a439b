// Parity with an independent PyTorch implementation of the Hugging Face Llama/Qwen2 forward
// (scripts/make-model-fixture.py, float64): tiny random checkpoints, one in float32 with QKV bias
// and GQA (Qwen2), one in bfloat16 with tied embeddings (Llama), one with per-head q/k norms and
// head_dim != hidden / heads (Qwen3); then the real config.json of Qwen2.5-0.5B, Qwen3-0.6B and
// Llama-3.2-1B (test/fixtures/hf-configs) with only the sizes shrunk, and RoPE scaling of each type
// (llama3, yarn with "type" and "rope_type" spellings and with mscale, linear, dynamic) against the
// frequencies of transformers 4.57.6's modeling_rope_utils.py as scripts/rope_reference.py writes them
// (line ranges there), in F32, BF16 and F16 files.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BuiltinPolicy } from '../lib/policy/builtin.js';
import { configFromHf } from '../lib/policy/config.js';
import { expectClose } from './helpers/close.js';

const folder = (name: string) => fileURLToPath(new URL(`./fixtures/model/${name}`, import.meta.url));

interface Expected {
  sequences: { tokens: number[]; logits: number[][] }[];
}

const FIXTURES = [
  'qwen2-tiny', 'llama-tiny', 'qwen3-tiny', 'qwen2.5-0.5b-tiny', 'qwen2.5-yarn-tiny', 'qwen3-0.6b-tiny', 'qwen3-yarn-tiny',
  'llama-3.2-1b-tiny', 'smollm-linear-tiny', 'mistral-yarn-tiny', 'mistral-dynamic-tiny',
];

describe.each(FIXTURES)('%s', (name) => {
  const expected = JSON.parse(readFileSync(`${folder(name)}/expected.json`, 'utf8')) as Expected;

  it('loads the Hugging Face config and weights', async () => {
    const policy = await BuiltinPolicy.load(folder(name));
    const hf = JSON.parse(readFileSync(`${folder(name)}/config.json`, 'utf8'));
    expect(policy.config).toEqual(configFromHf(hf));
    expect(policy.config.tieEmbeddings).toBe(hf.tie_word_embeddings);
    expect(policy.tensorList().some((t) => t.name === 'lm_head.weight')).toBe(!hf.tie_word_embeddings);
  });

  it('logits match the PyTorch reference', async () => {
    const policy = await BuiltinPolicy.load(folder(name));
    const vocab = policy.config.vocabSize;
    for (const s of expected.sequences) {
      const logits = await policy.logits([s.tokens]);
      expect(logits.length).toBe(s.tokens.length * vocab);
      expectClose(logits, s.logits.flat(), { atol: 2e-4, rtol: 2e-4 });
    }
  });

  it('packed sequences give the same logits as one at a time', async () => {
    const policy = await BuiltinPolicy.load(folder(name));
    const packed = await policy.logits(expected.sequences.map((s) => s.tokens));
    const single = await Promise.all(expected.sequences.map((s) => policy.logits([s.tokens])));
    expect(Array.from(packed)).toEqual(single.flatMap((l) => Array.from(l)));
  });

  it('scores equal the log-softmax of the reference logits', async () => {
    const policy = await BuiltinPolicy.load(folder(name));
    const s = expected.sequences[0];
    const scores = await policy.score({ prompts: [s.tokens.slice(0, 2)], completions: [s.tokens.slice(2)] });
    const want = s.tokens.slice(2).map((token, j) => {
      const row = s.logits[1 + j];
      const max = Math.max(...row);
      return row[token] - max - Math.log(row.reduce((sum, x) => sum + Math.exp(x - max), 0));
    });
    expectClose(scores.logp[0], want, { atol: 2e-4, rtol: 2e-4 });
  });
});
