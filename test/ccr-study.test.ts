// The CCR study at quick scale: three arms from one SFT checkpoint, the summary's fields recomputed from the
// run directories it wrote, the caps that define the arms, and the report with its figures.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createReporter } from '../lib/cli/progress.js';
import { CCR_STUDY_SETTINGS } from '../lib/studies/ccr-settings.js';
import { runCcrStudy, type CcrSummary } from '../lib/studies/ccr-study.js';
import type { StudyResult } from '../lib/studies/study.js';

const silent = { write: () => true };
const out = mkdtempSync(join(tmpdir(), 'ccr-study-'));
const quick = CCR_STUDY_SETTINGS.quick;
let result: StudyResult<CcrSummary>;

const rows = (arm: string) => readFileSync(join(out, 'runs', 'seed-0', arm, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const mean = (values: number[]) => values.reduce((s, v) => s + v, 0) / values.length;

beforeAll(async () => {
  result = await runCcrStudy({ reporter: createReporter({ stream: silent, out: silent }), out, device: 'cpu', scale: 'quick', seeds: [0], overrides: {} });
}, 120_000);

describe('runCcrStudy (quick)', () => {
  it('writes every arm from the SFT checkpoint at its own cap, with the problems per prompt of its recipe', () => {
    expect(existsSync(join(out, 'sft', 'policy', 'config.json'))).toBe(true);
    const caps = { grpoLong: quick.caps.long, grpoShort: quick.caps.short, ccr: quick.caps.ccr };
    for (const [arm, cap] of Object.entries(caps)) {
      const config = JSON.parse(readFileSync(join(out, 'runs', 'seed-0', arm, 'config.json'), 'utf8'));
      expect(config.generation.maxNewTokens).toBe(cap);
      expect(config.rewards.problems).toBe(arm === 'ccr' ? 3 : 1);
      expect(config.evalMaxNewTokens).toBe(quick.evalWindow);
      const steps = rows(arm);
      expect(steps).toHaveLength(quick.rl.steps!);
      for (const r of steps) expect(r.completionLength.max).toBeLessThanOrEqual(cap);
    }
    expect(quick.caps.short * 3).toBeLessThanOrEqual(quick.caps.ccr);
  });

  it('summarises the runs it wrote: token means, informative groups, truncation and the reduction', () => {
    const s = result.summary;
    for (const arm of ['grpoLong', 'grpoShort', 'ccr'] as const) {
      const r = rows(arm);
      expect(s.tokensPerStep[arm]).toBeCloseTo(mean(r.map((x) => x.tokens.prompt + x.tokens.completion)), 9);
      expect(s.completionTokensPerStep[arm]).toBeCloseTo(mean(r.map((x) => x.tokens.completion)), 9);
      expect(s.informativeGroups[arm]).toBeCloseTo(mean(r.map((x) => x.stats.informativeGroups)), 9);
      expect(s.informativePredicted[arm]).toBeCloseTo(mean(r.map((x) => x.stats.informativePredictedPerPrompt)), 9);
      expect(s.truncationRate[arm]).toBeCloseTo(mean(r.map((x) => x.truncationRate)), 9);
      const concise = r.map((x) => x.stats.conciseShare).filter((v: number | null) => v !== null); // NaN is null in JSON
      if (concise.length > 0) expect(s.conciseShare[arm]).toBeCloseTo(mean(concise), 9);
      else expect(s.conciseShare[arm]).toBeNaN();
      expect(s.completionLengthPerProblem[arm]).toBeCloseTo(mean(r.map((x) => x.completionLength.mean)) / (arm === 'ccr' ? 3 : 1), 9);
      const t = s.testAccuracy[arm];
      expect(t.low).toBeLessThanOrEqual(t.estimate);
      expect(t.high).toBeGreaterThanOrEqual(t.estimate);
    }
    expect(s.tokenReduction.tokensPerStep).toBeCloseTo(s.tokensPerStep.ccr / s.tokensPerStep.grpoLong - 1, 12);
    expect(s.tokenReduction.paper).toEqual({ tokensPerStep: -0.821, completionTokensPerStep: -0.791 });
    // the short window truncates more than the long one, and bounds what a step can generate
    expect(s.truncationRate.grpoShort).toBeGreaterThan(s.truncationRate.grpoLong);
    expect(s.completionTokensPerStep.grpoShort).toBeLessThanOrEqual(s.groups * s.candidates * quick.caps.short);
    expect(s.sftLength.samples).toBe(quick.lengthProbe);
    expect(s.sftConciseShare).toBe(quick.problems.conciseShare);
    for (const accuracy of Object.values(s.sftLength.accuracyByStyle)) expect(Number.isNaN(accuracy) || (accuracy >= 0 && accuracy <= 1)).toBe(true);
    expect(s.sftLength.p90).toBeGreaterThanOrEqual(s.sftLength.mean * 0.5);
    expect(s.sftLength.longWindowFits).toBe(s.sftLength.p99 < quick.caps.long);
    expect(Object.keys(s.testDifferences)).toEqual(['ccrMinusGrpoLong', 'ccrMinusGrpoShort', 'grpoShortMinusGrpoLong']);
    expect(JSON.parse(JSON.stringify(s)).tokensPerStep).toEqual(s.tokensPerStep);
  });

  it('returns the markdown section and writes report.md with the study figures and the compared runs', () => {
    expect(result.markdown).toContain('Tokens per step, ccr against grpo at the long window');
    expect(result.markdown).toContain('informative-group fraction');
    const report = readFileSync(result.reportPath, 'utf8');
    expect(report).toContain(result.markdown);
    expect(report).toContain('## Paired differences against grpoLong');
    const figures = [...report.matchAll(/\]\(([^)]+\.svg)\)/g)].map((m) => m[1]);
    for (const name of ['study-tokens-per-step.svg', 'study-informative-groups.svg', 'study-length-per-problem.svg', 'study-accuracy-reward.svg', 'study-concise-share.svg']) expect(figures).toContain(name);
    for (const f of figures) expect(readFileSync(join(out, 'report', f), 'utf8')).toMatch(/^<svg/);
  });
});
