// A small byte-level BPE trainer (GPT-2 style): text is split by the ByteLevel pre-tokenizer
// pattern, each piece becomes its bytes (mapped to printable characters), and the most frequent
// adjacent pair is merged until the vocabulary is full (ties: the lexicographically smallest pair).
// The result is a tokenizer.json that Tokenizer (and Hugging Face's libraries) read.
import { GrpoError } from '../errors.js';
import * as opt from '../options/schema.js';
import * as check from '../validate.js';

/** A list of strings, each checked (`trainBpe specialTokens[1]`). */
function specialTokensField(def: readonly string[], doc: string): opt.Field<readonly string[]> {
  return {
    type: 'strings', doc, default: def,
    read: (v, path, n) => {
      if (!Array.isArray(v)) throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${n.field(path)} to be an array of strings but received ${check.describe(v)}`);
      return v.map((s, i) => check.string(`${n.field(path)}[${i}]`, s));
    },
  };
}

/** Options of {@link trainBpe}. */
export const BPE_TRAIN_OPTIONS = {
  vocabSize: opt.integer(4096, 'Final vocabulary size, special tokens included (at least 256 + specials).', 256),
  specialTokens: specialTokensField(['<|endoftext|>', '<|im_start|>', '<|im_end|>'], 'Added as special tokens after the merges.'),
  minFrequency: opt.integer(2, 'Pairs seen fewer times than this are never merged.', 1),
};

export type BpeTrainOptions = opt.OptionsOf<typeof BPE_TRAIN_OPTIONS>;
export const BPE_DEFAULTS = opt.defaultsOf(BPE_TRAIN_OPTIONS);

/** The tokenizer.json and tokenizer_config.json of a trained tokenizer. */
export interface TrainedTokenizer {
  tokenizer: Record<string, unknown>;
  config: Record<string, unknown>;
}

// The ByteLevel pre-tokenizer's split pattern (GPT-2).
const PIECES = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

/** GPT-2's byte → printable character table (bytes that are printable map to themselves). */
export function byteToUnicode(): string[] {
  const keep = (b: number) => (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
  const table: string[] = [];
  let extra = 0;
  for (let b = 0; b < 256; b++) table[b] = String.fromCharCode(keep(b) ? b : 256 + extra++);
  return table;
}

interface Word {
  symbols: string[];
  count: number;
}

function countWords(texts: Iterable<string>, table: string[]): Word[] {
  const counts = new Map<string, number>();
  const encoder = new TextEncoder();
  for (const text of texts) {
    for (const piece of text.match(PIECES) ?? []) {
      const mapped = Array.from(encoder.encode(piece), (b) => table[b]).join('');
      counts.set(mapped, (counts.get(mapped) ?? 0) + 1);
    }
  }
  return [...counts].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([w, count]) => ({ symbols: Array.from(w), count }));
}

/** Pair statistics, updated word by word as merges happen. */
class PairStats {
  readonly counts = new Map<string, number>();
  readonly where = new Map<string, Set<number>>();

  add(word: Word, index: number, sign: 1 | -1): void {
    for (let i = 0; i + 1 < word.symbols.length; i++) {
      const key = `${word.symbols[i]} ${word.symbols[i + 1]}`;
      this.counts.set(key, (this.counts.get(key) ?? 0) + sign * word.count);
      if (sign > 0) {
        let set = this.where.get(key);
        if (!set) this.where.set(key, (set = new Set()));
        set.add(index);
      }
    }
  }

  best(minFrequency: number): string | undefined {
    let bestKey: string | undefined;
    let bestCount = minFrequency - 1;
    for (const [key, count] of this.counts) {
      if (count > bestCount || (count === bestCount && bestKey !== undefined && key < bestKey)) {
        bestKey = key;
        bestCount = count;
      }
    }
    return bestCount >= minFrequency ? bestKey : undefined;
  }
}

function mergeWord(symbols: string[], a: string, b: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < symbols.length; i++) {
    if (i + 1 < symbols.length && symbols[i] === a && symbols[i + 1] === b) {
      out.push(a + b);
      i++;
    } else {
      out.push(symbols[i]);
    }
  }
  return out;
}

/** Trains a byte-level BPE tokenizer on `texts`. */
export function trainBpe(texts: Iterable<string>, options: BpeTrainOptions = {}): TrainedTokenizer {
  const o = opt.checkOptions(BPE_TRAIN_OPTIONS, opt.kernelNaming('trainBpe'), options, BPE_DEFAULTS);
  const specials = o.specialTokens;
  // The floor of the vocabulary depends on the specials: 256 bytes plus one id each.
  const vocabSize = check.integer('trainBpe vocabSize', o.vocabSize, 256 + specials.length);
  const { minFrequency } = o;
  const table = byteToUnicode();
  const vocab = new Map<string, number>(table.map((c, b) => [c, b]));
  const words = countWords(texts, table);
  if (words.length === 0) throw new GrpoError('GRPO_INVALID_ARGUMENT', 'trainBpe needs at least one non-empty text');
  const stats = new PairStats();
  words.forEach((w, i) => stats.add(w, i, 1));
  const merges: string[] = [];
  while (vocab.size + specials.length < vocabSize) {
    const key = stats.best(minFrequency);
    if (key === undefined) break;
    const [a, b] = key.split(' ');
    for (const index of stats.where.get(key) ?? []) {
      const word = words[index];
      stats.add(word, index, -1);
      word.symbols = mergeWord(word.symbols, a, b);
      stats.add(word, index, 1);
    }
    stats.counts.delete(key);
    stats.where.delete(key);
    merges.push(key);
    if (!vocab.has(a + b)) vocab.set(a + b, vocab.size);
  }
  return assemble(vocab, merges, specials);
}

function assemble(vocab: Map<string, number>, merges: string[], specials: readonly string[]): TrainedTokenizer {
  const added = specials.map((content, i) => ({
    id: vocab.size + i, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true,
  }));
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
  const tokenizer = {
    version: '1.0', truncation: null, padding: null, added_tokens: added, normalizer: null, pre_tokenizer: byteLevel,
    post_processor: null, decoder: byteLevel,
    model: {
      type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null,
      fuse_unk: false, byte_fallback: false, vocab: Object.fromEntries(vocab), merges,
    },
  };
  const eos = specials[0];
  const config = {
    tokenizer_class: 'PreTrainedTokenizerFast', model_max_length: 2048, eos_token: eos ?? null, pad_token: eos ?? null,
    chat_template: specials.includes('<|im_start|>')
      ? "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
      : undefined,
  };
  return { tokenizer, config };
}

/**
 * A byte-level BPE of exactly `vocabSize` tokens (`specialTokens` included) without training, for real-size
 * vocabularies in tests and benchmarks: the 256 bytes (letters first), every byte pair, then letter triples (a pair
 * + a letter) until the size is reached (256 + 65,536 + 140,608 entries at most); the specials take the top ids.
 */
export function syntheticBpe(vocabSize: number, specialTokens: readonly string[] = BPE_DEFAULTS.specialTokens): TrainedTokenizer {
  const entries = vocabSize - specialTokens.length;
  const table = byteToUnicode();
  const letters = [...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'].map((c) => table[c.charCodeAt(0)]);
  const order = [...new Set([...letters, ...table])];
  const most = order.length + order.length ** 2 + letters.length ** 3;
  if (!Number.isInteger(entries) || entries < order.length || entries > most) {
    throw new GrpoError('GRPO_VALUE_RANGE', `syntheticBpe: expected vocabSize in [${order.length + specialTokens.length}, ${most + specialTokens.length}] but received ${vocabSize}`);
  }
  const vocab = new Map<string, number>(order.map((c, i) => [c, i]));
  const merges: string[] = [];
  const add = (left: string, right: string) => {
    vocab.set(left + right, vocab.size);
    merges.push(`${left} ${right}`);
  };
  for (const a of order) for (const b of order) if (vocab.size < entries) add(a, b);
  for (const a of letters) for (const b of letters) for (const c of letters) if (vocab.size < entries) add(a + b, c);
  return assemble(vocab, merges, specialTokens);
}
