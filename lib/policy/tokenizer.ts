// Hugging Face tokenizer.json through @huggingface/tokenizers, with character offsets per token
// (that library has none, so they come from decoding growing prefixes), and chat templates from
// tokenizer_config.json rendered as transformers renders them (chat-template.ts).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Tokenizer as HfTokenizer } from '@huggingface/tokenizers';
import { GrpoError } from '../errors.js';
import { readUserJson } from '../user-files.js';
import { byteToUnicode } from './bpe-train.js';
import { ChatTemplate, specialTokensOf, tokenText, type ChatMessage, type ChatTemplateOptions } from './chat-template.js';

export type { ChatMessage, ChatTemplateOptions } from './chat-template.js';

/** Token ids and, per token, the [start, end) character span it decodes to. */
export interface Encoded {
  ids: Int32Array;
  /** offsets [tokens, 2]: start and end of token i at 2i, 2i + 1 */
  offsets: Int32Array;
}

type Json = Record<string, unknown>;

export class Tokenizer {
  readonly vocabSize: number;
  readonly eosTokenId: number | undefined;
  readonly bosTokenId: number | undefined;
  private readonly inner: HfTokenizer;
  private readonly chatTemplate: string | undefined;
  private compiledTemplate: ChatTemplate | undefined;
  private readonly config: Json;
  private readonly json: Json;
  /** Printable character → byte, when the decoder is ByteLevel. */
  private readonly byteTable: Map<string, number> | undefined;

  /** From the parsed tokenizer.json and (optionally) tokenizer_config.json. */
  constructor(tokenizerJson: Json, tokenizerConfig: Json = {}) {
    try {
      this.inner = new HfTokenizer(tokenizerJson, tokenizerConfig);
    } catch (error) {
      throw new GrpoError('GRPO_DATA_FORMAT', `tokenizer.json could not be loaded: ${(error as Error).message}`, { cause: error });
    }
    this.config = tokenizerConfig;
    this.json = tokenizerJson;
    this.byteTable = (tokenizerJson.decoder as Json | null)?.type === 'ByteLevel' ? new Map(byteToUnicode().map((c, b) => [c, b])) : undefined;
    this.chatTemplate = typeof tokenizerConfig.chat_template === 'string' ? tokenizerConfig.chat_template : undefined;
    this.vocabSize = vocabSizeOf(tokenizerJson);
    this.eosTokenId = this.idOf(tokenizerConfig.eos_token);
    this.bosTokenId = this.idOf(tokenizerConfig.bos_token);
  }

  /** Loads tokenizer.json (and tokenizer_config.json when present) from a folder. */
  static async fromFolder(dir: string): Promise<Tokenizer> {
    const json = await readJsonObject(join(dir, 'tokenizer.json'), 'a Hugging Face tokenizer.json');
    const configPath = join(dir, 'tokenizer_config.json');
    const config = existsSync(configPath) ? await readJsonObject(configPath, 'a Hugging Face tokenizer_config.json') : {};
    return new Tokenizer(json, config);
  }

  /** The tokenizer.json and tokenizer_config.json this tokenizer was built from (saved beside a checkpoint). */
  toJson(): { tokenizer: Json; config: Json } {
    return { tokenizer: this.json, config: this.config };
  }

  /** Token ids of `text` with the character span of each token. */
  encode(text: string, options: { addSpecialTokens?: boolean } = {}): Encoded {
    const ids = Int32Array.from(this.inner.encode(text, { add_special_tokens: options.addSpecialTokens ?? false }).ids);
    return { ids, offsets: this.offsets(ids) };
  }

  decode(ids: ArrayLike<number>, options: { skipSpecialTokens?: boolean } = {}): string {
    if (ids.length === 0) return '';
    return this.inner.decode(Array.from(ids), { skip_special_tokens: options.skipSpecialTokens ?? false });
  }

  /**
   * offsets [tokens, 2] in decode(ids): token i spans the characters its bytes complete. A token that
   * ends inside a multi-byte character gets an empty span; the token completing it covers it.
   * Byte-level tokenizers take a linear path; others (or a decode that rewrites text) decode prefixes.
   */
  offsets(ids: ArrayLike<number>): Int32Array {
    const text = this.decode(ids);
    const fast = this.byteTable ? this.byteLevelOffsets(ids, this.byteTable) : undefined;
    return fast && (fast.length === 0 || fast[fast.length - 1] === text.length) ? fast : this.prefixOffsets(ids, text);
  }

  private byteLevelOffsets(ids: ArrayLike<number>, table: Map<string, number>): Int32Array | undefined {
    const out = new Int32Array(2 * ids.length);
    const stream = new TextDecoder('utf-8', { fatal: false });
    const added = this.inner.get_added_tokens_decoder();
    let at = 0;
    for (let i = 0; i < ids.length; i++) {
      const token = this.inner.id_to_token(ids[i]);
      if (token === undefined) return undefined;
      const bytes = added.has(ids[i]) ? new TextEncoder().encode(token) : Uint8Array.from([...token].map((c: string) => table.get(c) ?? 0));
      out[2 * i] = at;
      at += stream.decode(bytes, { stream: i + 1 < ids.length }).length;
      out[2 * i + 1] = at;
    }
    return out;
  }

  /** Token i ends where decode(ids[0..i]) stops agreeing with decode(ids): an unfinished character (U+FFFD) or a clean-up that the next token changes. */
  private prefixOffsets(ids: ArrayLike<number>, text: string): Int32Array {
    const out = new Int32Array(2 * ids.length);
    const all = Array.from(ids);
    let previous = 0;
    for (let i = 0; i < all.length; i++) {
      const end = i + 1 === all.length ? text.length : Math.max(previous, commonPrefixLength(this.decode(all.slice(0, i + 1)), text));
      out[2 * i] = previous;
      out[2 * i + 1] = end;
      previous = end;
    }
    return out;
  }

  /** The id of a token string, or undefined. */
  tokenId(token: string): number | undefined {
    return this.inner.token_to_id(token);
  }

  /** Whether tokenizer_config.json has a chat_template. */
  get hasChatTemplate(): boolean {
    return this.chatTemplate !== undefined;
  }

  /** Renders the chat template of tokenizer_config.json (parsed on first use) as transformers' apply_chat_template(tokenize=False). */
  applyChatTemplate(messages: readonly ChatMessage[], options: ChatTemplateOptions = {}): string {
    if (!this.chatTemplate) throw new GrpoError('GRPO_UNSUPPORTED', 'this tokenizer has no chat_template in tokenizer_config.json');
    this.compiledTemplate ??= new ChatTemplate(this.chatTemplate, specialTokensOf(this.config));
    return this.compiledTemplate.render(messages, options);
  }

  private idOf(token: unknown): number | undefined {
    const text = tokenText(token);
    return text === undefined ? undefined : this.inner.token_to_id(text);
  }
}

function commonPrefixLength(a: string, b: string): number {
  let n = 0;
  while (n < a.length && n < b.length && a.charCodeAt(n) === b.charCodeAt(n)) n++;
  return n;
}

/** One more than the largest id of the vocab and the added tokens (a loop: a 150k-token vocab overflows `Math.max(...ids)`). */
function vocabSizeOf(json: Json): number {
  const vocab = (json.model as Json | null | undefined)?.vocab;
  let size = Array.isArray(vocab) ? vocab.length : 0;
  const grow = (id: unknown) => {
    if (typeof id === 'number' && id >= size) size = id + 1;
  };
  if (vocab && typeof vocab === 'object' && !Array.isArray(vocab)) for (const id of Object.values(vocab)) grow(id);
  if (Array.isArray(json.added_tokens)) for (const t of json.added_tokens) grow((t as Json | null)?.id);
  return size;
}

async function readJsonObject(path: string, expected: string): Promise<Json> {
  const json = await readUserJson(path, expected);
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new GrpoError('GRPO_DATA_FORMAT', `${path}: expected a JSON object (${expected})`);
  }
  return json as Json;
}
