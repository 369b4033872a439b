#!/usr/bin/env node
// Measures one candidate starting policy of the recommendation study: SFT from scratch, then the issue's
// prerequisite on validation requests (valid-item fraction; zero-reward groups against one drawn respondent
// and against the union, on the same sampled lists), with the SFT's CPU seconds (all threads).
// Usage: npx tsc -p tsconfig.json && node scripts/measure-rec-sft.js [--scale demo] [--films 300|all]
//        [--curriculum all|none] [--steps n] [--batch n] [--lr x] [--model demo|quick] [--vocab n] [--out dir]
import { parseArgs } from 'node:util';
import { recommendPolicySettings, trainRecommendPolicy } from '../dist/studies/recommend-policy.js';
import { CURRICULUM_ALL } from '../dist/studies/recommend-curriculum.js';
import { DEMO_MODELS } from '../dist/cli/models.js';
import { getThreads } from '../dist/runtime.js';

const { values } = parseArgs({
  options: {
    scale: { type: 'string', default: 'demo' }, films: { type: 'string' }, curriculum: { type: 'string' },
    steps: { type: 'string' }, batch: { type: 'string' }, lr: { type: 'string' }, model: { type: 'string' },
    vocab: { type: 'string' }, out: { type: 'string', default: '/tmp/measure-rec-sft' },
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
const result = await trainRecommendPolicy({ reporter, out: values.out, device: 'cpu', scale: values.scale, seeds: [0], overrides: {} }, settings);
console.log(JSON.stringify({
  films: settings.variant.films, curriculum: settings.curriculum !== null, sft: settings.sft, vocab: result.vocabSize,
  parameters: result.parameters, examples: result.sftExamples, threads: getThreads(), sftCpuSeconds: Number(sftCpu.toFixed(1)),
  checks: result.checksByCandidates,
}));
