// Tokenizer files: a large vocab loads, encodes and decodes (its size was Math.max(...ids), which overflows the stack
// past ~120k ids: Qwen2's tokenizer.json has 151,643, Llama-3's 128,000), and a chat template that does not parse or that fails on
// the messages is a GrpoError (a jinja SyntaxError / Error before; found by test/fuzz-parsers.test.ts).
import { describe, expect, it } from 'vitest';
import { Tokenizer } from '../lib/policy/tokenizer.js';
import { byteToUnicode } from '../lib/policy/bpe-train.js';
import { tinyTokenizer } from './helpers/trainer.js';

const SPECIALS = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'];
const BYTE_CHARS = byteToUnicode(); // byte → printable character, as GPT-2's byte-level BPE spells bytes
const BYTE_OF = new Map(BYTE_CHARS.map((c, b) => [c, b]));

/**
 * A byte-level BPE of `size` vocab entries (+ SPECIALS as added tokens): the 256 bytes, every byte pair, then
 * letter triples (pair + letter) until the size is reached. Returns the tokenizer.json and its last (highest-id)
 * vocab entry, "FTO" at 152,000: its first pair outranks its second, so BPE merges it into that one token.
 */
function syntheticByteLevel(size: number) {
  const letters = [...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'].map((c) => c.charCodeAt(0));
  const order = [...letters, ...BYTE_CHARS.keys()].filter((b, i, all) => all.indexOf(b) === i).map((b) => BYTE_CHARS[b]);
  const vocab: Record<string, number> = {};
  const merges: string[] = [];
  let id = 0;
  const add = (token: string, merge?: string) => {
    vocab[token] = id++;
    if (merge) merges.push(merge);
  };
  for (const c of order) add(c);
  for (const a of order) for (const b of order) add(a + b, `${a} ${b}`);
  const abc = order.slice(0, letters.length);
  outer: for (const a of abc) for (const b of abc) for (const c of abc) {
    if (id === size) break outer;
    add(a + b + c, `${a + b} ${c}`);
  }
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
  const tokenizer = {
    version: '1.0', truncation: null, padding: null, normalizer: null, pre_tokenizer: byteLevel, post_processor: null, decoder: byteLevel,
    added_tokens: SPECIALS.map((content, i) => ({ id: size + i, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true })),
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, vocab, merges },
  };
  return { tokenizer, top: { token: Object.keys(vocab)[size - 1], id: size - 1 } };
}

describe('tokenizer.json and tokenizer_config.json', () => {
  it('a 152,000-token vocab loads with the right size', () => {
    const json = structuredClone(tinyTokenizer().toJson().tokenizer) as { model: { vocab: Record<string, number> } };
    const base = Object.keys(json.model.vocab).length;
    for (let i = base; i < 152_000; i++) json.model.vocab[`<extra_${i}>`] = i;
    expect(new Tokenizer(json).vocabSize).toBe(152_000);
  });

  it('a Qwen-sized byte-level BPE (152,000 tokens, 151,741 merges) encodes, decodes and gives offsets at its top ids', () => {
    const { tokenizer: json, top } = syntheticByteLevel(152_000 - SPECIALS.length);
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
