// The recommendation study's part of summary.json (docs/summary-json.md, "recommend").
import type { MechanismDiagnostics } from './recommend-diagnostics.js';
import type { PooledResults, SeedResult } from './recommend-results.js';

export interface RecommendSummary {
  K: number;
  steps: number;
  seeds: number[];
  /** run names: the rank-grpo scalings, then RECOMMEND_ARMS */
  arms: string[];
  /** diagnostics of the SFT policy (same rollouts), without the rollouts themselves (saved in diagnostics.json) */
  diagnostics: { requests: number; lists: number };
  validItemFraction: number;
  zeroRewardGroups: MechanismDiagnostics['zeroRewardGroups'];
  zeroRewardCells: MechanismDiagnostics['zeroRewardCells'];
  varianceShare: MechanismDiagnostics['varianceShare'];
  /** the checks the policy module measured after its SFT, when it reports them */
  sftChecks?: { validItemFraction: number; zeroRewardGroups: { respondent: number; union: number } };
  /** the prerequisites after SFT: ≥ half of sampled items valid, one-respondent zero-reward groups < 90% */
  prerequisites: { validItems: boolean; zeroRewardGroups: boolean };
  perSeed: SeedResult[];
  pooled: PooledResults;
}
