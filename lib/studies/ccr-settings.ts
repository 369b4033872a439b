// Settings of the CCR study per scale: quick (tests, seconds), demo (`npm start`, a few minutes on 2 cores),
// full (`grpo reproduce`). The caps set the comparison (token counts of the demo tokenizer's SFT data): grpo-long's
// window (320) holds every verbose single solution (211 mean, 259 max); ccr's shared window (128) holds three concise
// ones (108 mean, 126 max) but not one verbose problem of four or five steps; grpo-short gets ccr's window / N (42),
// the longest concise single solution.
import type { ConfigInput } from '../trainer/config.js';
import type { SftOptions } from '../trainer/sft.js';
import type { StudyScale } from './study.js';

export interface CcrStudySettings {
  vocabSize: number;
  model: 'demo' | 'quick';
  sft: SftOptions;
  /**
   * stepwise problems per split (operations per problem: minSteps…maxSteps; values in [0, maxValue]; the share written
   * concise) and how many of the train problems also appear packed N per prompt in the SFT data
   */
  problems: { train: number; validation: number; test: number; packed: number; minSteps: number; maxSteps: number; maxValue: number; conciseShare: number };
  /** trainer options shared by the three arms (seed, caps and recipe are set per arm) */
  rl: ConfigInput;
  /** completion caps in tokens: grpo-long, grpo-short (≤ ccr / N) and ccr's window shared by N answers */
  caps: { long: number; short: number; ccr: number };
  /** greedy test window of every arm (single problems) */
  evalWindow: number;
  /** validation problems sampled once each at the RL temperature to measure the SFT policy's completion length */
  lengthProbe: number;
}

/** Problems packed per ccr prompt. */
export const CCR_STUDY_N = 3;

/**
 * Shared by the arms. The learning rate was chosen on one demo SFT checkpoint (docs/ccr.md): at 3e-4 the short-window
 * arms collapsed within ten steps into garbled working with a fixed boxed answer (test accuracy 0.04-0.07); at 3e-5 the
 * accuracy reward of both rose every quarter of the 40 steps.
 */
const RL: ConfigInput = {
  groups: 8, candidates: 4, learningRate: 3e-5, checkpointEvery: 1000, testPrompts: 0,
  generation: { temperature: 1 } as ConfigInput['generation'],
  validation: { every: 0, prompts: 0, patience: 0 } as ConfigInput['validation'],
};

export const CCR_STUDY_SETTINGS: Readonly<Record<StudyScale, CcrStudySettings>> = Object.freeze({
  quick: {
    vocabSize: 384, model: 'quick',
    sft: { steps: 30, batchSize: 8, learningRate: 5e-3, seed: 0 },
    problems: { train: 240, validation: 16, test: 24, packed: 240, minSteps: 3, maxSteps: 5, maxValue: 20, conciseShare: 0.3 },
    rl: { ...RL, steps: 3, groups: 2, candidates: 4 },
    caps: { long: 128, short: 32, ccr: 96 },
    evalWindow: 128, lengthProbe: 16,
  },
  demo: {
    vocabSize: 512, model: 'demo',
    sft: { steps: 900, batchSize: 24, learningRate: 3e-3, seed: 0 },
    problems: { train: 3000, validation: 96, test: 200, packed: 1500, minSteps: 3, maxSteps: 5, maxValue: 20, conciseShare: 0.3 },
    rl: { ...RL, steps: 40 },
    caps: { long: 320, short: 42, ccr: 128 },
    evalWindow: 320, lengthProbe: 96,
  },
  full: {
    vocabSize: 512, model: 'demo',
    sft: { steps: 1200, batchSize: 24, learningRate: 3e-3, seed: 0 },
    problems: { train: 6000, validation: 200, test: 400, packed: 6000, minSteps: 3, maxSteps: 5, maxValue: 20, conciseShare: 0.3 },
    rl: { ...RL, steps: 150 },
    caps: { long: 320, short: 42, ccr: 128 },
    evalWindow: 320, lengthProbe: 200,
  },
});
