// Renders a tokenizer_config.json chat_template with @huggingface/jinja in the context transformers gives it
// (src/transformers/utils/chat_template_utils.py, `_compile_jinja_template` and `render_jinja_template`):
// messages, tools and documents (None when absent), add_generation_prompt, the special-token strings,
// raise_exception, strftime_now, and the caller's extra variables (transformers' **kwargs, e.g. enable_thinking).
// The globals are ours, not Template.render's: its strftime_now names months in the process locale and keeps
// unknown directives, where Python's (C locale) gives "Dec" and formats every directive.
import { Environment, Interpreter, Template } from '@huggingface/jinja';
import { GrpoError } from '../errors.js';
import { rewriteUndefinedAttributeTests } from './jinja-compat.js';

/** One chat message: role and content, plus any field a template reads (tool_calls, reasoning_content, tool_call_id, …). */
export interface ChatMessage {
  role: string;
  content: string;
  [field: string]: unknown;
}

export interface ChatTemplateOptions {
  /** End with the header of an assistant turn (default true; transformers' default is false). */
  addGenerationPrompt?: boolean;
  /** Tool schemas (JSON objects) for templates with a tool branch. */
  tools?: readonly unknown[];
  /** Extra template variables, as transformers' apply_chat_template(**kwargs): `{ enable_thinking: false }`, `{ date_string: '26 Jul 2024' }`. */
  variables?: Record<string, unknown>;
}

/** The special tokens of transformers' special_tokens_map, by name, as strings. */
export type SpecialTokens = Record<string, string | string[]>;

const SPECIAL_TOKEN_NAMES = ['bos_token', 'eos_token', 'unk_token', 'sep_token', 'pad_token', 'cls_token', 'mask_token'];

/** special_tokens_map of a tokenizer_config.json: each named token's text and additional_special_tokens. */
export function specialTokensOf(config: Record<string, unknown>): SpecialTokens {
  const out: SpecialTokens = {};
  for (const name of SPECIAL_TOKEN_NAMES) {
    const text = tokenText(config[name]);
    if (text !== undefined) out[name] = text;
  }
  const extra = config.additional_special_tokens;
  if (Array.isArray(extra)) out.additional_special_tokens = extra.map(tokenText).filter((t): t is string => t !== undefined);
  return out;
}

/** A token of tokenizer_config.json: a string or an AddedToken object `{ content }`. */
export function tokenText(token: unknown): string | undefined {
  if (typeof token === 'string') return token;
  if (token && typeof token === 'object' && typeof (token as { content?: unknown }).content === 'string') return (token as { content: string }).content;
  return undefined;
}

/** A parsed chat template (parse once, render per prompt). */
export class ChatTemplate {
  private readonly template: Template;

  constructor(source: string, private readonly specialTokens: SpecialTokens) {
    try {
      this.template = new Template(source);
    } catch (error) {
      throw new GrpoError('GRPO_DATA_FORMAT', `tokenizer_config.json: chat_template does not parse (${(error as Error).message})`, { cause: error });
    }
    rewriteUndefinedAttributeTests(this.template.parsed);
  }

  render(messages: readonly ChatMessage[], options: ChatTemplateOptions = {}): string {
    const context = {
      ...JINJA_GLOBALS,
      ...this.specialTokens,
      ...options.variables,
      messages: messages.map((m) => ({ ...m })),
      tools: options.tools ?? null,
      documents: null,
      add_generation_prompt: options.addGenerationPrompt ?? true,
    };
    const env = new Environment();
    for (const [name, value] of Object.entries(context)) env.set(name, value);
    try {
      return new Interpreter(env).run(this.template.parsed).value as string;
    } catch (error) {
      // e.g. a template's raise_exception("Conversation roles must alternate user/assistant")
      throw new GrpoError('GRPO_INVALID_ARGUMENT', `tokenizer_config.json: chat_template failed on these messages (${(error as Error).message})`, { cause: error });
    }
  }
}

/** The globals of a jinja2 environment and of transformers' chat-template environment. */
const JINJA_GLOBALS = {
  true: true, false: false, none: null, True: true, False: false, None: null,
  range: (start: number, stop?: number, step = 1) => pythonRange(start, stop, step),
  raise_exception: (message: unknown) => {
    throw new Error(String(message));
  },
  strftime_now: (format: unknown) => strftime(new Date(), String(format)),
};

function pythonRange(start: number, stop: number | undefined, step: number): number[] {
  if (stop === undefined) [start, stop] = [0, start];
  if (step === 0) throw new Error('range() arg 3 must not be zero');
  const out: number[] = [];
  for (let i = start; step > 0 ? i < stop : i > stop; i += step) out.push(i);
  return out;
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** Python's datetime.strftime in local time, for the directives chat templates use (Llama-3.2: "%d %b %Y"). */
export function strftime(date: Date, format: string): string {
  const fields: Record<string, () => string> = {
    d: () => pad(date.getDate()), m: () => pad(date.getMonth() + 1), Y: () => String(date.getFullYear()), y: () => pad(date.getFullYear() % 100),
    b: () => MONTHS[date.getMonth()].slice(0, 3), B: () => MONTHS[date.getMonth()], a: () => DAYS[date.getDay()].slice(0, 3), A: () => DAYS[date.getDay()],
    H: () => pad(date.getHours()), M: () => pad(date.getMinutes()), S: () => pad(date.getSeconds()), '%': () => '%',
  };
  return format.replace(/%(.)/g, (_, d: string) => {
    const field = fields[d];
    if (!field) throw new Error(`strftime_now: unsupported directive %${d}`);
    return field();
  });
}
