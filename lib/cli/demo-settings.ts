// Scaled-down settings of `grpo demo` (≤ 10 minutes on 2 cores) and `grpo demo --quick` (< 2 minutes).
// Paper scale is the trainer defaults (G 48 × S 8, K 20, 2,000 steps); any field can be raised by flags.
import type { ConfigInput } from '../trainer/config.js';
import type { SftOptions } from '../trainer/sft.js';

export interface DemoSettings {
  /** Tokens of the byte-level BPE trained on the bundled corpora. */
  vocabSize: number;
  model: 'demo' | 'quick';
  sft: SftOptions;
  /** Shared by rank-grpo and remark (same steps, seed and starting checkpoint). */
  recommend: ConfigInput;
  /** Shared by ccr and grpo; each recipe keeps its own cap (below). */
  ccr: ConfigInput;
  /** Completion caps: ccr shares one cap among its 3 answers; grpo has a longer cap for its one answer. */
  caps: { ccr: number; grpo: number };
}

const RECOMMEND_BASE: ConfigInput = {
  seed: 0, groups: 8, candidates: 4, learningRate: 2e-4, checkpointEvery: 20, testPrompts: 0,
  rewards: { ranks: 5 } as ConfigInput['rewards'],
  generation: { maxNewTokens: 72, temperature: 1 } as ConfigInput['generation'],
  validation: { every: 20, prompts: 100, patience: 0 } as ConfigInput['validation'],
};

const CCR_BASE: ConfigInput = {
  seed: 0, groups: 8, candidates: 4, learningRate: 2e-4, checkpointEvery: 20, testPrompts: 0, evalMaxNewTokens: 64,
  validation: { every: 20, prompts: 100, patience: 0 } as ConfigInput['validation'],
  data: { arithmeticTrain: 3000, arithmeticEval: 200 } as ConfigInput['data'],
};

export const DEMO_SETTINGS: Readonly<Record<'full' | 'quick', DemoSettings>> = Object.freeze({
  full: {
    vocabSize: 1024,
    model: 'demo',
    sft: { steps: 800, batchSize: 32, learningRate: 3e-3, seed: 0 },
    recommend: { ...RECOMMEND_BASE, steps: 60 },
    ccr: { ...CCR_BASE, steps: 60 },
    caps: { ccr: 96, grpo: 64 },
  },
  quick: {
    vocabSize: 512,
    model: 'quick',
    sft: { steps: 40, batchSize: 16, learningRate: 5e-3, seed: 0 },
    recommend: { ...RECOMMEND_BASE, steps: 6, groups: 4, validation: { every: 3, prompts: 20, patience: 0 } as ConfigInput['validation'], testPrompts: 40 },
    ccr: { ...CCR_BASE, steps: 6, groups: 4, validation: { every: 3, prompts: 20, patience: 0 } as ConfigInput['validation'], testPrompts: 40 },
    caps: { ccr: 96, grpo: 64 },
  },
});
