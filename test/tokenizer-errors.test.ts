// Tokenizer files: a large vocab loads (its size was Math.max(...ids), which overflows the stack past
// ~120k ids: Qwen2's tokenizer.json has 151,643), and a chat template that does not parse or that fails on
// the messages is a GrpoError (a jinja SyntaxError / Error before; found by test/fuzz-parsers.test.ts).
import { describe, expect, it } from 'vitest';
import { Tokenizer } from '../lib/policy/tokenizer.js';
import { tinyTokenizer } from './helpers/trainer.js';

describe('tokenizer.json and tokenizer_config.json', () => {
  it('a 152,000-token vocab loads with the right size', () => {
    const json = structuredClone(tinyTokenizer().toJson().tokenizer) as { model: { vocab: Record<string, number> } };
    const base = Object.keys(json.model.vocab).length;
    for (let i = base; i < 152_000; i++) json.model.vocab[`<extra_${i}>`] = i;
    expect(new Tokenizer(json).vocabSize).toBe(152_000);
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
