// The recommendation study's starting policy: a benchmark the embedded model can learn (recommend-variant),
// a BPE and a built-in model from scratch, SFT on the request → list rows plus the catalog-fact
// curriculum, then the prerequisite measured on validation requests (recommend-checks).
import { join } from 'node:path';
import { loadMoviesMultiFilms, MOVIES_MULTI_DIR } from '../data/movies-multi-files.js';
import { trainBpe } from '../cli/bpe.js';
import { DEMO_MODELS } from '../cli/models.js';
import { sftWithProgress } from '../cli/run-training.js';
import { BuiltinPolicy } from '../policy/builtin.js';
import type { ModelConfig } from '../policy/config.js';
import type { Policy } from '../policy/policy.js';
import type { ConfigInput } from '../trainer/config.js';
import { resolveConfig } from '../trainer/recipes.js';
import { recommendExamples, type SftExample, type SftOptions } from '../trainer/sft.js';
import { loadMoviesData, type MoviesData } from '../trainer/task-recommend.js';
import { checkRecommendPolicy, type PolicyCheck } from './recommend-checks.js';
import { catalogFactExamples, type CurriculumOptions } from './recommend-curriculum.js';
import { variantFolder, type VariantOptions } from './recommend-variant.js';
import type { StudyContext, StudyScale } from './study.js';

/** Everything that decides the starting policy and its checks. */
export interface RecommendPolicySettings {
  vocabSize: number;
  model: Omit<ModelConfig, 'vocabSize'>;
  sft: SftOptions;
  variant: VariantOptions;
  /** catalog-fact questions mixed into the SFT rows; null = the request → list rows only */
  curriculum: CurriculumOptions | null;
  /** what the RL arms sample and score: ranks K and the generation settings (the checks sample the same way) */
  task: ConfigInput;
  checks: { requests: number; candidates: number[]; seed: number };
}

const TASK: ConfigInput = {
  rewards: { ranks: 5 } as ConfigInput['rewards'],
  generation: { maxNewTokens: 72, temperature: 1 } as ConfigInput['generation'],
};

// Chosen by measurement (docs/recommendation.md, "The study's starting policy"): the 1,000 most-mentioned
// films with regenerated requests, request → list rows only (the catalog-fact curriculum did not help at
// equal steps); quick keeps 300 films so a test-sized model names some real ones.
const SETTINGS: Readonly<Record<StudyScale, RecommendPolicySettings>> = Object.freeze({
  quick: {
    vocabSize: 512, model: DEMO_MODELS.quick, sft: { steps: 40, batchSize: 16, learningRate: 5e-3, seed: 0 },
    variant: { films: 300, seed: 2026, requests: 400 }, curriculum: null, task: TASK,
    checks: { requests: 20, candidates: [4], seed: 1 },
  },
  demo: {
    vocabSize: 1024, model: DEMO_MODELS.demo, sft: { steps: 800, batchSize: 32, learningRate: 3e-3, seed: 0 },
    variant: { films: 1000, seed: 2026, requests: 2000 }, curriculum: null, task: TASK,
    checks: { requests: 200, candidates: [4, 8], seed: 1 },
  },
  full: {
    vocabSize: 1024, model: DEMO_MODELS.demo, sft: { steps: 1600, batchSize: 32, learningRate: 3e-3, seed: 0 },
    variant: { films: 1000, seed: 2026, requests: 2000 }, curriculum: null, task: TASK,
    checks: { requests: 200, candidates: [4, 8], seed: 1 },
  },
});

/** The settings of a scale (a fresh copy: callers may change it to measure a candidate). */
export function recommendPolicySettings(scale: StudyScale): RecommendPolicySettings {
  return structuredClone(SETTINGS[scale]);
}

/** The ConfigInput fragment every RL arm of the study must use: the variant's folder, ranks and generation. */
export function recommendTaskOptions(settings: RecommendPolicySettings, moviesDir: string): ConfigInput {
  return { ...settings.task, data: { moviesDir } as ConfigInput['data'] };
}

/** The SFT rows of the benchmark in `moviesDir` ('' = shipped) plus its catalog-fact curriculum. */
export function recommendSftExamples(settings: RecommendPolicySettings, data: MoviesData, moviesDir: string): SftExample[] {
  const ranks = resolveConfig(settings.task).rewards.ranks;
  const rows = recommendExamples(data, ranks);
  if (!settings.curriculum) return rows;
  return [...rows, ...catalogFactExamples(loadMoviesMultiFilms(moviesDir || MOVIES_MULTI_DIR), ranks, settings.curriculum)];
}

/** The starting policy of the study's arms and its measured prerequisite. */
export interface RecommendPolicy {
  /** checkpoint folder (with its tokenizer) every arm loads */
  policyDir: string;
  /** the benchmark folder the arms train on ('' = shipped) */
  moviesDir: string;
  /** ConfigInput fragment for the arms (recommendTaskOptions) */
  taskOptions: ConfigInput;
  vocabSize: number;
  parameters: number;
  sftExamples: number;
  /** the checks at the arms' S (the first of settings.checks.candidates) */
  checks: { validItemFraction: number; zeroRewardGroups: { respondent: number; union: number } };
  /** the checks at every S measured */
  checksByCandidates: PolicyCheck[];
}

/** The checks of `policy` on the first settings.checks.requests validation requests, sampled as the arms (taskOptions + overrides) sample. */
export function measurePrerequisite(policy: Policy, data: MoviesData, settings: RecommendPolicySettings, taskOptions: ConfigInput, overrides: ConfigInput = {}): Promise<PolicyCheck[]> {
  const config = resolveConfig({ recipe: 'remark' }, taskOptions, overrides);
  return checkRecommendPolicy(policy, data.validation.slice(0, settings.checks.requests), {
    candidates: settings.checks.candidates, ranks: config.rewards.ranks, generation: config.generation, seed: settings.checks.seed,
    catalog: config.rewards.catalog === 'none' ? undefined : data.catalogs[config.rewards.catalog], yearTolerance: config.rewards.yearTolerance,
  });
}

/**
 * Builds the variant benchmark under ctx.out/data, the tokenizer and the model, runs the SFT into
 * ctx.out/sft (progress bar; Ctrl-C saves and stops) and checks the policy on validation requests.
 */
export async function trainRecommendPolicy(ctx: StudyContext, settings: RecommendPolicySettings = recommendPolicySettings(ctx.scale)): Promise<RecommendPolicy> {
  const moviesDir = variantFolder(settings.variant, join(ctx.out, 'data'));
  const data = loadMoviesData(moviesDir);
  const examples = recommendSftExamples(settings, data, moviesDir);
  const bpe = ctx.reporter.phase('recommendation tokenizer (byte-level BPE)', 1, 'tokenizers');
  const tokenizer = trainBpe(examples.flatMap((e) => [e.prompt, e.target]), settings.vocabSize);
  bpe.done(`${tokenizer.vocabSize} tokens`);
  const policy = await BuiltinPolicy.createAsync({ ...settings.model, vocabSize: tokenizer.vocabSize }, { seed: 0, tokenizer, device: ctx.device });
  try {
    const parameters = policy.parameterCount();
    ctx.reporter.line(`Recommendation model: ${parameters.toLocaleString('en-US')} parameters on ${policy.device}`);
    await sftWithProgress(ctx.reporter, `recommendation SFT (${examples.length} examples)`, policy, examples, settings.sft, join(ctx.out, 'sft'));
    const taskOptions = recommendTaskOptions(settings, moviesDir);
    const phase = ctx.reporter.phase('checks on validation requests', 1, 'checks');
    const checksByCandidates = await measurePrerequisite(policy, data, settings, taskOptions, ctx.overrides);
    const [first] = checksByCandidates;
    phase.done(`valid items ${(100 * first.validItemFraction).toFixed(1)}%, zero-reward groups ${(100 * first.zeroRewardGroups.respondent).toFixed(1)}% (one respondent) vs ${(100 * first.zeroRewardGroups.union).toFixed(1)}% (union)`);
    return {
      policyDir: join(ctx.out, 'sft', 'policy'), moviesDir, taskOptions, vocabSize: tokenizer.vocabSize, parameters, sftExamples: examples.length,
      checks: { validItemFraction: first.validItemFraction, zeroRewardGroups: first.zeroRewardGroups }, checksByCandidates,
    };
  } finally {
    policy.dispose();
  }
}
