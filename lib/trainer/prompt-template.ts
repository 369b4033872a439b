// Prompts through the policy's chat template (issue 19): a task's prompt text becomes the user message of the
// tokenizer's chat_template, after the configured system message, ending with the assistant header, which is what
// transformers' apply_chat_template(messages, add_generation_prompt=True) gives a model to continue. A tokenizer
// without a template (the demo's byte-level BPE) keeps the bare text.
import { GrpoError } from '../errors.js';
import type { ChatMessage } from '../policy/chat-template.js';
import type { Tokenizer } from '../policy/tokenizer.js';
import type { PromptConfig } from './config.js';

const THINKING = { template: undefined, on: true, off: false } as const;

/** The function from a task's prompt text to the text the policy is prompted with. */
export function promptFormatter(tokenizer: Tokenizer, prompt: PromptConfig): (text: string) => string {
  if (!prompt.chatTemplate || !tokenizer.hasChatTemplate) {
    if (prompt.system !== '') {
      throw new GrpoError('GRPO_INVALID_ARGUMENT', 'config "prompt.system": a system message needs a tokenizer with a chat_template (and "prompt.chatTemplate": true)');
    }
    return (text) => text;
  }
  const system: ChatMessage[] = prompt.system === '' ? [] : [{ role: 'system', content: prompt.system }];
  const thinking = THINKING[prompt.thinking];
  const variables = thinking === undefined ? {} : { enable_thinking: thinking };
  return (text) => tokenizer.applyChatTemplate([...system, { role: 'user', content: text }], { addGenerationPrompt: true, variables });
}
