// SFT prompts through the chat template (issue 19): an SFT example's prompt is the prompt RL gives the policy
// (promptFormatter + encodePrompt, `prompt.system` included) and its completion, the only tokens the loss covers, is
// what the template writes for the target as the assistant's reply after the generation prompt: the target and the
// end of turn. TRL's SFTTrainer does the same for a conversational prompt-completion example: it tokenizes
// apply_chat_template(prompt, add_generation_prompt=True) and apply_chat_template(prompt + completion), masks the
// first, trains the rest, and adds no EOS to a conversational example (only non-conversational ones get `add_eos`)
// (huggingface/trl trl/trainer/sft_trainer.py at f2cd577, lines 1433-1504). The ChatML template trainBpe writes
// (lib/policy/bpe-train.ts) renders '<|im_start|>' + role + '\n' + content + '<|im_end|>\n' per message, then
// '<|im_start|>assistant\n' as the generation prompt; its EOS is <|endoftext|>. A tokenizer without a template (the
// demo's) keeps today's encoding: the bare prompt with BOS, then the target and EOS.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { main } from '../lib/cli/main.js';
import { BuiltinPolicy } from '../lib/policy/builtin.js';
import { trainBpe } from '../lib/policy/bpe-train.js';
import { Tokenizer } from '../lib/policy/tokenizer.js';
import type { PromptConfig } from '../lib/trainer/config.js';
import { resolveConfig } from '../lib/trainer/recipes.js';
import { encodePrompt } from '../lib/trainer/rollout.js';
import { sftEncoder } from '../lib/trainer/sft-encode.js';
import { recommendExamples, sft, SFT_DEFAULTS } from '../lib/trainer/sft.js';
import { loadMoviesData, recommendPrompt } from '../lib/trainer/task-recommend.js';
import { createTask } from '../lib/trainer/tasks.js';
import { tinyConfig, tinyMoviesDir, tinyTokenizer } from './helpers/trainer.js';

const moviesDir = tinyMoviesDir([2], 1);
const movies = loadMoviesData(moviesDir);
const examples = recommendExamples(movies, 5);
const chatml = (() => {
  const { tokenizer, config } = trainBpe(examples.flatMap((e) => [e.prompt, e.target]), { vocabSize: 400 });
  return new Tokenizer(tokenizer, config);
})();
const turn = (role: string, content: string) => `<|im_start|>${role}\n${content}<|im_end|>\n`;
const ASSISTANT = '<|im_start|>assistant\n';
const END_OF_TURN = '<|im_end|>\n';
const prompt = (options: Partial<PromptConfig> = {}): PromptConfig => ({ ...SFT_DEFAULTS.prompt, ...options });
const ids = (tokenizer: Tokenizer, text: string) => Array.from(tokenizer.encode(text).ids);

describe('SFT prompts through the chat template', () => {
  it('a tokenizer without a template keeps today\'s encoding: BOS + bare prompt, then target + EOS', () => {
    const tokenizer = tinyTokenizer();
    expect(tokenizer.hasChatTemplate).toBe(false);
    const encode = sftEncoder(tokenizer, prompt(), 512);
    for (const e of examples) {
      const encoded = encode(e);
      expect(Array.from(encoded.prompt)).toEqual([tokenizer.bosTokenId, ...ids(tokenizer, e.prompt)]);
      expect(Array.from(encoded.completion)).toEqual([...ids(tokenizer, e.target), tokenizer.eosTokenId]);
    }
  });

  it('with a ChatML template: template(prompt), then target + end of turn, no EOS; the same ids as the whole conversation', () => {
    const e = examples[0];
    const encoded = sftEncoder(chatml, prompt(), 512)(e);
    expect(Array.from(encoded.prompt)).toEqual(ids(chatml, turn('user', e.prompt) + ASSISTANT));
    expect(Array.from(encoded.completion)).toEqual(ids(chatml, e.target + END_OF_TURN));
    expect(chatml.decode(encoded.completion)).toBe(e.target + END_OF_TURN);
    expect(Array.from(encoded.completion)).not.toContain(chatml.eosTokenId);
    // TRL tokenizes prompt + completion as one conversation and checks that the prompt's ids start it
    expect([...encoded.prompt, ...encoded.completion]).toEqual(ids(chatml, turn('user', e.prompt) + turn('assistant', e.target)));
  });

  it('prompt.system is the first turn of the SFT prompt', () => {
    const e = examples[0];
    const encoded = sftEncoder(chatml, prompt({ system: 'You recommend films.' }), 512)(e);
    expect(chatml.decode(encoded.prompt)).toBe(turn('system', 'You recommend films.') + turn('user', e.prompt) + ASSISTANT);
    expect(chatml.decode(encoded.completion)).toBe(e.target + END_OF_TURN);
  });

  it('the loss covers exactly the target and its end of turn: sft() scores those tokens after the templated prompt', async () => {
    const policy = await BuiltinPolicy.create(tinyConfig(chatml.vocabSize), { seed: 1, tokenizer: chatml });
    const forward = vi.spyOn(policy, 'forward');
    await sft(policy, examples, { steps: 1, batchSize: examples.length, prompt: { system: 'Be brief.' } });
    const [[batch]] = forward.mock.calls;
    const { scores } = await forward.mock.results[0].value;
    const expected = examples.map((e) => [turn('system', 'Be brief.') + turn('user', e.prompt) + ASSISTANT, e.target + END_OF_TURN]);
    const seen = batch.prompts.map((ids, i) => [chatml.decode(ids), chatml.decode(batch.completions[i])]);
    expect(seen.sort()).toEqual(expected.sort());
    batch.completions.forEach((ids, i) => expect(scores.logp[i]).toHaveLength(ids.length));
  });

  it('RL prompts the policy with the same ids as the SFT prompt of the same request', () => {
    const system = 'You recommend films.';
    const config = resolveConfig({ recipe: 'remark', data: { moviesDir }, groups: 1, candidates: 2, rewards: { ranks: 5 }, prompt: { system } });
    const task = createTask(config, chatml);
    const [rlText] = task.prompts(0).texts;
    const rlIds = Array.from(encodePrompt(chatml, rlText));
    const sftPrompts = examples.map((e) => Array.from(sftEncoder(chatml, config.prompt, 512)(e).prompt));
    expect(sftPrompts).toContainEqual(rlIds);
    expect(chatml.decode(rlIds)).toBe(turn('system', system) + turn('user', recommendPrompt(movies.train[0].request, 5)) + ASSISTANT);
  });

  it('a Qwen3-shaped template: with thinking off the think block is in the prompt, otherwise the reply trains an empty one', () => {
    // Qwen3's branches reduced to the two that matter here: the last assistant turn is written with a <think> block,
    // and the generation prompt closes an empty one only for enable_thinking false.
    const { tokenizer: json, config } = chatml.toJson();
    const qwen3Like = new Tokenizer(json, { ...config, chat_template: "{%- for m in messages %}{%- if m.role == 'assistant' %}"
      + "{{- '<|im_start|>assistant\\n<think>\\n\\n</think>\\n\\n' + m.content + '<|im_end|>\\n' }}{%- else %}{{- '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}{%- endif %}{%- endfor %}"
      + "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- if enable_thinking is defined and enable_thinking is false %}{{- '<think>\\n\\n</think>\\n\\n' }}{%- endif %}{%- endif %}" });
    const e = examples[0];
    const off = sftEncoder(qwen3Like, prompt({ thinking: 'off' }), 512)(e);
    expect(qwen3Like.decode(off.prompt)).toBe(turn('user', e.prompt) + ASSISTANT + '<think>\n\n</think>\n\n');
    expect(qwen3Like.decode(off.completion)).toBe(e.target + END_OF_TURN);
    const thinking = sftEncoder(qwen3Like, prompt(), 512)(e);
    expect(qwen3Like.decode(thinking.completion)).toBe('<think>\n\n</think>\n\n' + e.target + END_OF_TURN);
  });

  it('a template whose reply does not follow its generation prompt is refused', () => {
    const { tokenizer: json, config } = chatml.toJson();
    const odd = new Tokenizer(json, { ...config, chat_template: '{% if add_generation_prompt %}A:{% endif %}{% for m in messages %}{{ m.content }}{% endfor %}' });
    expect(() => sftEncoder(odd, prompt(), 512)(examples[0])).toThrow(expect.objectContaining({ code: 'GRPO_UNSUPPORTED' }));
  });

  it('sft() refuses a system message for a tokenizer without a template and an unknown prompt option', async () => {
    const policy = await BuiltinPolicy.create(tinyConfig(tinyTokenizer().vocabSize), { seed: 1, tokenizer: tinyTokenizer() });
    await expect(sft(policy, examples, { steps: 1, prompt: { system: 'x' } })).rejects.toMatchObject({ code: 'GRPO_INVALID_ARGUMENT' });
    await expect(sft(policy, examples, { steps: 1, prompt: { sytem: 'x' } as never })).rejects.toMatchObject({ code: 'GRPO_UNKNOWN_OPTION', message: expect.stringContaining('did you mean "system"') });
  });
});

describe('grpo sft --prompt.<option>', () => {
  it('passes the prompt options to SFT (sft.json records them) for a checkpoint with a chat template', async () => {
    const root = mkdtempSync(join(tmpdir(), 'grpo-sft-prompt-'));
    const policy = await BuiltinPolicy.create(tinyConfig(chatml.vocabSize), { seed: 1, tokenizer: chatml });
    await policy.save(join(root, 'start'));
    const out = join(root, 'sft');
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const argv = ['sft', '--policy', join(root, 'start'), '--out', out, '--data', 'movies', '--steps', '1', '--batch-size', '2', '--prompt.system', 'Be brief.'];
    expect(await main(argv)).toBe(0);
    vi.restoreAllMocks();
    const summary = JSON.parse(readFileSync(join(out, 'sft.json'), 'utf8'));
    expect(summary.options.prompt).toEqual({ chatTemplate: true, system: 'Be brief.', thinking: 'template' });
  });
});
