// Sizes of the recommendation study per scale: the RL arms' shared trainer options, and the mechanism
// diagnostics (validation requests × sampled lists of the SFT policy). Any trainer option can still be
// raised from the command line (StudyContext.overrides), e.g. --steps 500 --groups 48 --candidates 8.
// K and the generation settings are not here: they come with the starting policy (recommend-policy.ts), whose
// SFT lists average 3.2 films, so K = 5 at every scale (at K = 20 ranks 6-20 would almost never be reached).
// full: 5 arms × 3 seeds = 15 runs of G 8 × S 8, twice the demo's lists per step and 200 steps each.
import type { ConfigInput } from '../trainer/config.js';
import type { StudyScale } from './study.js';

export interface RecommendSettings {
  /** Shared by every arm (same steps, seed and starting checkpoint); the arm adds its recipe. */
  arms: ConfigInput;
  /** The rank-grpo scalings run as separate arms; the baseline is the better by validation (full scale only). */
  baselineScalings: ReadonlyArray<'group' | 'batch'>;
  /** Validation requests whose sampled lists the diagnostics score (the first ones of the split). */
  diagnosticRequests: number;
  /** Lists sampled per diagnostic request (S of the diagnostics). */
  diagnosticLists: number;
}

/** The arms validate at fixed intervals and select on row Recall@K (the papers' R@20; K is the scale's). */
const validation = (every: number, prompts: number) => ({ every, prompts, patience: 0, metric: 'rowRecall' }) as ConfigInput['validation'];

export const RECOMMEND_SETTINGS: Readonly<Record<StudyScale, RecommendSettings>> = Object.freeze({
  quick: {
    arms: {
      steps: 6, groups: 4, candidates: 4, learningRate: 2e-4, checkpointEvery: 3, testPrompts: 40,
      validation: validation(3, 20),
    },
    baselineScalings: ['group'], diagnosticRequests: 20, diagnosticLists: 4,
  },
  demo: {
    arms: {
      steps: 60, groups: 8, candidates: 4, learningRate: 2e-4, checkpointEvery: 20, testPrompts: 0,
      validation: validation(15, 100),
    },
    baselineScalings: ['group'], diagnosticRequests: 100, diagnosticLists: 8,
  },
  full: {
    arms: {
      steps: 200, groups: 8, candidates: 8, learningRate: 2e-4, checkpointEvery: 20, testPrompts: 0,
      validation: validation(20, 100),
    },
    baselineScalings: ['group', 'batch'], diagnosticRequests: 200, diagnosticLists: 8,
  },
});
