import * as opt from '../options/schema.js';
import { checkOptions } from '../options/schema.js';
import { nonEmptyLines } from '../text/lines.js';
import { normalizeTitle } from '../text/normalize.js';
import type { QaAnswer } from '../text/records.js';
import { cleanTitle } from '../text/title.js';
import { listMarkerLength } from './items.js';
import { RANK_SHAPES, shapeRewards } from './shapes.js';

/** A question answered by many respondents (ProtoQA style). */
export interface QaRecordLike {
  answers: readonly QaAnswer[];
}

/**
 * - `"count"` (per respondent, count-weighted): an answer is worth the fraction of respondents who gave
 *   it, `count / Σ count` (the mean over respondents of their hit indicator; each respondent gave one answer).
 * - `"union"`: every answer cluster anyone gave is worth 1.
 */
export type QaTarget = 'count' | 'union';

export const QA_REWARD_OPTIONS = {
  k: opt.integer(10, 'Number of ranks K scored.', 1, 10_000),
  target: opt.choice(['count', 'union'] as const, 'count', 'Answer worth (see QaTarget): `"count"` the fraction of respondents who gave it, `"union"` 1 for every cluster.'),
  shape: opt.choice(RANK_SHAPES, 'hit', 'Hits → rewards, as for recommendations.'),
};

/** Options of {@link qaRewards}. */
export type QaRewardOptions = opt.OptionsOf<typeof QA_REWARD_OPTIONS>;

export const QA_REWARD_DEFAULTS = opt.defaultsOf(QA_REWARD_OPTIONS);

/** One answer line of a completion and the cluster it matched (−1: none; `duplicate`: cluster already used). */
export interface QaParsedAnswer {
  text: string;
  span: [number, number];
  cluster: number;
  duplicate: boolean;
}

/** Rewards of one QA completion. */
export interface QaRewardResult {
  /** rewards [K] */
  rewards: Float32Array;
  /** hits [K]: value of the matched cluster per rank (0 when unmatched or repeated) */
  hits: Float32Array;
  answers: QaParsedAnswer[];
}

/** Normalised answer text → cluster index, over every cluster's text and aliases. */
export function answerIndex(record: QaRecordLike): Map<string, number> {
  const index = new Map<string, number>();
  record.answers.forEach((answer, cluster) => {
    for (const text of [answer.text, ...(answer.aliases ?? [])]) {
      const key = normalizeTitle(text);
      if (!index.has(key)) index.set(key, cluster);
    }
  });
  return index;
}

/** One answer per non-empty line, list markers, emphasis and quotes removed. */
export function parseAnswers(text: string, index: Map<string, number>): QaParsedAnswer[] {
  const used = new Set<number>();
  return nonEmptyLines(text).map((line) => {
    const answer = cleanTitle(line.text.slice(listMarkerLength(line.text)));
    const cluster = index.get(normalizeTitle(answer)) ?? -1;
    const duplicate = cluster >= 0 && used.has(cluster);
    if (cluster >= 0) used.add(cluster);
    return { text: answer, span: [line.start, line.end], cluster, duplicate };
  });
}

/**
 * Rank-wise rewards of a list answer to a multi-answer question: each line is matched to an answer
 * cluster by normalised text (the default title normaliser: NFKC, lower case, punctuation collapsed,
 * leading article dropped); each cluster counts once, at its first mention.
 */
export function qaRewards(text: string, record: QaRecordLike, options: QaRewardOptions = {}): QaRewardResult {
  const o = checkOptions(QA_REWARD_OPTIONS, opt.plainNaming('QA reward options'), options, QA_REWARD_DEFAULTS);
  const total = record.answers.reduce((sum, a) => sum + a.count, 0);
  const answers = parseAnswers(text, answerIndex(record));
  // hits [K]
  const hits = new Float32Array(o.k);
  answers.slice(0, o.k).forEach((answer, rank) => {
    if (answer.cluster < 0 || answer.duplicate) return;
    hits[rank] = o.target === 'union' ? 1 : total > 0 ? record.answers[answer.cluster].count / total : 0;
  });
  const rewards = new Float32Array(o.k);
  shapeRewards(hits, o.shape, rewards);
  return { rewards, hits, answers };
}
