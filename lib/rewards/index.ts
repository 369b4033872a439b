// Rewards for list-valued completions: items, checks, rank rewards, token segments, multi-answer QA.
export { ITEM_PARSERS, listMarkerLength, parseItems, renderItems, type ItemParser } from './items.js';
export type { ParsedItem, ParseResult } from './parsed-item.js';
export { lengthReward } from './length.js';
export {
  checkContext,
  checkItems,
  groundTruth,
  INVALID_REASONS,
  addHits,
  itemTitles,
  matchHits,
  type CheckContext,
  type GroundTruth,
  type InvalidReason,
  type ItemTitles,
  type MatchRules,
} from './match.js';
export { answerIndex, parseAnswers, QA_REWARD_DEFAULTS, qaRewards, type QaParsedAnswer, type QaRecordLike, type QaRewardOptions, type QaRewardResult, type QaTarget } from './qa.js';
export {
  prepareRequest,
  RANK_REWARD_DEFAULTS,
  RANK_TARGETS,
  rankRewards,
  rankRewardsBatch,
  resolveRankOptions,
  scoreCompletion,
  type PreparedRequest,
  type RankRewardBatch,
  type RankRewardBatchOptions,
  type RankRewardOptions,
  type RankRewardResult,
  type RankTarget,
  type ResolvedRankOptions,
  type RewardRequest,
} from './recommend.js';
export {
  checkNewlineAlignment,
  itemSegments,
  newlineSegments,
  piecesToOffsets,
  type AlignmentReport,
  type ItemSegments,
  type NewlineSegments,
  type Spanned,
  type TokenOffsets,
} from './segments.js';
export { dcgDiscount, RANK_SHAPES, shapeRewards, type RankShape } from './shapes.js';
export { RewardPool } from './pool.js';
