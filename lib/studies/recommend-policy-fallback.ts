// TEMPORARY stand-in for lib/studies/recommend-policy.ts (helper d-sft, issue 18): today's SFT of the built-in
// model on the movies-multi train rows, with the same export and the result fields the study reads (policyDir,
// taskOptions, checks), so the study runs until that module is merged. At merge: point the import in
// recommend-study.ts at './recommend-policy.js' and delete this file.
import { join } from 'node:path';
import { demoPolicy, demoTokenizer } from '../cli/models.js';
import { sftWithProgress } from '../cli/run-training.js';
import { TRAINER_DEFAULTS, type ConfigInput } from '../trainer/config.js';
import { recommendExamples } from '../trainer/sft.js';
import { moviesData } from '../trainer/tasks.js';
import { RECOMMEND_SETTINGS } from './recommend-settings.js';
import type { StudyContext } from './study.js';

const SFT = {
  quick: { vocabSize: 512, model: 'quick', sft: { steps: 40, batchSize: 16, learningRate: 5e-3, seed: 0 } },
  demo: { vocabSize: 1024, model: 'demo', sft: { steps: 800, batchSize: 32, learningRate: 3e-3, seed: 0 } },
  full: { vocabSize: 1024, model: 'demo', sft: { steps: 3000, batchSize: 32, learningRate: 3e-3, seed: 0 } },
} as const;

/** Tokenizer, model and SFT into `<out>/sft/policy`; no task options beyond the study's own, the checks left to its diagnostics. */
export async function trainRecommendPolicy(ctx: StudyContext): Promise<{ policyDir: string; taskOptions: ConfigInput; checks?: undefined }> {
  const s = SFT[ctx.scale];
  const ranks = Number(RECOMMEND_SETTINGS[ctx.scale].arms.rewards?.ranks);
  const tokenizer = demoTokenizer(s.vocabSize, TRAINER_DEFAULTS.data, ranks);
  const policy = await demoPolicy(s.model, tokenizer, 0, ctx.device);
  const examples = recommendExamples(moviesData(''), ranks);
  await sftWithProgress(ctx.reporter, `SFT (${examples.length} examples)`, policy, examples, s.sft, join(ctx.out, 'sft'));
  policy.dispose();
  return { policyDir: join(ctx.out, 'sft', 'policy'), taskOptions: {} };
}
