// How a task's prompt text reaches the policy (lib/trainer/prompt-template.ts), declared once.
import { boolean, choice, string } from './schema.js';

export const THINKING_MODES = ['template', 'on', 'off'] as const;

export const PROMPT_OPTIONS = {
  chatTemplate: boolean(true, 'Render each prompt as a user message through the tokenizer\'s `chat_template` (with the assistant header after it), '
    + 'as transformers\' `apply_chat_template(add_generation_prompt=True)` does, when the tokenizer has one; `false` = the bare prompt text.'),
  system: string('', 'System message before each templated prompt; "" = none (the template\'s own default, e.g. Qwen2.5\'s). Needs a chat template.'),
  thinking: choice(THINKING_MODES, 'template', 'Templates with a thinking switch (Qwen3): `"on"` / `"off"` pass `enable_thinking` true / false; '
    + '`"template"` passes nothing (Qwen3 then thinks).'),
};
