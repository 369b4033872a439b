// Rewards for list-valued completions: items, checks, rank rewards, token segments, multi-answer QA.
export { Catalog, formatCatalogIndex, type TitleYear } from './catalog.js';
export { cleanTitle, isCleanTitle, ITEM_PARSERS, listMarkerLength, parseItems, renderItems, type ItemParser, type ParsedItem, type ParseResult } from './items.js';
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
  type SeenEntry,
} from './match.js';
export { itemKey, normalizeTitle, TITLE_NORMALIZATIONS, type TitleNormalization } from './normalize.js';
export { answerIndex, parseAnswers, QA_REWARD_DEFAULTS, qaRewards, type QaAnswer, type QaParsedAnswer, type QaRecordLike, type QaRewardOptions, type QaRewardResult, type QaTarget } from './qa.js';
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
