// SFT examples as token ids: the prompt exactly as RL prompts the policy (promptFormatter, then encodePrompt), and
// the target as the completion the loss covers. Bare prompts (no chat template): the target's tokens then EOS. With a
// chat template: what the template writes after the generation prompt for the target as the assistant's reply, the
// target and its end of turn (e.g. `<|im_end|>\n`), with no EOS added, as TRL's SFTTrainer does for a conversation.
import { GrpoError } from '../errors.js';
import type { Tokenizer } from '../policy/tokenizer.js';
import type { PromptConfig } from './config.js';
import { promptFormatter, replyFormatter } from './prompt-template.js';
import { encodePrompt } from './rollout.js';

/** One supervised example as text. */
export interface SftExample {
  prompt: string;
  target: string;
}

/** One supervised example as ids: the loss covers `completion` only. */
export interface EncodedSftExample {
  prompt: Int32Array;
  completion: Int32Array;
}

/** The encoder of examples for a policy of `maxPositions` positions; a completion is cut to fit after its prompt. */
export function sftEncoder(tokenizer: Tokenizer, prompt: PromptConfig, maxPositions: number): (e: SftExample) => EncodedSftExample {
  const format = promptFormatter(tokenizer, prompt);
  const reply = replyFormatter(tokenizer, prompt);
  const eos = tokenizer.eosTokenId;
  if (!reply && eos === undefined) throw new GrpoError('GRPO_INVALID_ARGUMENT', 'SFT needs a tokenizer with an EOS token (targets end with it)');
  return (e) => {
    const ids = encodePrompt(tokenizer, format(e.prompt));
    const room = Math.max(1, maxPositions - ids.length);
    if (reply) return { prompt: ids, completion: tokenizer.encode(reply(e.prompt, e.target)).ids.slice(0, room) };
    const target = tokenizer.encode(e.target).ids;
    return { prompt: ids, completion: Int32Array.from([...target.subarray(0, room - 1), eos as number]) };
  };
}
