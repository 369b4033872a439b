// Supervised fine-tuning before RL: (prompt, target) pairs from the bundled data in the exact prompt
// formats the recipes use, rendered through the policy's chat template as RL renders them (sft-encode.ts),
// seeded epoch batches, cross-entropy on completion tokens (sftLoss).
import { appendFile, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { packGroups } from '../data/math.js';
import { PromptSampler } from '../data/samplers.js';
import { GrpoError } from '../errors.js';
import { PROMPT_OPTIONS } from '../options/prompt.js';
import { checkOptions, defaultsOf, integer, nested, number, plainNaming, POSITIVE, type OptionsOf, type ValuesOf } from '../options/schema.js';
import { ensureAdapterBase, policyStep, sftLoss, type Policy } from '../policy/policy.js';
import { ccrReferenceCompletion, packProblems } from '../rewards/ccr.js';
import type { DataConfig, PromptConfig } from './config.js';
import { writeJsonAtomic } from './run-dir.js';
import { sftEncoder, type SftExample } from './sft-encode.js';
import { arithmeticData } from './task-ccr.js';
import { recommendPrompt, recommendTarget, type MoviesData } from './task-recommend.js';

export type { SftExample } from './sft-encode.js';

/** Options of {@link sft}. */
export const SFT_OPTIONS = {
  steps: integer(600, 'Optimizer steps.', 0),
  batchSize: integer(32, 'Sequences per step.', 1),
  learningRate: number(2e-3, 'Peak learning rate (5% linear warmup, cosine decay to a tenth).', POSITIVE),
  seed: integer(0, 'Seed of the batch order.', 0),
  prompt: nested(PROMPT_OPTIONS, 'How prompts reach the policy, as in the trainer config: SFT and RL prompts match (docs/trainer.md).'),
};

/** What a caller of {@link sft} writes: any option, and any of the prompt options. */
export type SftOptions = Omit<OptionsOf<typeof SFT_OPTIONS>, 'prompt'> & { prompt?: Partial<PromptConfig> };

/** Every option of {@link sft}, resolved. */
export type SftConfig = ValuesOf<typeof SFT_OPTIONS>;

export const SFT_DEFAULTS: Readonly<SftConfig> = defaultsOf(SFT_OPTIONS);

/** The options checked and merged over the defaults (errors name `sft options`). */
export function sftOptions(options: SftOptions = {}): SftConfig {
  return checkOptions(SFT_OPTIONS, plainNaming('sft options'), options, SFT_DEFAULTS);
}

/** Every (request, respondent) row of the train split as prompt → that respondent's list (at most `ranks` films). */
export function recommendExamples(data: MoviesData, ranks: number): SftExample[] {
  return data.train.flatMap((r) => r.respondents.map((x) => ({ prompt: recommendPrompt(r.request, ranks), target: recommendTarget(x.items, ranks) })));
}

/** Worked solutions of the arithmetic train problems, packed N per prompt for every N in `packings`. */
export function arithmeticExamples(data: DataConfig, packings: readonly number[]): SftExample[] {
  const { train } = arithmeticData(data);
  return packings.flatMap((n) => packGroups(train, { n, order: 'shuffled', seed: n }).map((group) => ({
    prompt: packProblems(group, { n }),
    target: ccrReferenceCompletion(group),
  })));
}

function learningRateAt(o: SftConfig, step: number): number {
  const warmup = Math.max(1, Math.round(0.05 * o.steps));
  if (step < warmup) return (o.learningRate * (step + 1)) / warmup;
  const progress = (step - warmup) / Math.max(1, o.steps - warmup);
  return o.learningRate * (0.1 + 0.45 * (1 + Math.cos(Math.PI * progress)));
}

/** One logged SFT step. */
export interface SftRecord {
  step: number;
  loss: number;
  learningRate: number;
  tokens: number;
  seconds: number;
}

/**
 * Trains `policy` on `examples` for `options.steps` steps, reporting each step to `onStep`; when `out` is
 * given, writes one row per step to `out/metrics.jsonl`, then the policy to `out/policy` (a LoRA policy's adapter, with
 * `out/base` when its base was only in memory) and a summary to `out/sft.json`.
 */
export async function sft(
  policy: Policy, examples: readonly SftExample[], options: SftOptions = {},
  hooks: { onStep?: (r: SftRecord) => void | Promise<void>; out?: string; stop?: { requested: boolean } } = {},
): Promise<SftRecord[]> {
  const o = sftOptions(options);
  const tokenizer = policy.tokenizer;
  if (!tokenizer) throw new GrpoError('GRPO_INVALID_ARGUMENT', 'SFT needs a policy with a tokenizer');
  if (examples.length === 0) throw new GrpoError('GRPO_INVALID_ARGUMENT', 'SFT needs at least one example');
  const encoded = examples.map(sftEncoder(tokenizer, o.prompt, policy.config.maxPositions));
  const sampler = new PromptSampler(encoded.map(() => 1), { unit: 'requests', batchSize: o.batchSize, seed: o.seed });
  const records: SftRecord[] = [];
  if (hooks.out) {
    await mkdir(hooks.out, { recursive: true });
    await rm(join(hooks.out, 'metrics.jsonl'), { force: true });
  }
  for (let step = 0; step < o.steps && !hooks.stop?.requested; step++) {
    const started = performance.now();
    const batch = sampler.batch(step).map((d) => encoded[d.request]);
    const learningRate = learningRateAt(o, step);
    const result = await policyStep(policy, { prompts: batch.map((b) => b.prompt), completions: batch.map((b) => b.completion) }, sftLoss(), { learningRate });
    const tokens = batch.reduce((n, b) => n + b.prompt.length + b.completion.length, 0);
    const record = { step: step + 1, loss: result.loss, learningRate, tokens, seconds: (performance.now() - started) / 1000 };
    records.push(record);
    if (hooks.out) await appendFile(join(hooks.out, 'metrics.jsonl'), `${JSON.stringify(record)}\n`);
    await hooks.onStep?.(record);
  }
  if (hooks.out) {
    await ensureAdapterBase(policy, join(hooks.out, 'base'));
    await policy.save(join(hooks.out, 'policy'));
    await writeJsonAtomic(join(hooks.out, 'sft.json'), { options: o, examples: examples.length, steps: records.length, finalLoss: records.at(-1)?.loss });
  }
  return records;
}
