// A byte-level BPE tokenizer.json as GGUF's tokenizer metadata (the Keys.Tokenizer names of llama.cpp's
// gguf-py/gguf/constants.py, filled as convert_hf_to_gguf.py's _set_vocab_gpt2 fills them): tokenizer.ggml.model
// "gpt2", tokenizer.ggml.pre naming the pre-tokenizer's split (src/llama-vocab.cpp knows each name's regex), the
// tokens by id (byte-level strings as in the vocab, added tokens as written, "[PAD<id>]" up to the model's
// vocabulary), their token_type (gguf-py's TokenType: 1 normal, 3 control for special added tokens, 4 user-defined
// for other added tokens, 5 unused for padding), the merges as "left right", bos/eos ids, add_bos_token, and the
// chat template. Other tokenizers (SentencePiece-style Llama 2 / Mistral, WordPiece) are refused, naming why.
import { GrpoError } from '../errors.js';
import { tokenText } from '../policy/chat-template.js';
import type { Tokenizer } from '../policy/tokenizer.js';
import type { GgufValue } from './gguf-file.js';

type Json = Record<string, unknown>;

/** The split regexes of the byte-level pre-tokenizers whose llama.cpp names are known (tokenizer.json spelling). */
const SPLITS: Record<string, string> = {
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+": 'qwen2',
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+": 'llama-bpe',
};

export const TOKEN_TYPES = { normal: 1, unknown: 2, control: 3, userDefined: 4, unused: 5, byte: 6 } as const;

const unsupported = (what: string) => new GrpoError('GRPO_UNSUPPORTED', `GGUF export: ${what}`);

const isByteLevel = (p: Json | undefined, regex: boolean) => p?.type === 'ByteLevel' && p.add_prefix_space !== true && (p.use_regex ?? true) === regex;

/** llama.cpp's tokenizer.ggml.pre for a tokenizer.json pre_tokenizer. */
export function preTokenizerName(pre: unknown): string {
  const p = pre as Json | null | undefined;
  if (p && isByteLevel(p, true)) return 'gpt-2';
  const steps = p?.type === 'Sequence' && Array.isArray(p.pretokenizers) ? (p.pretokenizers as Json[]) : [];
  const split = steps[0], pattern = (split?.pattern as Json | undefined)?.Regex;
  const name = steps.length === 2 && split?.type === 'Split' && typeof pattern === 'string' ? SPLITS[pattern] : undefined;
  if (name && isByteLevel(steps[1], false)) return name;
  throw unsupported(`the pre_tokenizer ${JSON.stringify(pre).slice(0, 200)} has no llama.cpp pre-tokenizer name here (known: GPT-2's ByteLevel, Qwen2's and Llama 3's splits)`);
}

/** The tokens by id, `vocabSize` long: the vocab, the added tokens, then "[PAD<id>]" for ids neither uses. */
function tokenList(json: Json, vocabSize: number): { tokens: string[]; types: number[] } {
  const tokens: (string | undefined)[] = new Array(vocabSize).fill(undefined);
  const types: number[] = new Array(vocabSize).fill(TOKEN_TYPES.normal);
  const put = (id: unknown, text: string, type: number) => {
    if (!Number.isInteger(id) || (id as number) < 0 || (id as number) >= vocabSize) {
      throw new GrpoError('GRPO_INDEX_RANGE', `GGUF export: token ${JSON.stringify(text)} has id ${JSON.stringify(id)} outside the model's ${vocabSize} ids`);
    }
    tokens[id as number] = text;
    types[id as number] = type;
  };
  for (const [text, id] of Object.entries((json.model as Json).vocab as Json)) put(id, text, TOKEN_TYPES.normal);
  for (const t of (json.added_tokens as Json[] | undefined) ?? []) put(t.id, String(t.content), t.special ? TOKEN_TYPES.control : TOKEN_TYPES.userDefined);
  for (let id = 0; id < vocabSize; id++) {
    if (tokens[id] === undefined) {
      tokens[id] = `[PAD${id}]`;
      types[id] = TOKEN_TYPES.unused;
    }
  }
  return { tokens: tokens as string[], types };
}

/** Merges as "left right" (tokenizer.json writes them so, or as [left, right] pairs). */
function mergeList(model: Json): string[] {
  const merges = Array.isArray(model.merges) ? model.merges : [];
  return merges.map((m) => (Array.isArray(m) ? m.join(' ') : String(m)));
}

/** Whether the post-processor puts a special token before the text (Llama 3's TemplateProcessing adds BOS). */
function addsBos(json: Json): boolean {
  const single = (json.post_processor as Json | null | undefined)?.single;
  return Array.isArray(single) && single.length > 0 && (single[0] as Json).SpecialToken !== undefined;
}

/** The tokenizer.* key-values of `tokenizer` for a model of `vocabSize` ids. */
export function tokenizerMetadata(tokenizer: Tokenizer, vocabSize: number): [string, GgufValue][] {
  const { tokenizer: json, config } = tokenizer.toJson();
  const model = json.model as Json | undefined;
  if (model?.type !== 'BPE' || (json.decoder as Json | null)?.type !== 'ByteLevel') {
    throw unsupported(`only byte-level BPE tokenizers are exported (tokenizer.ggml.model "gpt2"); this one is ${String(model?.type)} with a ${String((json.decoder as Json | null)?.type)} decoder`);
  }
  const pre = preTokenizerName(json.pre_tokenizer);
  const { tokens, types } = tokenList(json, vocabSize);
  const out: [string, GgufValue][] = [
    ['tokenizer.ggml.model', { type: 'string', value: 'gpt2' }],
    ['tokenizer.ggml.pre', { type: 'string', value: pre }],
    ['tokenizer.ggml.tokens', { type: 'array', itemType: 'string', values: tokens }],
    ['tokenizer.ggml.token_type', { type: 'array', itemType: 'int32', values: types }],
    ['tokenizer.ggml.merges', { type: 'array', itemType: 'string', values: mergeList(model) }],
  ];
  if (tokenizer.bosTokenId !== undefined) out.push(['tokenizer.ggml.bos_token_id', { type: 'uint32', value: tokenizer.bosTokenId }]);
  if (tokenizer.eosTokenId !== undefined) out.push(['tokenizer.ggml.eos_token_id', { type: 'uint32', value: tokenizer.eosTokenId }]);
  const padText = tokenText(config.pad_token), pad = padText === undefined ? undefined : tokenizer.tokenId(padText);
  if (pad !== undefined) out.push(['tokenizer.ggml.padding_token_id', { type: 'uint32', value: pad }]);
  out.push(['tokenizer.ggml.add_bos_token', { type: 'bool', value: addsBos(json) }]);
  if (typeof config.chat_template === 'string') out.push(['tokenizer.chat_template', { type: 'string', value: config.chat_template }]);
  return out;
}
