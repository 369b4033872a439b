// The option tables of docs/*.md, generated from the schemas: every block between
// `<!-- options:NAME -->` and `<!-- /options:NAME -->` is rewritten by `node scripts/option-docs.js`
// (after `npx tsc -p tsconfig.json`); test/option-docs.test.ts fails when a table drifts.
import { PACK_GROUPS_OPTIONS } from './data/math.js';
import { REC_EVAL_OPTIONS } from './eval/metrics.js';
import { REPORT_OPTIONS } from './eval/report.js';
import { KL_LOSS_OPTIONS } from './kernels/kl-loss.js';
import { BPE_TRAIN_OPTIONS } from './policy/bpe-train.js';
import { BUILTIN_OPTIONS, GENERATE_OWN_OPTIONS, OPTIMIZER_OPTIONS } from './policy/options.js';
import { MOVIES_MULTI_OPTIONS } from './data/movies-multi.js';
import { SAMPLER_OPTIONS } from './data/samplers.js';
import { CCR_REWARD_OPTIONS } from './rewards/ccr.js';
import { CCR_PACK_OPTIONS } from './rewards/ccr-pack.js';
import { RANK_REWARD_OPTIONS } from './rewards/recommend.js';
import { VERIFY_OPTIONS } from './rewards/verify/index.js';
import { RECIPES } from './trainer/recipes.js';
import { TRAINER_OPTIONS } from './trainer/config.js';
import { SFT_OPTIONS } from './trainer/sft.js';
import { GROUP_ADVANTAGE_OPTIONS } from './options/advantages.js';
import { MATMUL_OPTIONS } from './options/gemm.js';
import { PROMPT_OPTIONS } from './options/prompt.js';
import { LINEAR_LOGPROB_BACKWARD_OPTIONS, LOGPROB_BACKWARD_OPTIONS } from './options/logprob.js';
import { LORA_START_OPTIONS } from './options/lora.js';
import { REMOTE_OPTIONS, REMOTE_SAMPLING_OPTIONS } from './rollout/options.js';
import { LOSS_OPTIONS } from './options/loss.js';
import { SAMPLING_OPTIONS } from './options/sampling.js';
import type { Field, Schema } from './options/schema.js';
import { TOKEN_ADVANTAGE_OPTIONS } from './options/token-advantages.js';

/** Named values that override the defaults (the recipes over the trainer defaults), shown beside each default. */
interface Variant {
  readonly name: string;
  readonly values: object;
}

/** Every documented option object by table name (the name in its docs markers). */
export const OPTION_TABLES: Readonly<Record<string, Schema>> = {
  loss: LOSS_OPTIONS, groupAdvantages: GROUP_ADVANTAGE_OPTIONS, tokenAdvantages: TOKEN_ADVANTAGE_OPTIONS, sampling: SAMPLING_OPTIONS,
  logprobs: LOGPROB_BACKWARD_OPTIONS, linearLogprobs: LINEAR_LOGPROB_BACKWARD_OPTIONS, matmul: MATMUL_OPTIONS,
  verify: VERIFY_OPTIONS, ccrReward: CCR_REWARD_OPTIONS, packProblems: CCR_PACK_OPTIONS, packGroups: PACK_GROUPS_OPTIONS,
  rankRewards: RANK_REWARD_OPTIONS, sampler: SAMPLER_OPTIONS, trainer: TRAINER_OPTIONS, klLoss: KL_LOSS_OPTIONS,
  moviesMulti: MOVIES_MULTI_OPTIONS, evaluation: REC_EVAL_OPTIONS, generate: GENERATE_OWN_OPTIONS, optimizer: OPTIMIZER_OPTIONS,
  builtinPolicy: BUILTIN_OPTIONS, trainBpe: BPE_TRAIN_OPTIONS, report: REPORT_OPTIONS, prompt: PROMPT_OPTIONS, sft: SFT_OPTIONS,
  lora: LORA_START_OPTIONS, remoteRollouts: REMOTE_OPTIONS, remoteSampling: REMOTE_SAMPLING_OPTIONS,
};

/** The trainer's defaults are shown with the recipes that change them. */
const VARIANTS: Readonly<Record<string, readonly Variant[]>> = {
  trainer: Object.values(RECIPES).map((r) => ({ name: r.name, values: r.defaults })),
};

const cell = (text: string) => text.replace(/\|/g, '\\|');

function valueText(value: unknown): string {
  if (value === undefined) return 'none';
  if (Array.isArray(value)) return `\`[${value.join(', ')}]\``;
  return `\`${typeof value === 'number' ? String(value) : JSON.stringify(value)}\``;
}

function at(values: object, path: string): unknown {
  return path.split('.').reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], values);
}

/** `160 (ccr: 192, grpo: 96)`: the default, then each differing variant value with the variants that set it. */
function defaultText(field: Field<unknown>, path: string, variants: readonly Variant[]): string {
  if (field.defaultDoc !== undefined) return field.defaultDoc;
  const byValue = new Map<string, string[]>();
  for (const v of variants) {
    const value = at(v.values, path);
    if (value === undefined || value === field.default) continue;
    const text = valueText(value);
    byValue.set(text, [...(byValue.get(text) ?? []), v.name]);
  }
  const others = [...byValue].map(([text, names]) => `${names.join(', ')}: ${text}`);
  return others.length ? `${valueText(field.default)} (${others.join('; ')})` : valueText(field.default);
}

function rows(schema: Schema, prefix: string, variants: readonly Variant[]): string[] {
  return Object.entries(schema).flatMap(([key, field]) => {
    const path = prefix ? `${prefix}.${key}` : key;
    if (field.schema) return rows(field.schema, path, variants);
    return [`| \`${path}\` | ${cell(field.type)} | ${cell(defaultText(field, path, variants))} | ${cell(field.doc)} |`];
  });
}

/** The markdown table of one schema. */
export function optionTable(name: string): string {
  const schema = OPTION_TABLES[name];
  if (!schema) throw new Error(`docs: unknown option table "${name}"; known: ${Object.keys(OPTION_TABLES).join(', ')}`);
  return [
    `<!-- generated by \`node scripts/option-docs.js\` from the schema of "${name}" (lib/option-tables.ts): edit the schema, not this table -->`,
    '| option | type | default | description |',
    '|---|---|---|---|',
    ...rows(schema, '', VARIANTS[name] ?? []),
  ].join('\n');
}

const BLOCK = /<!-- options:(\w+) -->\n[\s\S]*?<!-- \/options:\1 -->/g;

/** `markdown` with every option block rewritten from its schema. */
export function renderOptionBlocks(markdown: string): string {
  return markdown.replace(BLOCK, (_, name: string) => `<!-- options:${name} -->\n${optionTable(name)}\n<!-- /options:${name} -->`);
}
