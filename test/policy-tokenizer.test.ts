// Tokenizer: a byte-level BPE trained here on real data loads through @huggingface/tokenizers,
// round-trips text exactly, gives character offsets that tile the text, renders the chat
// template, and drives text generation with stop strings.
import { describe, expect, it } from 'vitest';
import { trainBpe } from '../lib/policy/bpe-train.js';
import { BuiltinPolicy } from '../lib/policy/builtin.js';
import { Tokenizer } from '../lib/policy/tokenizer.js';
import { realDataText } from './helpers/real-data.js';

const lines = realDataText('gsm8k-test.jsonl').trim().split('\n');
const texts = lines.slice(0, 300).map((l) => (JSON.parse(l) as { question: string }).question);
const trained = trainBpe(texts, { vocabSize: 600 });
const tokenizer = new Tokenizer(trained.tokenizer, trained.config);

function spans(text: string) {
  const { ids, offsets } = tokenizer.encode(text);
  const decoded = tokenizer.decode(ids);
  return { ids, decoded, pieces: Array.from({ length: ids.length }, (_, i) => decoded.slice(offsets[2 * i], offsets[2 * i + 1])), offsets };
}

describe('byte-level BPE', () => {
  it('has the requested vocabulary and compresses text', () => {
    expect(tokenizer.vocabSize).toBe(600);
    expect(tokenizer.tokenId('<|im_end|>')).toBe(599);
    const text = texts.slice(300 - 20).join('\n');
    expect(tokenizer.encode(text).ids.length).toBeLessThan(new TextEncoder().encode(text).length / 2);
  });

  it('round-trips held-out and non-ASCII text exactly; offsets tile the text', () => {
    for (const text of [lines[400], 'Ünïcödé — 東京 🚀 and  two  spaces\n\ttab', '']) {
      const { decoded, pieces, offsets } = spans(text);
      expect(decoded).toBe(text);
      expect(pieces.join('')).toBe(text);
      for (let i = 1; i < offsets.length; i++) expect(offsets[i]).toBeGreaterThanOrEqual(offsets[i - 1]);
    }
  });

  it('an emoji split over several byte tokens is covered by the token that completes it', () => {
    const { ids, pieces } = spans('🚀');
    expect(ids.length).toBeGreaterThan(1);
    expect(pieces.slice(0, -1).every((p) => p === '')).toBe(true);
    expect(pieces[pieces.length - 1]).toBe('🚀');
  });

  it('the general offset path (prefix decoding) agrees with the byte-level path', () => {
    const wrapped = { ...trained.tokenizer, decoder: { type: 'Sequence', decoders: [trained.tokenizer.decoder] } };
    const general = new Tokenizer(wrapped, trained.config);
    const text = `${lines[401]} — 東京 🚀`;
    expect(general.encode(text)).toEqual(tokenizer.encode(text));
  });

  it('special tokens are single tokens and the chat template renders', () => {
    const text = tokenizer.applyChatTemplate([{ role: 'user', content: 'Hi' }]);
    expect(text).toBe('<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n');
    expect(Array.from(tokenizer.encode(text).ids).filter((id) => id >= 597)).toEqual([598, 599, 598]);
  });

  it('training is deterministic', () => {
    expect(trainBpe(texts, { vocabSize: 600 })).toEqual(trained);
  });
});

describe('text generation', () => {
  it('text prompts, decoded completions and stop strings', async () => {
    const policy = BuiltinPolicy.create({
      vocabSize: 600, hiddenSize: 16, intermediateSize: 24, numLayers: 1, numHeads: 2, numKvHeads: 1, headDim: 8,
      maxPositions: 128, rmsNormEps: 1e-6, ropeTheta: 10000, tieEmbeddings: true, attentionBias: false, architecture: 'LlamaForCausalLM',
    }, { seed: 1, tokenizer });
    const [full] = await policy.generate(['How many apples'], { maxNewTokens: 30, seed: 3, stopTokens: [] });
    expect(full.text).toBe(tokenizer.decode(full.tokens, { skipSpecialTokens: true }));
    const stop = full.text!.slice(5, 7);
    const [cut] = await policy.generate(['How many apples'], { maxNewTokens: 30, seed: 3, stopTokens: [], stopStrings: [stop] });
    const end = full.text!.indexOf(stop) + stop.length;
    expect(cut.text).toBe(full.text!.slice(0, end));
    expect(cut.truncated).toBe(false);
    expect(Array.from(cut.tokens)).toEqual(Array.from(full.tokens.slice(0, cut.tokens.length)));
    expect(tokenizer.decode(cut.tokens, { skipSpecialTokens: true }).length).toBeGreaterThanOrEqual(end);
  });
});
