// Supervised fine-tuning before RL: (prompt, target) pairs from the bundled data in the exact prompt
// formats the recipes use, seeded epoch batches, cross-entropy on completion tokens (sftLoss).
import { appendFile, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { packGroups } from '../data/math.js';
import { PromptSampler } from '../data/samplers.js';
import { GrpoError } from '../errors.js';
import { policyStep, sftLoss, type Policy } from '../policy/policy.js';
import type { Tokenizer } from '../policy/tokenizer.js';
import { ccrReferenceCompletion, packProblems } from '../rewards/ccr.js';
import type { DataConfig } from './config.js';
import { encodePrompt } from './rollout.js';
import { writeJsonAtomic } from './run-dir.js';
import { arithmeticData } from './task-ccr.js';
import { recommendPrompt, recommendTarget, type MoviesData } from './task-recommend.js';

/** Options of {@link sft}. */
export interface SftOptions {
  /** Optimizer steps. @defaultValue 600 */
  steps: number;
  /** Sequences per step. @defaultValue 32 */
  batchSize: number;
  /** Peak learning rate (5% linear warmup, cosine decay to a tenth). @defaultValue 2e-3 */
  learningRate: number;
  /** Seed of the batch order. @defaultValue 0 */
  seed: number;
}

export const SFT_DEFAULTS: Readonly<SftOptions> = Object.freeze({ steps: 600, batchSize: 32, learningRate: 2e-3, seed: 0 });

/** One supervised example as text. */
export interface SftExample {
  prompt: string;
  target: string;
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

interface Encoded {
  prompt: Int32Array;
  completion: Int32Array;
}

function encodeExample(tokenizer: Tokenizer, e: SftExample, maxPositions: number): Encoded {
  if (tokenizer.eosTokenId === undefined) throw new GrpoError('GRPO_INVALID_ARGUMENT', 'SFT needs a tokenizer with an EOS token (targets end with it)');
  const prompt = encodePrompt(tokenizer, e.prompt);
  const target = tokenizer.encode(e.target).ids;
  const room = Math.max(1, maxPositions - prompt.length);
  const completion = Int32Array.from([...target.subarray(0, room - 1), tokenizer.eosTokenId]);
  return { prompt, completion };
}

function learningRateAt(o: SftOptions, step: number): number {
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
 * given, writes one row per step to `out/metrics.jsonl`, then the policy to `out/policy` and a summary to `out/sft.json`.
 */
export async function sft(
  policy: Policy, examples: readonly SftExample[], options: Partial<SftOptions> = {},
  hooks: { onStep?: (r: SftRecord) => void | Promise<void>; out?: string; stop?: { requested: boolean } } = {},
): Promise<SftRecord[]> {
  const o = { ...SFT_DEFAULTS, ...options };
  const tokenizer = policy.tokenizer;
  if (!tokenizer) throw new GrpoError('GRPO_INVALID_ARGUMENT', 'SFT needs a policy with a tokenizer');
  if (examples.length === 0) throw new GrpoError('GRPO_INVALID_ARGUMENT', 'SFT needs at least one example');
  const encoded = examples.map((e) => encodeExample(tokenizer, e, policy.config.maxPositions));
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
    await policy.save(join(hooks.out, 'policy'));
    await writeJsonAtomic(join(hooks.out, 'sft.json'), { options: o, examples: examples.length, steps: records.length, finalLoss: records.at(-1)?.loss });
  }
  return records;
}
