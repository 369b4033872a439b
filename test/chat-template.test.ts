// Chat templates render as transformers renders them: the context of its apply_chat_template (special tokens,
// tools, **kwargs such as enable_thinking), jinja2's globals (range, raise_exception, strftime_now in the C locale),
// and selectattr/rejectattr with the "undefined" test, which @huggingface/jinja 0.5.11 gets wrong on items lacking
// the attribute (lib/policy/jinja-compat.ts). Expected strings follow jinja2's semantics; each was also rendered by
// jinja2 3.1.2 in transformers' environment (scripts/chat-template-reference.py, from transformers'
// src/transformers/utils/chat_template_utils.py `_compile_jinja_template` and `render_jinja_template`).
// The real templates (Qwen3, Qwen2.5, Llama-3, Mistral-Nemo) are compared in scripts/tokenizer-parity.js (.ci/run).
import { describe, expect, it } from 'vitest';
import { byteToUnicode } from '../lib/policy/bpe-train.js';
import { strftime } from '../lib/policy/chat-template.js';
import { Tokenizer } from '../lib/policy/tokenizer.js';
import { tinyTokenizer } from './helpers/trainer.js';

const { tokenizer: json } = tinyTokenizer().toJson();
const withTemplate = (chat_template: string, config: Record<string, unknown> = {}) => new Tokenizer(json, { ...config, chat_template });

describe('chat template context', () => {
  it('selectattr / rejectattr with "undefined" keep the items lacking / having the attribute (Mistral\'s role check)', () => {
    const t = withTemplate("{%- for m in messages | selectattr('tool_calls', 'undefined') %}{{ loop.index0 }}:{{ m.role }};{%- endfor %}|"
      + "{%- for m in messages | rejectattr('tool_calls', 'undefined') %}{{ m.role }};{%- endfor %}");
    const messages = [{ role: 'user', content: 'a' }, { role: 'assistant', content: '', tool_calls: [{ id: 'x' }] }, { role: 'user', content: 'b' }];
    expect(t.applyChatTemplate(messages)).toBe('0:user;1:user;|assistant;');
  });

  it('reverse slices, namespaces, special tokens, tools through tojson and extra variables (the constructs of Qwen3\'s template)', () => {
    const t = withTemplate("{%- set ns = namespace(last=-1) %}{%- for m in messages[::-1] %}{%- if ns.last < 0 and m.role == 'user' %}"
      + "{%- set ns.last = (messages|length - 1) - loop.index0 %}{%- endif %}{%- endfor %}{{ ns.last }}|{{ bos_token }}{{ pad_token }}"
      + '{{ additional_special_tokens | length }}|{%- if tools %}{%- for t in tools %}{{ t | tojson }}{%- endfor %}{%- endif %}|'
      + '{%- if add_generation_prompt %}<a>{%- if enable_thinking is defined and enable_thinking is false %}<think></think>{%- endif %}{%- endif %}',
    { bos_token: { content: '<s>' }, pad_token: '<pad>', additional_special_tokens: ['<x>', { content: '<y>' }] });
    const messages = ['user', 'assistant', 'user', 'assistant'].map((role, i) => ({ role, content: String(i) }));
    const tools = [{ name: 'f', parameters: { city: '東京', n: [1, 2.5, true, null] } }];
    expect(t.applyChatTemplate(messages, { tools, variables: { enable_thinking: false } }))
      .toBe('2|<s><pad>2|{"name": "f", "parameters": {"city": "東京", "n": [1, 2.5, true, null]}}|<a><think></think>');
    expect(t.applyChatTemplate(messages, { addGenerationPrompt: false })).toBe('2|<s><pad>2||');
  });

  it('range and loop controls as in jinja2', () => {
    const t = withTemplate('{{ range(3) | list }}{{ range(1, 7, 2) | list }}{% for i in range(5) %}{% if i == 3 %}{% break %}{% endif %}{{ i }}{% endfor %}');
    expect(t.applyChatTemplate([])).toBe('[0, 1, 2][1, 3, 5]012');
  });

  it('strftime_now formats as Python in the C locale; a date_string variable overrides it (Llama-3.2)', () => {
    expect(strftime(new Date(2024, 6, 26, 9, 5, 3), '%d %b %Y %H:%M:%S %B %A %a %y %m %%')).toBe('26 Jul 2024 09:05:03 July Friday Fri 24 07 %');
    const t = withTemplate("{%- if not date_string is defined %}{%- set date_string = strftime_now('%d %b %Y') %}{%- endif %}{{ date_string }}");
    expect(t.applyChatTemplate([], { variables: { date_string: '26 Jul 2024' } })).toBe('26 Jul 2024');
    expect(() => withTemplate("{{ strftime_now('%Q') }}").applyChatTemplate([])).toThrow(
      expect.objectContaining({ code: 'GRPO_INVALID_ARGUMENT', message: expect.stringContaining('unsupported directive %Q') }));
  });

  it('a tokenizer says whether it has a template', () => {
    expect(withTemplate('x').hasChatTemplate).toBe(true);
    expect(new Tokenizer(json, {}).hasChatTemplate).toBe(false);
  });
});

describe('offsets by prefix decoding', () => {
  it('a token that is a genuine U+FFFD of the text keeps it (it was stripped as an unfinished character)', () => {
    // The tiny BPE plus one token for U+FFFD's three bytes, under a decoder that takes the prefix-decoding path.
    const [a, b, c] = [0xef, 0xbf, 0xbd].map((byte) => byteToUnicode()[byte]);
    const model = json.model as { vocab: Record<string, number>; merges: string[] };
    const size = tinyTokenizer().vocabSize;
    const replacement = { ...json, added_tokens: [], model: { ...model, vocab: { ...model.vocab, [a + b]: size, [a + b + c]: size + 1 }, merges: [...model.merges, `${a} ${b}`, `${a + b} ${c}`] } };
    const byteLevel = new Tokenizer(replacement);
    const general = new Tokenizer({ ...replacement, decoder: { type: 'Sequence', decoders: [json.decoder] } });
    const text = 'Alien \uFFFD Aliens';
    const { ids, offsets } = general.encode(text);
    expect(Array.from(ids)).toContain(size + 1);
    const pieces = Array.from(ids, (_, i) => text.slice(offsets[2 * i], offsets[2 * i + 1]));
    expect(pieces[Array.from(ids).indexOf(size + 1)]).toBe('\uFFFD');
    expect(general.encode(text)).toEqual(byteLevel.encode(text));
  });
});
