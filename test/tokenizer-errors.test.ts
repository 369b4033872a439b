// Tokenizer files: a large vocab loads, encodes and decodes (its size was Math.max(...ids), which overflows the stack
// past ~120k ids: Qwen2's tokenizer.json has 151,643, Llama-3's 128,000), and a chat template that does not parse or that fails on
// the messages is a GrpoError (a jinja SyntaxError / Error before; found by test/fuzz-parsers.test.ts).
import { describe, expect, it } from 'vitest';
import { Tokenizer } from '../lib/policy/tokenizer.js';
import { byteToUnicode, syntheticBpe } from '../lib/policy/bpe-train.js';
import { tinyTokenizer } from './helpers/trainer.js';

const SPECIALS = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'];
const BYTE_CHARS = byteToUnicode(); // byte → printable character, as GPT-2's byte-level BPE spells bytes
const BYTE_OF = new Map(BYTE_CHARS.map((c, b) => [c, b]));

describe('tokenizer.json and tokenizer_config.json', () => {
  it('a 152,000-token vocab loads with the right size', () => {
    const json = structuredClone(tinyTokenizer().toJson().tokenizer) as { model: { vocab: Record<string, number> } };
    const base = Object.keys(json.model.vocab).length;
    for (let i = base; i < 152_000; i++) json.model.vocab[`<extra_${i}>`] = i;
    expect(new Tokenizer(json).vocabSize).toBe(152_000);
  });

  it('a Qwen-sized byte-level BPE (152,000 tokens, 151,741 merges) encodes, decodes and gives offsets at its top ids', () => {
    // its highest vocab entry, "FTO" (a letter triple): its first pair outranks its second, so BPE merges it into that one token
    const { tokenizer: json } = syntheticBpe(152_000, SPECIALS);
    const vocab = Object.keys((json.model as { vocab: Record<string, number> }).vocab);
    const top = { token: vocab[vocab.length - 1], id: vocab.length - 1 };
    expect(top).toEqual({ token: 'FTO', id: 151_996 });
    const big = new Tokenizer(json, { eos_token: SPECIALS[0] });
    expect(big.vocabSize).toBe(152_000);
    expect(big.eosTokenId).toBe(151_997);
    const topText = new TextDecoder().decode(Uint8Array.from([...top.token].map((c) => BYTE_OF.get(c)!)));
    expect(Array.from(big.encode(topText).ids)).toEqual([top.id]);
    const text = `Qwen: ${topText} 東京 🚀 ${SPECIALS[2]}\n\t  42`;
    const { ids, offsets } = big.encode(text);
    expect(Math.max(...ids)).toBe(151_999); // the special token
    expect(big.decode(ids)).toBe(text);
    expect(offsets[offsets.length - 1]).toBe(text.length);
    expect(big.decode([top.id, 151_999], { skipSpecialTokens: true })).toBe(topText);
  });

  it('a chat template that does not parse is GRPO_DATA_FORMAT; one that raises on the messages GRPO_INVALID_ARGUMENT', () => {
    const { tokenizer } = tinyTokenizer().toJson();
    const broken = new Tokenizer(tokenizer, { chat_template: '{% for m in messages %}{{ m.content }}' });
    expect(() => broken.applyChatTemplate([{ role: 'user', content: 'hi' }])).toThrow(
      expect.objectContaining({ code: 'GRPO_DATA_FORMAT', message: expect.stringMatching(/^tokenizer_config\.json: chat_template does not parse \(/) }),
    );
    const strict = new Tokenizer(tokenizer, { chat_template: "{% if messages[0].role != 'system' %}{{ raise_exception('needs a system message') }}{% endif %}" });
    expect(() => strict.applyChatTemplate([{ role: 'user', content: 'hi' }])).toThrow(
      expect.objectContaining({ code: 'GRPO_INVALID_ARGUMENT', message: 'tokenizer_config.json: chat_template failed on these messages (needs a system message)' }),
    );
  });
});
