// The option tables of docs/*.md, generated from the schemas: every block between
// `<!-- options:NAME -->` and `<!-- /options:NAME -->` is rewritten by `node scripts/option-docs.js`
// (after `npx tsc -p tsconfig.json`); test/option-docs.test.ts fails when a table drifts.
import { PACK_GROUPS_OPTIONS } from '../data/math.js';
import { SAMPLER_OPTIONS } from '../data/samplers.js';
import { CCR_REWARD_OPTIONS } from '../rewards/ccr.js';
import { CCR_PACK_OPTIONS } from '../rewards/ccr-pack.js';
import { RANK_REWARD_OPTIONS } from '../rewards/recommend.js';
import { VERIFY_OPTIONS } from '../rewards/verify/index.js';
import { RECIPES } from '../trainer/recipes.js';
import { TRAINER_OPTIONS } from '../trainer/config.js';
import { GROUP_ADVANTAGE_OPTIONS } from './advantages.js';
import { MATMUL_OPTIONS } from './gemm.js';
import { LINEAR_LOGPROB_BACKWARD_OPTIONS, LOGPROB_BACKWARD_OPTIONS } from './logprob.js';
import { LOSS_OPTIONS } from './loss.js';
import { SAMPLING_OPTIONS } from './sampling.js';
import type { Field, Schema } from './schema.js';
import { TOKEN_ADVANTAGE_OPTIONS } from './token-advantages.js';

/** Named values that override the defaults (the recipes over the trainer defaults), shown beside each default. */
interface Variant {
  readonly name: string;
  readonly values: object;
}

interface OptionTable {
  readonly schema: Schema;
  /** Where the schema is declared (named in the generated block). */
  readonly source: string;
  readonly variants?: readonly Variant[];
}

export const OPTION_TABLES: Readonly<Record<string, OptionTable>> = {
  loss: { schema: LOSS_OPTIONS, source: 'lib/options/loss.ts' },
  groupAdvantages: { schema: GROUP_ADVANTAGE_OPTIONS, source: 'lib/options/advantages.ts' },
  tokenAdvantages: { schema: TOKEN_ADVANTAGE_OPTIONS, source: 'lib/options/token-advantages.ts' },
  sampling: { schema: SAMPLING_OPTIONS, source: 'lib/options/sampling.ts' },
  logprobs: { schema: LOGPROB_BACKWARD_OPTIONS, source: 'lib/options/logprob.ts' },
  linearLogprobs: { schema: LINEAR_LOGPROB_BACKWARD_OPTIONS, source: 'lib/options/logprob.ts' },
  matmul: { schema: MATMUL_OPTIONS, source: 'lib/options/gemm.ts' },
  verify: { schema: VERIFY_OPTIONS, source: 'lib/rewards/verify/index.ts' },
  ccrReward: { schema: CCR_REWARD_OPTIONS, source: 'lib/rewards/ccr.ts' },
  packProblems: { schema: CCR_PACK_OPTIONS, source: 'lib/rewards/ccr-pack.ts' },
  packGroups: { schema: PACK_GROUPS_OPTIONS, source: 'lib/data/math.ts' },
  rankRewards: { schema: RANK_REWARD_OPTIONS, source: 'lib/rewards/recommend.ts' },
  sampler: { schema: SAMPLER_OPTIONS, source: 'lib/data/samplers.ts' },
  trainer: {
    schema: TRAINER_OPTIONS, source: 'lib/trainer/config.ts',
    variants: Object.values(RECIPES).map((r) => ({ name: r.name, values: r.defaults })),
  },
};

const cell = (text: string) => text.replace(/\|/g, '\\|');

function valueText(value: unknown): string {
  if (value === undefined) return 'none';
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
  const table = OPTION_TABLES[name];
  if (!table) throw new Error(`docs: unknown option table "${name}"; known: ${Object.keys(OPTION_TABLES).join(', ')}`);
  return [
    `<!-- generated from ${table.source} by \`node scripts/option-docs.js\`: edit the schema, not this table -->`,
    '| option | type | default | description |',
    '|---|---|---|---|',
    ...rows(table.schema, '', table.variants ?? []),
  ].join('\n');
}

const BLOCK = /<!-- options:(\w+) -->\n[\s\S]*?<!-- \/options:\1 -->/g;

/** `markdown` with every option block rewritten from its schema. */
export function renderOptionBlocks(markdown: string): string {
  return markdown.replace(BLOCK, (_, name: string) => `<!-- options:${name} -->\n${optionTable(name)}\n<!-- /options:${name} -->`);
}
