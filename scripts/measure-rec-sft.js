#!/usr/bin/env node
// Measures one candidate starting policy of the recommendation study: SFT from scratch, then the issue's
// prerequisite on validation requests (valid-item fraction; zero-reward groups against one drawn respondent
// and against the union, on the same sampled lists), with the SFT's CPU seconds (all threads).
// Usage: npx tsc -p tsconfig.json && node scripts/measure-rec-sft.js [--scale demo] [--films 300|all]
//        [--curriculum all|none] [--steps n] [--batch n] [--lr x] [--model demo|quick] [--vocab n]
//        [--ranks K --max-new-tokens n] [--out dir]
//        node scripts/measure-rec-sft.js --recheck <out of an earlier run> [same flags]: only the checks, on its saved policy
import { parseArgs } from 'node:util';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { measurePrerequisite, recommendPolicySettings, recommendTaskOptions, trainRecommendPolicy } from '../dist/studies/recommend-policy.js';
import { loadPolicy } from '../dist/cli/models.js';
import { loadMoviesData } from '../dist/trainer/task-recommend.js';
import { CURRICULUM_ALL } from '../dist/studies/recommend-curriculum.js';
import { DEMO_MODELS } from '../dist/cli/models.js';
import { getThreads } from '../dist/runtime.js';

const { values } = parseArgs({
  options: {
    scale: { type: 'string', default: 'demo' }, films: { type: 'string' }, curriculum: { type: 'string' },
    steps: { type: 'string' }, batch: { type: 'string' }, lr: { type: 'string' }, model: { type: 'string' },
    vocab: { type: 'string' }, recheck: { type: 'string' }, ranks: { type: 'string' }, 'max-new-tokens': { type: 'string' }, out: { type: 'string', default: '/tmp/measure-rec-sft' },
  },
});
const settings = recommendPolicySettings(values.scale);
if (values.films) settings.variant.films = values.films === 'all' ? 'all' : Number(values.films);
if (values.curriculum) settings.curriculum = values.curriculum === 'none' ? null : CURRICULUM_ALL;
if (values.steps) settings.sft.steps = Number(values.steps);
if (values.batch) settings.sft.batchSize = Number(values.batch);
if (values.lr) settings.sft.learningRate = Number(values.lr);
if (values.model) settings.model = DEMO_MODELS[values.model];
if (values.vocab) settings.vocabSize = Number(values.vocab);
if (values.ranks) settings.task.rewards = { ...settings.task.rewards, ranks: Number(values.ranks) };
if (values['max-new-tokens']) settings.task.generation = { ...settings.task.generation, maxNewTokens: Number(values['max-new-tokens']) };

// CPU seconds of the process (every thread) while the SFT phase's bar is open
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
let sftCpu = NaN;
const reporter = {
  phase(name) {
    const [started, wall] = [cpu(), performance.now()];
    return { update() {}, status() {}, startAt() {}, done(summary) {
      if (name.startsWith('recommendation SFT')) sftCpu = cpu() - started;
      console.error(`${name}: ${summary ?? ''} (${((performance.now() - wall) / 1000).toFixed(1)} s wall)`);
    } };
  },
  line: (t) => console.error(t), note: (t) => console.error(t),
};
if (values.recheck) {
  const moviesDir = existsSync(join(values.recheck, 'data')) ? join(values.recheck, 'data') : '';
  const policy = await loadPolicy(join(values.recheck, 'sft', 'policy'));
  const checks = await measurePrerequisite(policy, loadMoviesData(moviesDir), settings, recommendTaskOptions(settings, moviesDir));
  console.log(JSON.stringify({ recheck: values.recheck, checks }));
  process.exit(0);
}
const result = await trainRecommendPolicy({ reporter, out: values.out, device: 'cpu', scale: values.scale, seeds: [0], overrides: {} }, settings);
console.log(JSON.stringify({
  films: settings.variant.films, ranks: settings.task.rewards.ranks, maxNewTokens: settings.task.generation.maxNewTokens, curriculum: settings.curriculum !== null, sft: settings.sft, vocab: result.vocabSize,
  parameters: result.parameters, examples: result.sftExamples, threads: getThreads(), sftCpuSeconds: Number(sftCpu.toFixed(1)),
  checks: result.checksByCandidates,
}));
