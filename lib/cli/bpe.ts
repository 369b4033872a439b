// A small byte-level BPE trained on the bundled corpora, saved as a Hugging Face tokenizer.json that
// the policy's Tokenizer loads (GPT-2 byte alphabet and pre-tokenizer, greedy most-frequent merges).
import { Tokenizer } from '../policy/tokenizer.js';

/** Special token that ends every completion (EOS) and starts every prompt (BOS). */
export const END_OF_TEXT = '<|endoftext|>';

const PRE_TOKENIZER = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

/** GPT-2's reversible map from bytes to printable characters. */
function byteAlphabet(): string[] {
  const printable = (from: string, to: string) => Array.from({ length: to.charCodeAt(0) - from.charCodeAt(0) + 1 }, (_, i) => from.charCodeAt(0) + i);
  const direct = new Set([...printable('!', '~'), ...printable('¡', '¬'), ...printable('®', 'ÿ')]);
  const out: string[] = [];
  let extra = 0;
  for (let b = 0; b < 256; b++) out[b] = String.fromCharCode(direct.has(b) ? b : 256 + extra++);
  return out;
}

/** Pre-tokenized words of the corpus as symbol-id sequences, with their counts. */
function countWords(texts: Iterable<string>, alphabet: string[]): Map<string, number> {
  const encoder = new TextEncoder();
  const counts = new Map<string, number>();
  for (const text of texts) {
    for (const word of text.match(PRE_TOKENIZER) ?? []) {
      const mapped = Array.from(encoder.encode(word), (b) => alphabet[b]).join('');
      counts.set(mapped, (counts.get(mapped) ?? 0) + 1);
    }
  }
  return counts;
}

/** The most frequent adjacent pair (ties: smallest pair key, so training is deterministic). */
function bestPair(words: Int32Array[], counts: number[]): [number, number] | null {
  const pairs = new Map<number, number>();
  words.forEach((w, i) => {
    for (let j = 0; j + 1 < w.length; j++) {
      const key = w[j] * 65536 + w[j + 1];
      pairs.set(key, (pairs.get(key) ?? 0) + counts[i]);
    }
  });
  let best = -1, bestCount = 1;
  for (const [key, n] of pairs) if (n > bestCount || (n === bestCount && best >= 0 && key < best)) [best, bestCount] = [key, n];
  return best < 0 ? null : [Math.floor(best / 65536), best % 65536];
}

function mergeWord(w: Int32Array, a: number, b: number, merged: number): Int32Array {
  const out: number[] = [];
  for (let j = 0; j < w.length; j++) {
    if (j + 1 < w.length && w[j] === a && w[j + 1] === b) {
      out.push(merged);
      j++;
    } else out.push(w[j]);
  }
  return Int32Array.from(out);
}

/**
 * Trains a byte-level BPE with at most `vocabSize` tokens (1 special + 256 bytes + merges) on `texts`
 * and returns the tokenizer (EOS = BOS = `<|endoftext|>`, id 0).
 */
export function trainBpe(texts: Iterable<string>, vocabSize: number): Tokenizer {
  const alphabet = byteAlphabet();
  const symbols = [END_OF_TEXT, ...alphabet];
  const idOf = new Map(symbols.map((s, i) => [s, i]));
  const counted = countWords(texts, alphabet);
  let words: Int32Array[] = [...counted.keys()].map((w) => Int32Array.from(Array.from(w), (c) => idOf.get(c)!));
  const counts = [...counted.values()];
  const merges: string[] = [];
  while (symbols.length < vocabSize) {
    const pair = bestPair(words, counts);
    if (!pair) break;
    const [a, b] = pair;
    merges.push(`${symbols[a]} ${symbols[b]}`);
    symbols.push(symbols[a] + symbols[b]);
    words = words.map((w) => mergeWord(w, a, b, symbols.length - 1));
  }
  return new Tokenizer(tokenizerJson(symbols, merges), { eos_token: END_OF_TEXT, bos_token: END_OF_TEXT });
}

function tokenizerJson(symbols: string[], merges: string[]): Record<string, unknown> {
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [{ id: 0, content: END_OF_TEXT, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }],
    normalizer: null,
    pre_tokenizer: byteLevel,
    post_processor: null,
    decoder: byteLevel,
    model: {
      type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null,
      fuse_unk: false, byte_fallback: false, ignore_merges: false,
      vocab: Object.fromEntries(symbols.map((s, i) => [s, i])),
      merges,
    },
  };
}
