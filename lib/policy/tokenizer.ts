// Hugging Face tokenizer.json through @huggingface/tokenizers, with character offsets per token
// (that library has none, so they come from decoding growing prefixes), and chat templates from
// tokenizer_config.json rendered with @huggingface/jinja.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Template } from '@huggingface/jinja';
import { Tokenizer as HfTokenizer } from '@huggingface/tokenizers';
import { GrpoError } from '../errors.js';
import { readUserJson } from '../user-files.js';
import { byteToUnicode } from './bpe-train.js';

/** One chat message for {@link Tokenizer.applyChatTemplate}. */
export interface ChatMessage {
  role: string;
  content: string;
}

/** Token ids and, per token, the [start, end) character span it decodes to. */
export interface Encoded {
  ids: Int32Array;
  /** offsets [tokens, 2]: start and end of token i at 2i, 2i + 1 */
  offsets: Int32Array;
}

type Json = Record<string, unknown>;

const REPLACEMENT = '\uFFFD';

export class Tokenizer {
  readonly vocabSize: number;
  readonly eosTokenId: number | undefined;
  readonly bosTokenId: number | undefined;
  private readonly inner: HfTokenizer;
  private readonly chatTemplate: string | undefined;
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
    return fast && (fast.length === 0 || fast[fast.length - 1] === text.length) ? fast : this.prefixOffsets(ids);
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

  private prefixOffsets(ids: ArrayLike<number>): Int32Array {
    const out = new Int32Array(2 * ids.length);
    const all = Array.from(ids);
    let previous = 0;
    for (let i = 0; i < all.length; i++) {
      let text = this.decode(all.slice(0, i + 1));
      if (i + 1 < all.length) while (text.endsWith(REPLACEMENT)) text = text.slice(0, -1);
      const end = Math.max(previous, text.length);
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

  /** Renders the chat template of tokenizer_config.json. */
  applyChatTemplate(messages: readonly ChatMessage[], options: { addGenerationPrompt?: boolean } = {}): string {
    if (!this.chatTemplate) throw new GrpoError('GRPO_UNSUPPORTED', 'this tokenizer has no chat_template in tokenizer_config.json');
    let template: Template;
    try {
      template = new Template(this.chatTemplate);
    } catch (error) {
      throw new GrpoError('GRPO_DATA_FORMAT', `tokenizer_config.json: chat_template does not parse (${(error as Error).message})`, { cause: error });
    }
    try {
      return template.render({
        messages: messages.map((m) => ({ ...m })),
        add_generation_prompt: options.addGenerationPrompt ?? true,
        bos_token: tokenText(this.config.bos_token) ?? '',
        eos_token: tokenText(this.config.eos_token) ?? '',
      });
    } catch (error) {
      // e.g. a template's raise_exception("Conversation roles must alternate user/assistant")
      throw new GrpoError('GRPO_INVALID_ARGUMENT', `tokenizer_config.json: chat_template failed on these messages (${(error as Error).message})`, { cause: error });
    }
  }

  private idOf(token: unknown): number | undefined {
    const text = tokenText(token);
    return text === undefined ? undefined : this.inner.token_to_id(text);
  }
}

function tokenText(token: unknown): string | undefined {
  if (typeof token === 'string') return token;
  if (token && typeof token === 'object' && typeof (token as Json).content === 'string') return (token as Json).content as string;
  return undefined;
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
