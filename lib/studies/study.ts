// What `grpo demo` and `grpo reproduce` hand each embedded study, and what a study hands back.
// A study (recommendation: ReMaRk vs Rank-GRPO; ccr: CCR vs single-problem GRPO) builds its own
// tokenizer, SFT checkpoint and arms under `out`, and returns its part of summary.json and summary.md.
import type { Device } from '../binding/index.js';
import type { Reporter } from '../cli/progress.js';
import type { ConfigInput } from '../trainer/config.js';

/** quick: test-sized (seconds); demo: `npm start` (minutes); full: `grpo reproduce` (≤ 90 minutes for both studies). */
export type StudyScale = 'quick' | 'demo' | 'full';

export interface StudyContext {
  reporter: Reporter;
  /** the study's own folder: its sft/, runs/ and report/ go here */
  out: string;
  device: Device;
  scale: StudyScale;
  /** RL seeds; every arm runs once per seed from the same SFT checkpoint */
  seeds: readonly number[];
  /** trainer options given on the command line, applied to every arm */
  overrides: ConfigInput;
}

export interface StudyResult<Summary> {
  /** this study's machine-readable part of summary.json (schema: docs/summary-json.md) */
  summary: Summary;
  /** the markdown section printed at the end of the command and written into summary.md */
  markdown: string;
  /** the study's report.md (with its SVG figures beside it) */
  reportPath: string;
}
