// Validation schedule, best-checkpoint selection and stopping rules (patience, maximum steps, KL
// threshold), as a small state that is saved with every checkpoint so a resumed run decides the same.
import type { ValidationConfig } from './config.js';

/** Why a run ended. */
export type StopReason = 'maxSteps' | 'patience' | 'klThreshold' | 'interrupted';

export interface ValidationState {
  /** Best value of the selection metric so far (null before the first validation). */
  best: number | null;
  /** Step of the best value. */
  bestStep: number;
  /** Every validation so far: step → metric values. */
  history: { step: number; elapsed: number; values: Record<string, number> }[];
}

export const initialValidation = (): ValidationState => ({ best: null, bestStep: 0, history: [] });

/** True when step `step` (1-based, just finished) is validated: every `every` steps and at the last one. */
export function validatesAt(v: ValidationConfig, step: number, lastStep: number): boolean {
  return v.every > 0 && (step % v.every === 0 || step === lastStep);
}

/** Records a validation; returns whether it is a new best (strictly higher, NaN never is). */
export function recordValidation(state: ValidationState, v: ValidationConfig, step: number, elapsed: number, values: Record<string, number>): boolean {
  state.history.push({ step, elapsed, values });
  const value = values[v.metric];
  const improved = Number.isFinite(value) && (state.best === null || value > state.best);
  if (improved) {
    state.best = value;
    state.bestStep = step;
  }
  return improved;
}

/**
 * The stopping rule that fires after step `step`, if any. Patience is judged at validation steps only,
 * so a run never stops just before a validation that could have improved.
 */
export function stopAfter(state: ValidationState, v: ValidationConfig, step: number, maxSteps: number, kl: number): StopReason | null {
  if (v.klThreshold > 0 && kl > v.klThreshold) return 'klThreshold';
  if (step >= maxSteps) return 'maxSteps';
  const validatedNow = state.history.at(-1)?.step === step;
  if (validatedNow && v.patience > 0 && state.best !== null && step - state.bestStep >= v.patience) return 'patience';
  return null;
}
