// The prerequisite of the recommendation study, measured on validation requests: sample S lists per
// request exactly as the RL rollouts do (same generation settings), then score the same lists against one
// drawn respondent and against the union (compareZeroRewards), and count the items that pass every check.
import { mixSeed, mulberry32, randomInt } from '../data/rng.js';
import type { RecRequest } from '../data/schemas.js';
import { compareZeroRewards } from '../eval/diagnostics.js';
import type { Policy } from '../policy/policy.js';
import { INVALID_REASONS, type InvalidReason } from '../rewards/match.js';
import { rankRewardsBatch } from '../rewards/recommend.js';
import type { Catalog } from '../text/catalog.js';
import type { GenerationConfig } from '../trainer/config.js';
import { generateRollout } from '../trainer/rollout.js';
import { recommendPrompt } from '../trainer/task-recommend.js';

/** What the checks sample and how they score. */
export interface PolicyCheckOptions {
  /** lists per request S (the largest is sampled; smaller S take its first lists) */
  candidates: readonly number[];
  /** ranks K of the prompt and of the rewards */
  ranks: number;
  generation: GenerationConfig;
  seed: number;
  catalog: Catalog | undefined;
  yearTolerance: number;
}

/** The checks at one S. */
export interface PolicyCheck {
  candidates: number;
  /** items that pass every item check (format, seen, notInCatalog, duplicate), over all parsed items */
  validItemFraction: number;
  itemsPerList: number;
  /** items failing each check, over all parsed items */
  invalid: Record<InvalidReason, number>;
  /** requests whose S lists all earn 0 at every rank: against one drawn respondent, and against the union */
  zeroRewardGroups: { respondent: number; union: number };
  /** the same over the requests with at least two respondents only (the paper's 500 multi-respondent requests) */
  multiRespondentGroups: { requests: number; respondent: number; union: number };
  /** (request, rank) cells where all S lists earn 0 */
  zeroRewardCells: { respondent: number; union: number };
}

/** One respondent per request, drawn uniformly with a seed of (seed, request index). */
export function drawRespondents(requests: readonly RecRequest[], seed: number): number[] {
  return requests.map((r, i) => randomInt(mulberry32(mixSeed(seed, i)), r.respondents.length));
}

/** The checks of fixed lists texts [requests][S], scored against `respondents[g]` of each request and against the union. */
export function checkLists(
  texts: readonly string[][], requests: readonly RecRequest[], respondents: readonly number[], o: Pick<PolicyCheckOptions, 'ranks' | 'catalog' | 'yearTolerance'>,
): PolicyCheck {
  const options = { k: o.ranks, catalog: o.catalog, yearTolerance: o.yearTolerance };
  const zero = compareZeroRewards(texts, requests, { ...options, respondents });
  const multi = requests.flatMap((r, g) => (r.respondents.length >= 2 ? [g] : []));
  const multiZero = compareZeroRewards(multi.map((g) => texts[g]), multi.map((g) => requests[g]), { ...options, respondents: multi.map((g) => respondents[g]) });
  const { results } = rankRewardsBatch(texts, requests, { ...options, target: 'union' });
  const items = results.reduce((n, r) => n + r.items.length, 0);
  const valid = results.reduce((n, r) => n + r.reasons.filter((reason) => reason === null).length, 0);
  const invalid: Record<InvalidReason, number> = { format: 0, seen: 0, notInCatalog: 0, duplicate: 0 };
  for (const r of results) for (const reason of INVALID_REASONS) invalid[reason] += r.invalid[reason] / Math.max(1, items);
  return {
    candidates: texts[0]?.length ?? 0,
    validItemFraction: items === 0 ? 0 : valid / items,
    itemsPerList: items / Math.max(1, results.length),
    invalid,
    zeroRewardGroups: { respondent: zero.respondent.requests, union: zero.union.requests },
    multiRespondentGroups: { requests: multi.length, respondent: multiZero.respondent.requests, union: multiZero.union.requests },
    zeroRewardCells: { respondent: zero.respondent.cells, union: zero.union.cells },
  };
}

/** Samples max(S) lists of each request and returns the checks at every S in `o.candidates`. */
export async function checkRecommendPolicy(policy: Policy, requests: readonly RecRequest[], o: PolicyCheckOptions): Promise<PolicyCheck[]> {
  const S = Math.max(...o.candidates);
  const rollout = await generateRollout(policy, requests.map((r) => recommendPrompt(r.request, o.ranks)), S, o.generation, o.seed);
  const respondents = drawRespondents(requests, o.seed);
  return o.candidates.map((s) => {
    const texts = requests.map((_, g) => rollout.texts.slice(g * S, g * S + s));
    return checkLists(texts, requests, respondents, o);
  });
}
