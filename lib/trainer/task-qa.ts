// The QA task (the rank-wise recipes on qa/1 questions, ProtoQA style): a numbered list of answers per prompt,
// rank rewards from lib/rewards/qa.ts against the recipe's target (the union of the respondents' answers, their
// count-weighted mean, or one drawn respondent's answer), the recommendation task's rank-wise advantages.
import { clusterOfRespondent, PROTOQA_DEV, readQaFile, respondentsOf } from '../data/qa-files.js';
import { PromptSampler, type SampledPrompt } from '../data/samplers.js';
import type { QaRecord } from '../data/schemas.js';
import { holdOut, type Splits } from '../data/splits.js';
import { evaluateQa } from '../eval/qa-metrics.js';
import type { Policy } from '../policy/policy.js';
import type { Tokenizer } from '../policy/tokenizer.js';
import { lengthReward } from '../rewards/length.js';
import { qaRewards, type QaRecordLike, type QaRewardResult, type QaTarget } from '../rewards/qa.js';
import type { RankTarget } from '../rewards/recommend.js';
import type { DataConfig, TrainerConfig } from './config.js';
import { promptFormatter } from './prompt-template.js';
import { itemTokenSpans, rankSignal, rankStepRewards, type ItemTokenSpans } from './rank-signal.js';
import { resolvedOptions, type Recipe } from './recipes.js';
import { greedyCompletions } from './rollout.js';
import type { EvalSplit, Evaluation, Task } from './task.js';

/** The prompt of a question: the question and the list format asked for. */
export function qaPrompt(question: string, ranks: number): string {
  return `${question.trim()}\nGive ${ranks} different answers, one per line as "rank. answer".\n`;
}

/** The questions of the QA task: `data.qa` ("" = the bundled ProtoQA dev set), with validation and test from their files or held out. */
export function qaData(data: DataConfig): Splits<QaRecord> {
  const own = (path: string) => (path === '' ? undefined : readQaFile(path));
  const source = data.qa === '' ? PROTOQA_DEV : data.qa;
  return holdOut(readQaFile(source), { validation: own(data.qaValidation), test: own(data.qaTest), heldOut: data.heldOut, seed: data.splitSeed, source });
}

/**
 * The record and reward target that score a draw: `"union"` every cluster worth 1; `"mean"` a cluster worth the share of
 * respondents who gave it (the mean over respondents of their hit); `"respondent"` the drawn respondent's cluster only.
 */
function scoredAgainst(record: QaRecord, target: RankTarget, draw: SampledPrompt): { record: QaRecordLike; target: QaTarget } {
  if (target === 'union') return { record, target: 'union' };
  if (target === 'mean') return { record, target: 'count' };
  return { record: { answers: [record.answers[clusterOfRespondent(record, draw.respondent)]] }, target: 'union' };
}

interface QaPrompts {
  texts: string[];
  draws: SampledPrompt[];
}

interface QaRewards {
  /** rewards [G, S, K] with the weighted length reward at rank 1 */
  rewards: Float32Array;
  results: QaRewardResult[];
  tokenSpans: ItemTokenSpans;
}

export function qaTask(config: TrainerConfig, recipe: Recipe, data: Splits<QaRecord>, tokenizer: Tokenizer): Task<QaPrompts, QaRewards> {
  const { ranks } = config.rewards;
  // a question is drawn once per respondent ("rows"), once ("requests"), or once with a respondent drawn uniformly
  const sampler = new PromptSampler(data.train.map(respondentsOf), { unit: recipe.unit, batchSize: config.groups, seed: config.seed });
  const S = config.candidates;
  const options = resolvedOptions(config);
  const format = promptFormatter(tokenizer, config.prompt);

  return {
    epochOf: (step) => sampler.batch(step)[0].epoch,
    prompts(step) {
      const draws = sampler.batch(step);
      return { draws, texts: draws.map((d) => format(qaPrompt(data.train[d.request].question, ranks))) };
    },
    rewards(prompts, rollout) {
      const results = rollout.texts.map((text, b) => {
        const draw = prompts.draws[Math.floor(b / S)];
        const { record, target } = scoredAgainst(data.train[draw.request], recipe.target ?? 'union', draw);
        return qaRewards(text, record, { k: ranks, target, shape: config.rewards.shape });
      });
      const batch = {
        rewards: Float32Array.from(results.flatMap((r) => Array.from(r.rewards))), // [B, K]
        length: Float32Array.from(results, (r) => lengthReward(r.answers.length, ranks)),
      };
      const { rewards, stats, trl } = rankStepRewards(batch, prompts.draws.length, S, ranks, config.rewards.lengthWeight);
      const tokenSpans = itemTokenSpans(results.map((r) => r.answers), rollout, tokenizer, ranks);
      const answers = results.reduce((n, r) => n + r.answers.length, 0);
      const unmatched = results.reduce((n, r) => n + r.answers.filter((a) => a.cluster < 0).length, 0);
      return {
        rewards: { rewards, results, tokenSpans },
        stats: { ...stats, answersPerList: answers / results.length, unmatchedAnswerFraction: answers === 0 ? 0 : unmatched / answers, misalignedLists: tokenSpans.misaligned },
        trl,
      };
    },
    advantages: (rewards, rollout) => rankSignal(rewards.rewards, rewards.tokenSpans, rollout, options, S, ranks),
    async evaluate(policy: Policy, split: EvalSplit, count: number): Promise<Evaluation> {
      const records = count > 0 ? data[split].slice(0, count) : data[split];
      const { texts } = await greedyCompletions(policy, records.map((r) => format(qaPrompt(r.question, ranks))), config);
      const m = evaluateQa(texts, records, ranks);
      return {
        values: { respondentRecall: m.countRecall, clusterRecall: m.unionRecall },
        series: { respondentRecall: m.series.countRecall, clusterRecall: m.series.unionRecall },
        completions: texts,
      };
    },
  };
}
