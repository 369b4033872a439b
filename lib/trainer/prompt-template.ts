// Prompts through the policy's chat template (issue 19): a task's prompt text becomes the user message of the
// tokenizer's chat_template, after the configured system message, ending with the assistant header, which is what
// transformers' apply_chat_template(messages, add_generation_prompt=True) gives a model to continue. A tokenizer
// without a template (the demo's byte-level BPE) keeps the bare text. SFT renders its targets as the assistant
// reply of the same conversation (replyFormatter), so SFT and RL see the same prompt.
import { GrpoError } from '../errors.js';
import type { ChatMessage } from '../policy/chat-template.js';
import type { Tokenizer } from '../policy/tokenizer.js';
import type { PromptConfig } from './config.js';

const THINKING = { template: undefined, on: true, off: false } as const;

/** A prompt text and, optionally, the assistant's reply to it rendered through the template. */
type Render = (text: string, reply?: string) => string;

/** The template renderer of `prompt`, or undefined when prompts stay bare text. */
function templateRenderer(tokenizer: Tokenizer, prompt: PromptConfig): Render | undefined {
  if (!prompt.chatTemplate || !tokenizer.hasChatTemplate) {
    if (prompt.system !== '') {
      throw new GrpoError('GRPO_INVALID_ARGUMENT', 'config "prompt.system": a system message needs a tokenizer with a chat_template (and "prompt.chatTemplate": true)');
    }
    return undefined;
  }
  const system: ChatMessage[] = prompt.system === '' ? [] : [{ role: 'system', content: prompt.system }];
  const thinking = THINKING[prompt.thinking];
  const variables = thinking === undefined ? {} : { enable_thinking: thinking };
  return (text, reply) => {
    const messages: ChatMessage[] = [...system, { role: 'user', content: text }];
    if (reply === undefined) return tokenizer.applyChatTemplate(messages, { addGenerationPrompt: true, variables });
    return tokenizer.applyChatTemplate([...messages, { role: 'assistant', content: reply }], { addGenerationPrompt: false, variables });
  };
}

/** The function from a task's prompt text to the text the policy is prompted with. */
export function promptFormatter(tokenizer: Tokenizer, prompt: PromptConfig): (text: string) => string {
  const render = templateRenderer(tokenizer, prompt);
  return render ? (text) => render(text) : (text) => text;
}

/**
 * With a chat template, the function from (prompt text, reply) to what the template writes after the prompt's
 * generation prompt when the reply is the assistant's turn: the reply and the template's end of turn
 * (`<|im_end|>\n` for ChatML), as TRL's SFTTrainer takes a conversational completion; undefined without a template.
 */
export function replyFormatter(tokenizer: Tokenizer, prompt: PromptConfig): ((text: string, reply: string) => string) | undefined {
  const render = templateRenderer(tokenizer, prompt);
  if (!render) return undefined;
  return (text, reply) => {
    const head = render(text);
    const whole = render(text, reply);
    if (!whole.startsWith(head)) {
      throw new GrpoError('GRPO_UNSUPPORTED', 'the chat template renders a conversation with an assistant reply that does not start with its generation prompt, so SFT cannot train the reply after the RL prompt');
    }
    return whole.slice(head.length);
  };
}
