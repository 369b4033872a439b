// The GRPO trainer: recipes, the loop over the Policy interface, run directories, resuming, SFT, reports.
export { mergeConfig, RECIPE_NAMES, setPath, TRAINER_DEFAULTS, type AdvantageConfig, type ConfigInput, type DataConfig, type GenerationConfig, type PromptConfig, type RecipeName, type RewardConfig, type TrainerConfig, type ValidationConfig } from './config.js';
export { presetDefaults, RECIPES, recipeOf, resolveConfig, resolvedOptions, type Recipe, type ResolvedOptions, type TaskKind } from './recipes.js';
export { rankRewardMetrics, rewardFunctionMeans, sequenceRewardMetrics, trlStepMetrics, type TrlRewardMetrics, type TrlStepMetrics } from './trl-metrics.js';
export { grpoLoss, needsReference, trainStep, type PhaseTimes, type StepContext, type StepFields, type StepRecord } from './loop.js';
export { encodePrompt, generateRollout, greedyCompletions, type Rollout } from './rollout.js';
export type { EvalSplit, Evaluation, Signal, StepStats, Task } from './task.js';
export { ccrTask, arithmeticData, type ArithmeticData } from './task-ccr.js';
export { loadMoviesData, recommendPrompt, recommendTarget, recommendTask, type MoviesData } from './task-recommend.js';
export { createTask } from './tasks.js';
export { promptFormatter } from './prompt-template.js';
export { initialValidation, recordValidation, stopAfter, validatesAt, type StopReason, type ValidationState } from './validation.js';
export { RUN_FILES, RunDir, type TrainerState } from './run-dir.js';
export { train, type PolicyLoader, type TrainerEvent, type TrainOptions, type TrainResult } from './train.js';
export { resume, type ResumeOptions } from './resume.js';
export { stopOnSignals, type StopFlag } from './signals.js';
export { arithmeticExamples, recommendExamples, sft, SFT_DEFAULTS, type SftExample, type SftOptions, type SftRecord } from './sft.js';
export { compareRuns, reportRun, writeRunReport, REPORT_TRACES, type TestFile } from './run-report.js';
