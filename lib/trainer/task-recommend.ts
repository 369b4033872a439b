// The recommendation task (rank-grpo, remark, remark-mean): movies-multi or a user's recommend/1 requests, rank rewards
// against the recipe's target, rank-wise advantages scattered onto each item's tokens (rank-signal.ts).
import { loadMoviesMulti, loadMoviesMultiCatalogs, loadMoviesMultiFilms, MOVIES_MULTI_DIR } from '../data/movies-multi-files.js';
import { readRecommendFiles } from '../data/recommend-files.js';
import type { RecRequest } from '../data/schemas.js';
import { createSampler, type PromptSampler, type SampledPrompt } from '../data/samplers.js';
import { evaluateRecommendations, type RecEvalOptions } from '../eval/metrics.js';
import { GrpoError } from '../errors.js';
import type { Policy } from '../policy/policy.js';
import type { Tokenizer } from '../policy/tokenizer.js';
import type { Catalog } from '../text/catalog.js';
import { renderItems } from '../rewards/items.js';
import { rankRewardsBatch, type RankRewardBatch } from '../rewards/recommend.js';
import type { DataConfig, TrainerConfig } from './config.js';
import { resolvedOptions, type Recipe } from './recipes.js';
import { promptFormatter } from './prompt-template.js';
import { itemTokenSpans, rankSignal, rankStepRewards, type ItemTokenSpans } from './rank-signal.js';
import { afterRewards, rewardThreads } from './reward-threads.js';
import { greedyCompletions } from './rollout.js';
import type { Rollout } from './rollout.js';
import type { EvalSplit, Evaluation, Task, TaskRewards } from './task.js';

/** How the prompt names the items and their key (films: "films" and "Year"). */
export interface ItemWording {
  noun: string;
  key: string;
}

const FILMS: ItemWording = { noun: 'films', key: 'Year' };

/** The prompt of a request: the request text and the list format asked for. */
export function recommendPrompt(request: string, ranks: number, wording: ItemWording = FILMS): string {
  return `${request.trim()}\nRecommend ${ranks} ${wording.noun}, one per line as "rank. Title (${wording.key})".\n`;
}

/** A supervised target: a respondent's films as a numbered list, at most `ranks` of them. */
export function recommendTarget(items: ReadonlyArray<{ title: string; year: number }>, ranks: number): string {
  return renderItems(items.slice(0, ranks));
}

/** The movies-multi splits, catalogs and popularity a recommendation run reads. */
export interface MoviesData {
  train: RecRequest[];
  validation: RecRequest[];
  test: RecRequest[];
  /** the catalogs of the notInCatalog check (your own files: one catalog under both names, or none) */
  catalogs: { benchmark?: Catalog; full?: Catalog };
  popularity: { title: string; year: number; popularity: number }[];
}

/** Loads a movies-multi folder ("" = the shipped benchmark). */
export function loadMoviesData(dir: string): MoviesData {
  const root = dir === '' ? MOVIES_MULTI_DIR : dir;
  return {
    train: loadMoviesMulti('train', root),
    validation: loadMoviesMulti('validation', root),
    test: loadMoviesMulti('test', root),
    catalogs: loadMoviesMultiCatalogs(root),
    popularity: loadMoviesMultiFilms(root).map((f) => ({ title: f.title, year: f.year, popularity: f.mentions })),
  };
}

interface RecPrompts {
  texts: string[];
  draws: SampledPrompt[];
}

/** A user's recommendation files (`data.recommend`, docs/datasets.md) as the task reads them; no popularity. */
export function loadRecommendFiles(data: DataConfig): MoviesData {
  const { catalog, ...splits } = readRecommendFiles({
    path: data.recommend, validation: data.recommendValidation, test: data.recommendTest, catalog: data.catalog, key: data.itemKey,
    heldOut: data.heldOut, splitSeed: data.splitSeed,
  });
  return { ...splits, catalogs: { benchmark: catalog, full: catalog }, popularity: [] };
}

/** The rank rewards with the token spans of their items (the advantage scatter's input). */
type RecRewards = RankRewardBatch & { tokenSpans: ItemTokenSpans };

/** Refuses a selection on `relevantRecall` when no validation request has a `relevant` set (every value would be NaN). */
function checkSelection(config: TrainerConfig, data: MoviesData): void {
  if (config.validation.metric !== 'relevantRecall' || data.validation.length === 0 || data.validation.some((r) => r.relevant?.length)) return;
  throw new GrpoError('GRPO_INVALID_ARGUMENT', `config "validation.metric": "relevantRecall" needs validation requests with "relevant" items and none of `
    + `the ${data.validation.length} has them; select on "unionRecall", "rowRecall" or "requestRecall" (--validation.metric unionRecall)`);
}

export function recommendTask(config: TrainerConfig, recipe: Recipe, data: MoviesData, tokenizer: Tokenizer): Task<RecPrompts, RecRewards> {
  checkSelection(config, data);
  const { ranks } = config.rewards;
  const sampler: PromptSampler = createSampler(data.train, { unit: recipe.unit, batchSize: config.groups, seed: config.seed });
  const catalog = config.rewards.catalog === 'none' ? undefined : data.catalogs[config.rewards.catalog];
  const { yearTolerance, normalization } = config.rewards;
  const key = config.data.recommend === '' ? 'year' : config.data.itemKey;
  const rewardOptions = { k: ranks, target: recipe.target, shape: config.rewards.shape, yearTolerance, normalization, key, catalog };
  const evalOptions: RecEvalOptions = { ks: [ranks], yearTolerance, normalization, key, catalog, popularity: data.popularity };
  const wording = { noun: config.data.itemNoun, key: key === 'year' ? 'Year' : config.data.creatorLabel };
  const S = config.candidates;
  const options = resolvedOptions(config);
  const format = promptFormatter(tokenizer, config.prompt);
  const threads = rewardThreads(config.rewards.threads);

  return {
    epochOf: (step) => sampler.batch(step)[0].epoch,
    prompts(step) {
      const draws = sampler.batch(step);
      return { draws, texts: draws.map((d) => format(recommendPrompt(data.train[d.request].request, ranks, wording))) };
    },
    rewards(prompts, rollout) {
      const texts = prompts.draws.map((_, g) => rollout.texts.slice(g * S, (g + 1) * S));
      const requests = prompts.draws.map((d) => data.train[d.request]);
      const batchOptions = { ...rewardOptions, respondents: prompts.draws.map((d) => Math.max(d.respondent, 0)) };
      const pool = threads.pool();
      const batch = pool ? pool.rankRewardsBatch(texts, requests, batchOptions) : rankRewardsBatch(texts, requests, batchOptions);
      return afterRewards(batch, (b) => stepRewards(b, rollout, prompts.draws.length));
    },
    advantages: (rewards, rollout) => rankSignal(rewards.rewards, rewards.tokenSpans, rollout, options, S, ranks),
    close: () => threads.close(),
    async evaluate(policy: Policy, split: EvalSplit, count: number): Promise<Evaluation> {
      const requests = count > 0 ? data[split].slice(0, count) : data[split];
      const { texts } = await greedyCompletions(policy, requests.map((r) => format(recommendPrompt(r.request, ranks, wording))), config);
      const [atK] = evaluateRecommendations(texts, requests, evalOptions);
      return { values: { ...atK.values }, series: { ...atK.series }, completions: texts };
    },
  };

  /** The step's rewards, statistics and token spans from the batch's rank rewards. */
  function stepRewards(batch: RankRewardBatch, rollout: Rollout, groups: number): TaskRewards<RecRewards> {
    const { rewards, stats, trl } = rankStepRewards(batch, groups, S, ranks, config.rewards.lengthWeight);
    const invalid = batch.results.reduce((n, r) => n + Object.values(r.invalid).reduce((a, b) => a + b, 0), 0);
    const items = batch.results.reduce((n, r) => n + r.items.length, 0);
    const tokenSpans = itemTokenSpans(batch.results.map((r) => r.items), rollout, tokenizer, ranks);
    return {
      rewards: { ...batch, rewards, tokenSpans },
      stats: {
        ...stats, itemsPerList: items / batch.results.length, invalidItemFraction: items === 0 ? 0 : invalid / items,
        misalignedLists: tokenSpans.misaligned,
      },
      trl,
    };
  }
}
