/**
 * CCR rewards: N verifiable problems packed into one prompt and one capped completion.
 * R = wAcc·r_acc + wFmt·r_fmt with r_acc = (number correct)/N, N fixed (an omitted or truncated
 * answer scores 0 and never raises the average). See docs/ccr.md for the format term.
 */
import { GrpoError } from '../errors.js';
import * as opt from '../options/schema.js';
import { checkOptions } from '../options/schema.js';
import { integer } from '../validate.js';
import { CCR_EXTRACT_OPTIONS, type CcrExtractedAnswer, type CcrExtractOptions, extractAnswers } from './ccr-extract.js';
import { type Verdict, type VerifyOptions, resolveVerifyOptions, verifyResolved } from './verify/index.js';

export {
  extractAnswers,
  type CcrAnswerSpan,
  type CcrAnswerStatus,
  type CcrExtractedAnswer,
  type CcrExtractOptions,
} from './ccr-extract.js';
export {
  CCR_PACK_DEFAULTS,
  ccrReferenceCompletion,
  defaultCcrTemplate,
  packProblems,
  type CcrPackOptions,
  type CcrTemplate,
  type PackableProblem,
} from './ccr-pack.js';

export const CCR_REWARD_OPTIONS = {
  wAcc: opt.number(2, 'Weight of the accuracy term.', opt.FINITE),
  wFmt: opt.number(1, 'Weight of the format term.', opt.FINITE),
  ...CCR_EXTRACT_OPTIONS,
  verify: opt.opaque<VerifyOptions>('VerifyOptions', 'Options of the math verifier (checked by resolveVerifyOptions).', '`{}` (VERIFY_DEFAULTS)'),
};

/** Options of {@link ccrReward}. */
export type CcrRewardOptions = Readonly<opt.OptionsOf<typeof CCR_REWARD_OPTIONS>>;

/** Defaults of {@link CcrRewardOptions}. */
export const CCR_DEFAULTS = opt.defaultsOf(CCR_REWARD_OPTIONS);

/** The reward of one completion. */
export interface CcrReward {
  /** wAcc·accuracy + wFmt·format. */
  readonly reward: number;
  /** (number correct) / N. */
  readonly accuracy: number;
  /** (number of well-formatted answers) / N; see docs/ccr.md. */
  readonly format: number;
  /** correct [N] */
  readonly correct: boolean[];
  /** Character offset just after the last complete labelled box; 0 when none. */
  readonly rewardPrefixEnd: number;
  /** answers [N] */
  readonly answers: CcrExtractedAnswer[];
  /** verdicts [N]: the verifier's verdict, or `undefined` where no answer was recovered. */
  readonly verdicts: (Verdict | undefined)[];
}

interface ResolvedCcr {
  readonly wAcc: number;
  readonly wFmt: number;
  readonly extract: CcrExtractOptions;
  readonly verify: ReturnType<typeof resolveVerifyOptions>;
}

function resolveCcrOptions(options?: CcrRewardOptions): ResolvedCcr {
  const o = checkOptions(CCR_REWARD_OPTIONS, opt.plainNaming('ccrReward options'), options, CCR_DEFAULTS);
  return { wAcc: o.wAcc, wFmt: o.wFmt, extract: { allowUnlabelled: o.allowUnlabelled }, verify: resolveVerifyOptions(o.verify) };
}

const describeArray = (value: unknown) => (Array.isArray(value) ? `Array(${value.length})` : typeof value);

function checkTruths(truths: unknown, name = 'truths'): readonly string[] {
  if (!Array.isArray(truths) || truths.length === 0 || truths.length > 100) {
    const received = describeArray(truths);
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${name} to be an array of 1…100 reference answers but received ${received}`);
  }
  truths.forEach((t, i) => {
    if (typeof t !== 'string') {
      throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${name}[${i}] to be a string but received ${typeof t}`);
    }
  });
  return truths;
}

/**
 * A well-formatted answer: recovered (`correct-format`), labelled, in label order, and its label is
 * not also used malformed inside the rewarded prefix (a malformed suffix never costs credit).
 */
function wellFormatted(answer: CcrExtractedAnswer, prefixEnd: number): boolean {
  const malformedInPrefix = answer.malformedAt >= 0 && answer.malformedAt < prefixEnd;
  return answer.status === 'correct-format' && answer.labelled && answer.inOrder && !malformedInPrefix;
}

function score(completion: string, truths: readonly string[], o: ResolvedCcr): CcrReward {
  const n = truths.length;
  const answers = extractAnswers(completion, n, o.extract);
  const rewardPrefixEnd = Math.max(0, ...answers.map((a) => a.boxEnd));
  const verdicts = answers.map((a, k) =>
    a.status === 'correct-format' ? verifyResolved(a.answer, truths[k], o.verify) : undefined);
  const correct = verdicts.map((v) => v?.verdict === 'correct');
  const accuracy = correct.filter(Boolean).length / n;
  const format = answers.filter((a) => wellFormatted(a, rewardPrefixEnd)).length / n;
  return { reward: o.wAcc * accuracy + o.wFmt * format, accuracy, format, correct, rewardPrefixEnd, answers, verdicts };
}

/**
 * Scores one completion against the N reference answers of its packed prompt.
 * @param completion - the generated text (possibly cut at the token cap)
 * @param truths - reference answers [N], in problem order
 * @example ccrReward('… Answer 1: \\boxed{2} … Answer 2: \\boxed{5}', ['2', '5', '20']).accuracy // 2/3
 */
export function ccrReward(completion: string, truths: readonly string[], options?: CcrRewardOptions): CcrReward {
  if (typeof completion !== 'string') {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected completion to be a string but received ${typeof completion}`);
  }
  return score(completion, checkTruths(truths), resolveCcrOptions(options));
}

/** Rewards of a batch laid out [prompts, candidates]. */
export interface CcrBatchRewards {
  /** rewards [prompts × candidates] */
  readonly rewards: Float32Array;
  /** accuracy [prompts × candidates] */
  readonly accuracy: Float32Array;
  /** format [prompts × candidates] */
  readonly format: Float32Array;
  /** correctCounts [prompts × candidates] */
  readonly correctCounts: Int32Array;
  /** rewardPrefixEnd [prompts × candidates], character offsets */
  readonly rewardPrefixEnd: Int32Array;
  /** informative [prompts]: 1 where the candidates' correct counts differ */
  readonly informative: Uint8Array;
  /** Recovered answers the verifier could not decide (counted, never silently zero). */
  readonly unparsable: number;
}

function checkBatchShape(completions: unknown, truths: unknown, candidates: number): void {
  integer('candidates', candidates, 1);
  const prompts = Array.isArray(truths) ? truths.length : 0;
  if (!Array.isArray(truths) || !Array.isArray(completions) || completions.length !== prompts * candidates) {
    throw new GrpoError(
      'GRPO_SHAPE_MISMATCH',
      `Expected completions of shape [prompts=${prompts}, candidates=${candidates}] but received ${describeArray(completions)}`,
    );
  }
}

/**
 * Scores completions [prompts, candidates] (candidate-major within each prompt) against
 * truths [prompts][N]; `candidates` is the group size S. Same values as {@link ccrReward} per
 * completion, packed into typed arrays, plus the informative-prompt flags.
 */
export function ccrRewardBatch(
  completions: readonly string[],
  truths: readonly (readonly string[])[],
  candidates: number,
  options?: CcrRewardOptions,
): CcrBatchRewards {
  checkBatchShape(completions, truths, candidates);
  const o = resolveCcrOptions(options);
  const rows = truths.map((row, p) => checkTruths(row, `truths[${p}]`));
  const size = completions.length;
  const rewards = new Float32Array(size); // [prompts × candidates], likewise below
  const accuracy = new Float32Array(size);
  const format = new Float32Array(size);
  const correctCounts = new Int32Array(size);
  const rewardPrefixEnd = new Int32Array(size);
  let unparsable = 0;
  for (let i = 0; i < size; i++) {
    if (typeof completions[i] !== 'string') throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected completions[${i}] to be a string`);
    const r = score(completions[i], rows[Math.floor(i / candidates)], o);
    [rewards[i], accuracy[i], format[i], rewardPrefixEnd[i]] = [r.reward, r.accuracy, r.format, r.rewardPrefixEnd];
    correctCounts[i] = r.correct.filter(Boolean).length;
    unparsable += r.verdicts.filter((v) => v?.verdict === 'unparsable').length;
  }
  const informative = informativeGroups(correctCounts, candidates).flags;
  return { rewards, accuracy, format, correctCounts, rewardPrefixEnd, informative, unparsable };
}

/** Which groups carry an accuracy signal, and how many. */
export interface InformativeGroups {
  /** flags [groups]: 1 where not every candidate has the same number correct */
  readonly flags: Uint8Array;
  readonly count: number;
  /** count / groups (0 for no groups). */
  readonly fraction: number;
}

/**
 * A group is informative when its candidates' correct counts are not all equal (non-zero
 * variance); exactly then are its mean-centred accuracy advantages not all zero.
 * @param correctCounts - [groups × groupSize], candidate-major within each group
 */
export function informativeGroups(correctCounts: ArrayLike<number>, groupSize: number): InformativeGroups {
  integer('groupSize', groupSize, 1);
  if (correctCounts.length % groupSize !== 0) {
    throw new GrpoError(
      'GRPO_SHAPE_MISMATCH',
      `Expected correctCounts of length groups × groupSize (groupSize = ${groupSize}) but received ${correctCounts.length}`,
    );
  }
  const groups = correctCounts.length / groupSize;
  const flags = new Uint8Array(groups);
  let count = 0;
  for (let g = 0; g < groups; g++) {
    const first = correctCounts[g * groupSize];
    for (let c = 1; c < groupSize && !flags[g]; c++) flags[g] = correctCounts[g * groupSize + c] !== first ? 1 : 0;
    count += flags[g];
  }
  return { flags, count, fraction: groups === 0 ? 0 : count / groups };
}
