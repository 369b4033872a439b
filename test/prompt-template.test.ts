// Prompts through the chat template (issue 19): with a tokenizer that has a chat_template, the recommendation,
// CCR and QA tasks hand the policy each prompt as the user message of that template (after `prompt.system`), ending with
// the assistant header, in training and in evaluation; a tokenizer without one (the demo's) keeps today's prompts.
// The expected strings follow the ChatML template that trainBpe writes (lib/policy/bpe-train.ts):
// '<|im_start|>' + role + '\n' + content + '<|im_end|>\n' per message, then '<|im_start|>assistant\n'.
import { describe, expect, it } from 'vitest';
import { trainBpe } from '../lib/policy/bpe-train.js';
import type { Generation, Policy } from '../lib/policy/policy.js';
import { Tokenizer } from '../lib/policy/tokenizer.js';
import type { ConfigInput } from '../lib/trainer/config.js';
import { promptFormatter } from '../lib/trainer/prompt-template.js';
import { resolveConfig } from '../lib/trainer/recipes.js';
import { encodePrompt } from '../lib/trainer/rollout.js';
import { arithmeticData, ccrTask } from '../lib/trainer/task-ccr.js';
import { loadMoviesData, recommendPrompt } from '../lib/trainer/task-recommend.js';
import { qaData, qaPrompt } from '../lib/trainer/task-qa.js';
import { createTask } from '../lib/trainer/tasks.js';
import { tinyMoviesDir, tinyTokenizer } from './helpers/trainer.js';

const moviesDir = tinyMoviesDir([2], 1);
const movies = loadMoviesData(moviesDir);
const chatml = (() => {
  const { tokenizer, config } = trainBpe([...movies.train, ...movies.validation].map((r) => r.request), { vocabSize: 400 });
  return new Tokenizer(tokenizer, config);
})();
const turn = (role: string, content: string) => `<|im_start|>${role}\n${content}<|im_end|>\n`;
const ASSISTANT = '<|im_start|>assistant\n';

const recommend = (prompt: ConfigInput['prompt'] = {}) =>
  resolveConfig({ recipe: 'remark', data: { moviesDir }, groups: 1, candidates: 2, rewards: { ranks: 5 }, prompt });
const ccr = (prompt: ConfigInput['prompt'] = {}) =>
  resolveConfig({ recipe: 'ccr', groups: 1, candidates: 2, data: { arithmeticTrain: 30, arithmeticEval: 2 }, prompt });

/** A policy that records the prompts it is asked to continue (as text, without the BOS encodePrompt adds) and completes nothing. */
function recordingPolicy(tokenizer: Tokenizer) {
  const seen: string[] = [];
  const policy = {
    tokenizer,
    async generate(prompts: readonly ArrayLike<number>[]): Promise<Generation[]> {
      seen.push(...prompts.map((ids) => tokenizer.decode(Array.from(ids).filter((id, i) => i > 0 || id !== tokenizer.bosTokenId))));
      return prompts.map(() => ({ tokens: new Int32Array(0), logp: new Float32Array(0), text: '', truncated: false }));
    },
  } as unknown as Policy;
  return { policy, seen };
}

describe('prompts through the chat template', () => {
  it('recommendation: the request prompt is the user message after the system message', () => {
    const bare = recommendPrompt(movies.train[0].request, 5);
    const [text] = createTask(recommend({ system: 'You recommend films.' }), chatml).prompts(0).texts;
    expect(text).toBe(turn('system', 'You recommend films.') + turn('user', bare) + ASSISTANT);
    expect(createTask(recommend(), chatml).prompts(0).texts[0]).toBe(turn('user', bare) + ASSISTANT);
  });

  it('recommendation: a tokenizer without a template, or chatTemplate false, keeps the bare prompt', () => {
    const bare = recommendPrompt(movies.train[0].request, 5);
    expect(tinyTokenizer().hasChatTemplate).toBe(false);
    expect(createTask(recommend(), tinyTokenizer()).prompts(0).texts).toEqual([bare]);
    expect(createTask(recommend({ chatTemplate: false }), chatml).prompts(0).texts).toEqual([bare]);
  });

  it('CCR: the packed problems are the user message, in training and in evaluation', async () => {
    const config = ccr();
    const [bare] = ccrTask(config, arithmeticData(config.data), tinyTokenizer()).prompts(0).texts;
    const task = ccrTask(config, arithmeticData(config.data), chatml);
    expect(task.prompts(0).texts).toEqual([turn('user', bare) + ASSISTANT]);
    const templated = recordingPolicy(chatml);
    const untemplated = recordingPolicy(tinyTokenizer());
    await task.evaluate(templated.policy, 'test', 1);
    await ccrTask(config, arithmeticData(config.data), tinyTokenizer()).evaluate(untemplated.policy, 'test', 1);
    expect(untemplated.seen[0]).toContain('Problem 1');
    expect(templated.seen).toEqual([turn('user', untemplated.seen[0]) + ASSISTANT]);
  });

  it('recommendation evaluation prompts the policy with the templated request', async () => {
    const task = createTask(recommend({ system: 'Be brief.' }), chatml);
    const { policy, seen } = recordingPolicy(chatml);
    await task.evaluate(policy, 'validation', 1);
    expect(seen).toEqual([turn('system', 'Be brief.') + turn('user', recommendPrompt(movies.validation[0].request, 5)) + ASSISTANT]);
  });

  it('QA: the question prompt is the user message, in training and in evaluation', async () => {
    const config = resolveConfig({ recipe: 'remark', task: 'qa', groups: 1, candidates: 2, prompt: { system: 'Answer briefly.' } });
    const data = qaData(config.data);
    const task = createTask(config, chatml);
    const { draws, texts } = task.prompts(0) as unknown as { texts: string[]; draws: { request: number }[] };
    const head = turn('system', 'Answer briefly.');
    expect(texts).toEqual([head + turn('user', qaPrompt(data.train[draws[0].request].question, 10)) + ASSISTANT]);
    const { policy, seen } = recordingPolicy(chatml);
    await task.evaluate(policy, 'test', 1);
    expect(seen).toEqual([head + turn('user', qaPrompt(data.test[0].question, 10)) + ASSISTANT]);
  });

  it('prompt.thinking passes enable_thinking to the template; "template" passes nothing', () => {
    const { tokenizer: json } = chatml.toJson();
    const qwen3Like = new Tokenizer(json, {
      chat_template: "{{ messages[0].content }}|{%- if enable_thinking is defined and enable_thinking is false %}{{- '<think>\\n\\n</think>\\n\\n' }}{%- endif %}"
        + '{{ enable_thinking is defined }}',
    });
    const format = (thinking: 'template' | 'on' | 'off') => promptFormatter(qwen3Like, { chatTemplate: true, system: '', thinking })('Q');
    expect(format('off')).toBe('Q|<think>\n\n</think>\n\ntrue');
    expect(format('on')).toBe('Q|true');
    expect(format('template')).toBe('Q|false');
  });

  it('a system message without a chat template is refused, naming the option', () => {
    expect(() => createTask(recommend({ system: 'x' }), tinyTokenizer())).toThrow(
      expect.objectContaining({ code: 'GRPO_INVALID_ARGUMENT', message: expect.stringContaining('config "prompt.system"') }));
  });

  it('a template that writes the BOS token gets no second one when the prompt is encoded', () => {
    const { tokenizer: json, config } = chatml.toJson();
    const withBos = new Tokenizer(json, { ...config, bos_token: '<|endoftext|>', chat_template: '{{ bos_token }}{{ messages[0].content }}' });
    const text = promptFormatter(withBos, { chatTemplate: true, system: '', thinking: 'template' })('Hi');
    const ids = Array.from(encodePrompt(withBos, text));
    expect(ids.filter((id) => id === withBos.bosTokenId)).toHaveLength(1);
    expect(ids[0]).toBe(withBos.bosTokenId);
    expect(Array.from(encodePrompt(withBos, 'Hi'))[0]).toBe(withBos.bosTokenId); // bare text still gets it
  });
});
