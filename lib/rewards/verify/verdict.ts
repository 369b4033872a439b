/** The outcome of verifying one answer. */
export interface Verdict {
  /** `unparsable` means the verifier could not decide (never a silent `incorrect`). */
  readonly verdict: 'correct' | 'incorrect' | 'unparsable';
  /** Which rule decided: `string`, `numeric`, `exact`, `decimal-rounding`, `numeric-eval`, `structure`, `text`, `latex`, `limit`. */
  readonly method: string;
  /** A short human-readable reason. */
  readonly detail?: string;
}
