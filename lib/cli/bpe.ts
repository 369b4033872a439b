// The demo's tokenizer: a byte-level BPE trained on the bundled corpora with the policy's trainer
// (lib/policy/bpe-train.ts), with one special token that ends completions and starts prompts.
import { trainBpe as trainTokenizerJson } from '../policy/bpe-train.js';
import { Tokenizer } from '../policy/tokenizer.js';

/** Special token that ends every completion (EOS) and starts every prompt (BOS). */
export const END_OF_TEXT = '<|endoftext|>';

/** A byte-level BPE of at most `vocabSize` tokens (256 bytes + merges + END_OF_TEXT) trained on `texts`. */
export function trainBpe(texts: Iterable<string>, vocabSize: number): Tokenizer {
  const { tokenizer, config } = trainTokenizerJson(texts, { vocabSize, specialTokens: [END_OF_TEXT], minFrequency: 1 });
  return new Tokenizer(tokenizer, { ...config, bos_token: END_OF_TEXT });
}
