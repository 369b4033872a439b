// The math task (ccr, grpo): verifiable problems (a user's math/1 files, or seeded arithmetic) packed N per
// prompt, the CCR reward through the verifier, group advantages broadcast over each completion with the
// recipe's truncation policy.
import { generateArithmetic, type ArithmeticProblem } from '../data/arithmetic.js';
import { packGroups, type MathProblem } from '../data/math.js';
import { readMathProblems } from '../data/math-record.js';
import { mixSeed } from '../data/rng.js';
import { PromptSampler } from '../data/samplers.js';
import { holdOut, type Splits } from '../data/splits.js';
import { GrpoError } from '../errors.js';
import { ccrSignal, zeroRewardFractions } from '../eval/diagnostics.js';
import { evaluateCcr } from '../eval/ccr-metrics.js';
import { groupAdvantagesSync } from '../kernels/advantage.js';
import { tokenAdvantagesSync } from '../kernels/token-advantages.js';
import type { Policy } from '../policy/policy.js';
import type { Tokenizer } from '../policy/tokenizer.js';
import { ccrRewardBatch, defaultCcrTemplate, packProblems, type CcrBatchRewards, type CcrTemplate } from '../rewards/ccr.js';
import { firstTokenFrom } from '../rewards/segments.js';
import type { DataConfig, TrainerConfig } from './config.js';
import { resolvedOptions } from './recipes.js';
import { promptFormatter } from './prompt-template.js';
import { afterRewards, rewardThreads } from './reward-threads.js';
import { greedyCompletions, type Rollout } from './rollout.js';
import { meanStd, type EvalSplit, type Evaluation, type Task, type TaskRewards } from './task.js';
import { rewardFunctionMeans, sequenceRewardMetrics } from './trl-metrics.js';

/** Train, validation and test problems: the same generator under three seeds derived from `data.arithmeticSeed`. */
export interface ArithmeticData {
  train: ArithmeticProblem[];
  validation: ArithmeticProblem[];
  test: ArithmeticProblem[];
}

export function arithmeticData(data: DataConfig): ArithmeticData {
  const make = (split: number, count: number) =>
    generateArithmetic({ count, seed: mixSeed(data.arithmeticSeed, split) >>> 0, maxSteps: data.arithmeticMaxSteps });
  return { train: make(0, data.arithmeticTrain), validation: make(1, data.arithmeticEval), test: make(2, data.arithmeticEval) };
}

/**
 * The problems of the math task: the `math/1` files of `data.math` (validation and test from their own files, or
 * held out of it: `holdOut`), or the generated arithmetic when `data.math` is "".
 */
export function mathData(data: DataConfig): Splits<MathProblem> {
  if (data.math === '') return arithmeticData(data);
  const own = (path: string) => (path === '' ? undefined : readMathProblems(path));
  return holdOut(readMathProblems(data.math), {
    validation: own(data.mathValidation), test: own(data.mathTest), heldOut: data.heldOut, seed: data.splitSeed, source: data.math,
  });
}

interface CcrPrompts {
  texts: string[];
  truths: string[][];
}

/** The CCR rewards and, per completion [B], the first token of its unfinished suffix (the reward prefix's end on tokens). */
interface CcrRewards extends CcrBatchRewards {
  rewardPrefixTokens: Int32Array;
}

/** `template` builds every prompt, training and evaluation alike (the CCR study's is shorter than the default). */
export function ccrTask(config: TrainerConfig, data: Splits<MathProblem>, tokenizer: Tokenizer, template: CcrTemplate = defaultCcrTemplate): Task<CcrPrompts, CcrRewards> {
  const n = config.rewards.problems;
  const S = config.candidates;
  const groups = packGroups(data.train, { n, order: config.rewards.order, seed: config.seed >>> 0 });
  if (groups.length === 0) {
    throw new GrpoError('GRPO_VALUE_RANGE', `config "rewards.problems": ${data.train.length} training problems cannot fill one prompt of N = ${n}`);
  }
  const sampler = new PromptSampler(groups.map(() => 1), { unit: 'requests', batchSize: config.groups, seed: config.seed });
  const rewardOptions = { wAcc: config.rewards.wAcc, wFmt: config.rewards.wFmt };
  const options = resolvedOptions(config);
  const format = promptFormatter(tokenizer, config.prompt);

  /** The step's rewards and statistics from the batch's CCR rewards. */
  const stepRewards = (r: CcrBatchRewards, prompts: CcrPrompts, rollout: Rollout): TaskRewards<CcrRewards> => {
    const signal = ccrSignal(r.correctCounts, S);
    const { mean, std } = meanStd(r.rewards);
    const rewardPrefixTokens = Int32Array.from(rollout.completions, (ids, b) => firstTokenFrom(tokenizer.offsets(ids), r.rewardPrefixEnd[b]));
    return {
      rewards: { ...r, rewardPrefixTokens },
      stats: {
        rewardMean: mean, rewardStd: std, accuracy: meanStd(r.accuracy).mean, format: meanStd(r.format).mean,
        informativeGroups: signal.informative, informativePredicted: signal.predicted,
        zeroRewardGroups: zeroRewardFractions(r.rewards, prompts.truths.length, S, 1).requests,
        unparsableAnswers: r.unparsable, problemsPerStep: prompts.truths.length * n,
      },
      trl: { ...sequenceRewardMetrics(r.rewards, S, config.advantages.scale), ...rewardFunctionMeans({ accuracy: r.accuracy, format: r.format }) },
    };
  };
  const threads = rewardThreads(config.rewards.threads);

  return {
    epochOf: (step) => sampler.batch(step)[0].epoch,
    prompts(step) {
      const picked = sampler.batch(step).map((d) => groups[d.request]);
      return { texts: picked.map((g) => format(packProblems(g, { n, template }))), truths: picked.map((g) => g.map((p) => p.answer)) };
    },
    rewards(prompts, rollout) {
      const pool = threads.pool();
      const batch = pool ? pool.ccrRewardBatch(rollout.texts, prompts.truths, S, rewardOptions) : ccrRewardBatch(rollout.texts, prompts.truths, S, rewardOptions);
      return afterRewards(batch, (r) => stepRewards(r, prompts, rollout));
    },
    close: () => threads.close(),
    advantages(rewards, rollout) {
      const { advantages } = groupAdvantagesSync(rewards.rewards, { ...options.advantages, groupSize: S });
      const prefixEnd = Int32Array.from(rollout.completions, (ids, b) => rewards.rewardPrefixEnd[b] === 0 && config.advantages.unanswered === 'keep'
        ? ids.length // capped before any answer: the whole row stays in the loss
        : rewards.rewardPrefixTokens[b]);
      const tokens = tokenAdvantagesSync({ advantages, mask: rollout.mask, truncated: rollout.truncated, prefixEnd }, options.tokenAdvantages);
      let kept = 0, total = 0;
      rollout.mask.forEach((m, i) => ((total += m), (kept += tokens.lossMask[i])));
      return { signal: { advantages: tokens.advantages, lossMask: tokens.lossMask }, stats: { lossTokenFraction: total === 0 ? 0 : kept / total } };
    },
    async evaluate(policy: Policy, split: EvalSplit, count: number): Promise<Evaluation> {
      const problems = count > 0 ? data[split].slice(0, count) : data[split];
      const { texts, tokens } = await greedyCompletions(policy, problems.map((p) => format(packProblems([p], { n: 1, template }))), config);
      const m = evaluateCcr(problems.map((p, i) => ({ completion: texts[i], truths: [p.answer], tokens: tokens[i] })));
      return {
        values: { accuracy: m.accuracy, completionTokens: m.length },
        series: { accuracy: m.series.accuracy, completionTokens: m.series.length },
        completions: texts,
      };
    },
  };
}
