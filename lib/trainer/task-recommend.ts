// The recommendation task (rank-grpo, remark, remark-mean): movies-multi requests, rank rewards
// against the recipe's target, rank-wise advantages scattered onto each item's tokens.
import { loadMoviesMulti, loadMoviesMultiCatalogs, loadMoviesMultiFilms, MOVIES_MULTI_DIR } from '../data/movies-multi-files.js';
import { assembleRankRewards } from '../batch/rank-rewards.js';
import type { RecRequest } from '../data/schemas.js';
import { createSampler, type PromptSampler, type SampledPrompt } from '../data/samplers.js';
import { zeroRewardFractions } from '../eval/diagnostics.js';
import { evaluateRecommendations, type RecEvalOptions } from '../eval/metrics.js';
import { rankAdvantagesSync } from '../kernels/advantage.js';
import { tokenAdvantagesSync } from '../kernels/token-advantages.js';
import type { Policy } from '../policy/policy.js';
import type { Tokenizer } from '../policy/tokenizer.js';
import type { Catalog } from '../text/catalog.js';
import { renderItems } from '../rewards/items.js';
import { rankRewardsBatch, type RankRewardBatch } from '../rewards/recommend.js';
import { itemSegments } from '../rewards/segments.js';
import type { TrainerConfig } from './config.js';
import { resolvedOptions, type Recipe } from './recipes.js';
import { promptFormatter } from './prompt-template.js';
import { greedyCompletions, padRows, type Rollout } from './rollout.js';
import { meanStd, type EvalSplit, type Evaluation, type Task } from './task.js';
import { rankRewardMetrics, rewardFunctionMeans } from './trl-metrics.js';

/** The prompt of a request: the request text and the list format asked for. */
export function recommendPrompt(request: string, ranks: number): string {
  return `${request.trim()}\nRecommend ${ranks} films, one per line as "rank. Title (Year)".\n`;
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
  catalogs: { benchmark: Catalog; full: Catalog };
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

/** Token spans of the items: segments [B, T] (rank per token, −1 none, K = overflow) and EOS columns [B] (−1 when truncated). */
interface ItemTokenSpans {
  segments: Int32Array;
  eos: Int32Array;
  /** share of lists whose items and tokens do not align */
  misaligned: number;
}

/** The rank rewards with the token spans of their items (the advantage scatter's input). */
type RecRewards = RankRewardBatch & { tokenSpans: ItemTokenSpans };

/** [B, T] item segments of every completion, overflow items mapped to K, and EOS columns [B] (−1 when truncated). */
function segmentRollout(rewards: RankRewardBatch, rollout: Rollout, tokenizer: Tokenizer, ranks: number): ItemTokenSpans {
  let misaligned = 0;
  const rows = rollout.completions.map((ids, b) => {
    const segments = itemSegments(rewards.results[b].items, tokenizer.offsets(ids), ranks);
    if (!segments.aligned) misaligned++;
    segments.overflow.forEach((o, t) => o && (segments.segments[t] = ranks));
    return segments.segments;
  });
  const eos = Int32Array.from(rollout.completions, (ids, b) => (rollout.truncated[b] || ids.length === 0 ? -1 : ids.length - 1));
  return { segments: padRows(rows, rollout.width, (n) => new Int32Array(n), -1), eos, misaligned: misaligned / rows.length };
}

/**
 * Rank rewards [G, S, K] with the weighted length reward, assembled as Rank-GRPO's `_calculate_rewards` does
 * (assembleRankRewards): a per-list reward enters the rank-1 cell only.
 */
export function withLengthReward(batch: RankRewardBatch, ranks: number, weight: number): Float32Array {
  const rankRows = Array.from(batch.length, (_, b) => batch.rewards.subarray(b * ranks, (b + 1) * ranks)); // [N][K]
  return assembleRankRewards([rankRows, Array.from(batch.length)], { weights: [1, weight], ranks }).rewards;
}

export function recommendTask(config: TrainerConfig, recipe: Recipe, data: MoviesData, tokenizer: Tokenizer): Task<RecPrompts, RecRewards> {
  const { ranks } = config.rewards;
  const sampler: PromptSampler = createSampler(data.train, { unit: recipe.unit, batchSize: config.groups, seed: config.seed });
  const catalog = config.rewards.catalog === 'none' ? undefined : data.catalogs[config.rewards.catalog];
  const rewardOptions = { k: ranks, target: recipe.target, shape: config.rewards.shape, yearTolerance: config.rewards.yearTolerance, catalog };
  const evalOptions: RecEvalOptions = { ks: [ranks], yearTolerance: config.rewards.yearTolerance, catalog, popularity: data.popularity };
  const S = config.candidates;
  const options = resolvedOptions(config);
  const format = promptFormatter(tokenizer, config.prompt);

  return {
    epochOf: (step) => sampler.batch(step)[0].epoch,
    prompts(step) {
      const draws = sampler.batch(step);
      return { draws, texts: draws.map((d) => format(recommendPrompt(data.train[d.request].request, ranks))) };
    },
    rewards(prompts, rollout) {
      const texts = prompts.draws.map((_, g) => rollout.texts.slice(g * S, (g + 1) * S));
      const respondents = prompts.draws.map((d) => Math.max(d.respondent, 0));
      const batch = rankRewardsBatch(texts, prompts.draws.map((d) => data.train[d.request]), { ...rewardOptions, respondents });
      const rewards = withLengthReward(batch, ranks, config.rewards.lengthWeight);
      const perList = Float32Array.from(batch.results, (_, b) => rewards.subarray(b * ranks, (b + 1) * ranks).reduce((a, r) => a + r, 0));
      const { mean, std } = meanStd(perList);
      const zero = zeroRewardFractions(batch.rewards, prompts.draws.length, S, ranks);
      const invalid = batch.results.reduce((n, r) => n + Object.values(r.invalid).reduce((a, b) => a + b, 0), 0);
      const items = batch.results.reduce((n, r) => n + r.items.length, 0);
      const tokenSpans = segmentRollout(batch, rollout, tokenizer, ranks);
      return {
        rewards: { ...batch, rewards, tokenSpans },
        stats: {
          rewardMean: mean, rewardStd: std, zeroRewardCells: zero.cells, zeroRewardGroups: zero.requests,
          lengthReward: meanStd(batch.length).mean, exactLengthLists: batch.length.filter((l) => l === 0).length / batch.length.length,
          itemsPerList: items / batch.results.length, invalidItemFraction: items === 0 ? 0 : invalid / items,
          misalignedLists: tokenSpans.misaligned,
        },
        trl: { ...rankRewardMetrics(rewards, S, ranks), ...rewardFunctionMeans({ rank: batch.rewards, length: batch.length }) },
      };
    },
    advantages(rewards, rollout) {
      const { advantages, stats } = rankAdvantagesSync(rewards.rewards, { ...options.advantages, candidates: S, ranks });
      const { segments, eos } = rewards.tokenSpans;
      const tokens = tokenAdvantagesSync({ advantages, mask: rollout.mask, segments, eosPositions: eos }, options.tokenAdvantages);
      return {
        signal: { advantages: tokens.advantages, lossMask: tokens.lossMask, segments },
        stats: { equalRewardCells: stats.fracCellsEqual },
      };
    },
    async evaluate(policy: Policy, split: EvalSplit, count: number): Promise<Evaluation> {
      const requests = count > 0 ? data[split].slice(0, count) : data[split];
      const maxNewTokens = config.evalMaxNewTokens || config.generation.maxNewTokens;
      const { texts } = await greedyCompletions(policy, requests.map((r) => format(recommendPrompt(r.request, ranks))), maxNewTokens);
      const [atK] = evaluateRecommendations(texts, requests, evalOptions);
      return { values: { ...atK.values }, series: { ...atK.series }, completions: texts };
    },
  };
}
