// The mechanism diagnostics of ReMaRk on one set of rollouts of the SFT policy: the same S sampled lists of
// each validation request scored against one drawn respondent and against the union (zero-reward group
// fractions under each), the share of rank-advantage variance due to which respondent is drawn (with a
// request-bootstrap interval), and the fraction of sampled items that pass every item check.
import { mixSeed, mulberry32, randomInt } from '../data/rng.js';
import { compareZeroRewards, respondentRewards, respondentVarianceShare, type ZeroRewardFractions } from '../eval/diagnostics.js';
import type { Policy } from '../policy/policy.js';
import { rankRewardsBatch } from '../rewards/recommend.js';
import type { TrainerConfig } from '../trainer/config.js';
import { generateRollout } from '../trainer/rollout.js';
import { recommendPrompt, type MoviesData } from '../trainer/task-recommend.js';

export interface MechanismDiagnostics {
  /** validation requests scored, and lists sampled per request (temperature of the arms' generation) */
  requests: number;
  lists: number;
  /** sampled items that pass all item checks (parsable, in the catalog, not seen, not repeated), over all items */
  validItemFraction: number;
  /** requests whose S lists all earn 0 at every rank: against one drawn respondent, against the union */
  zeroRewardGroups: { respondent: number; union: number };
  /** (request, rank) cells in which all S lists earn 0 */
  zeroRewardCells: { respondent: number; union: number };
  /** share of rank-advantage variance due to the drawn respondent, 95% request bootstrap (2,000 resamples) */
  varianceShare: { estimate: number; low: number; high: number; requests: number };
  /** what was scored, so the numbers can be recomputed: validation request indices, drawn respondents, lists [requests][lists] */
  rollouts: { requests: number[]; respondents: number[]; lists: string[][] };
}

/** The rank-reward options of the arms' config (K, shape, year tolerance, catalog). */
export function rewardOptionsOf(config: TrainerConfig, data: MoviesData) {
  const r = config.rewards;
  return { k: r.ranks, shape: r.shape, yearTolerance: r.yearTolerance, catalog: r.catalog === 'none' ? undefined : data.catalogs[r.catalog] };
}

/** One respondent per request, uniform, keyed by (seed, request): the respondent a row sampler would have handed the group. */
export function drawnRespondents(requests: ReadonlyArray<{ respondents: readonly unknown[] }>, seed: number): Int32Array {
  return Int32Array.from(requests, (r, g) => randomInt(mulberry32(mixSeed(seed, g, 2)), r.respondents.length));
}

const fractions = (z: { respondent: ZeroRewardFractions; union: ZeroRewardFractions }, field: keyof ZeroRewardFractions) =>
  ({ respondent: z.respondent[field], union: z.union[field] });

/** Samples `lists` lists for each of the first `count` validation requests with `policy` and scores them every way. */
export async function mechanismDiagnostics(
  policy: Policy, config: TrainerConfig, data: MoviesData, count: number, lists: number,
): Promise<MechanismDiagnostics> {
  const requests = data.validation.slice(0, count);
  const K = config.rewards.ranks;
  const rollout = await generateRollout(policy, requests.map((r) => recommendPrompt(r.request, K)), lists, config.generation, mixSeed(config.seed, 18));
  const texts = requests.map((_, g) => rollout.texts.slice(g * lists, (g + 1) * lists)); // [requests][lists]
  const options = rewardOptionsOf(config, data);
  const respondents = drawnRespondents(requests, config.seed);
  const zero = compareZeroRewards(texts, requests, { ...options, respondents });
  const { results } = rankRewardsBatch(texts, requests, { ...options, target: 'union' });
  const items = results.reduce((n, r) => n + r.items.length, 0);
  const invalid = results.reduce((n, r) => n + Object.values(r.invalid).reduce((a, b) => a + b, 0), 0);
  const perRespondent = requests.map((r, g) => respondentRewards(texts[g], r, options));
  const share = respondentVarianceShare(perRespondent, lists, K, { resamples: 2000, seed: config.seed });
  return {
    requests: requests.length,
    lists,
    validItemFraction: items === 0 ? 0 : 1 - invalid / items,
    zeroRewardGroups: fractions(zero, 'requests'),
    zeroRewardCells: fractions(zero, 'cells'),
    varianceShare: { estimate: share.estimate, low: share.low, high: share.high, requests: share.requests },
    rollouts: { requests: requests.map((_, g) => g), respondents: Array.from(respondents), lists: texts },
  };
}
