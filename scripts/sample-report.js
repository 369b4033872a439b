// A sample evaluation report from synthetic runs on the bundled movies-multi benchmark: two simulated
// policies whose lists draw more relevant films as training goes on, evaluated with the real metrics,
// bootstrap, curves and diagnostics. Nothing here was trained.
// Run: npx tsc -p tsconfig.json && node scripts/sample-report.js [outDir = docs/sample-report]
import {
  answersCompleted,
  buildReport,
  bootstrap,
  ccrSignal,
  compareZeroRewards,
  evaluateRecommendations,
  loadMoviesMulti,
  loadMoviesMultiFilms,
  mulberry32,
  popularityIndex,
  randomInt,
  renderItems,
  respondentRewards,
  respondentVarianceShare,
  weightedIndex,
  writeReport,
} from '../dist/index.js';

const K = 20;
const CANDIDATES = 8;
const STEPS = 1000;
const VALIDATE_EVERY = 100;
const RUNS = [
  // name, final share of relevant films in a list, steps to reach 63% of it, seconds per step
  { name: 'GRPO (respondent rows)', ceiling: 0.22, tau: 350, secondsPerStep: 4.0, seed: 1 },
  { name: 'ReMaRk (union)', ceiling: 0.34, tau: 220, secondsPerStep: 4.3, seed: 2 },
];

const films = loadMoviesMultiFilms();
const popular = films.slice(0, 1000); // catalog.jsonl is sorted by mentions
const popularity = popularityIndex(films.map((f) => ({ title: f.title, year: f.year, popularity: f.mentions })));
const mentions = new Map(films.map((f) => [`${f.title}\u0000${f.year}`, f.mentions]));
const validation = loadMoviesMulti('validation');
const train = loadMoviesMulti('train');

const skillAt = (run, step) => 0.04 + run.ceiling * (1 - Math.exp(-step / run.tau));

/** A simulated list of K films: each slot a relevant film with probability `skill`, else a popular one. */
function simulatedList(request, skill, random) {
  const relevant = request.relevant ?? request.respondents.flatMap((r) => r.items);
  const weights = relevant.map((f) => ((mentions.get(`${f.title}\u0000${f.year}`) ?? 0) + 1) ** 0.6);
  const list = [];
  for (let slot = 0; slot < K; slot++) {
    const fromRelevant = random() < skill;
    list.push(fromRelevant ? relevant[weightedIndex(random, weights, weights.reduce((a, b) => a + b, 0))] : popular[randomInt(random, popular.length)]);
  }
  return `Here are some films you might like:\n\n${renderItems(list)}`;
}

function validationCurves(run) {
  const random = mulberry32(run.seed);
  const curves = { 'recall@20 (rows)': [], 'NDCG@20 (rows)': [] };
  let final;
  for (let step = 0; step <= STEPS; step += VALIDATE_EVERY) {
    const lists = validation.map((request) => simulatedList(request, skillAt(run, step), random));
    const [at] = evaluateRecommendations(lists, validation, { ks: [K], popularity });
    const [recall, ndcg] = bootstrap([at.series.rowRecall, at.series.rowNdcg], { resamples: 1000, seed: step });
    const time = step * run.secondsPerStep;
    curves['recall@20 (rows)'].push({ step, time, value: recall.estimate, low: recall.low, high: recall.high });
    curves['NDCG@20 (rows)'].push({ step, time, value: ndcg.estimate, low: ndcg.low, high: ndcg.high });
    final = at.series;
  }
  return { curves, final };
}

function traces(run) {
  const random = mulberry32(run.seed + 100);
  const noise = () => random() + random() + random() - 1.5;
  const reward = [];
  const length = [];
  for (let step = 0; step < STEPS; step++) {
    reward.push(Math.max(0, skillAt(run, step) * 0.8 + 0.04 * noise()));
    length.push(230 - 40 * (1 - Math.exp(-step / 300)) + 12 * noise());
  }
  return { 'reward (mean rank reward)': reward, 'completion length (tokens)': length };
}

function diagnostics() {
  const random = mulberry32(7);
  const requests = train.slice(0, 256);
  const completions = requests.map((request) => Array.from({ length: CANDIDATES }, () => simulatedList(request, 0.08, random)));
  const respondents = requests.map((request) => randomInt(random, request.respondents.length));
  const { respondent, union } = compareZeroRewards(completions, requests, { k: K, respondents });
  const several = requests.map((request, g) => [request, completions[g]]).filter(([request]) => request.respondents.length >= 2);
  const rewards = several.map(([request, lists]) => respondentRewards(lists, request, { k: K }));
  const varianceShare = respondentVarianceShare(rewards, CANDIDATES, K, { resamples: 1000 });
  // CCR, N = 3: per-prompt difficulty, correct counts ~ Binomial(3, p) per candidate
  const counts = [];
  const capped = [];
  for (let g = 0; g < 256; g++) {
    const p = random() ** 0.7;
    for (let s = 0; s < CANDIDATES; s++) {
      const correct = [0, 1, 2].filter(() => random() < p).length;
      counts.push(correct);
      const done = random() < 0.8 ? 3 : randomInt(random, 3);
      const answers = Array.from({ length: done }, (_, k) => `Problem ${k + 1} … Answer ${k + 1}: \\boxed{${k}}`);
      capped.push(done < 3 ? `${answers.join('\n')}\nAnswer ${done + 1}: \\boxed{` : answers.join('\n'));
    }
  }
  return {
    zeroRewards: { 'respondent row': respondent, union },
    varianceShare,
    ccr: ccrSignal(counts, CANDIDATES),
    answersCompleted: answersCompleted(capped, 3),
  };
}

const runs = RUNS.map((run) => {
  const { curves, final } = validationCurves(run);
  const pick = ['rowRecall', 'requestRecall', 'unionRecall', 'relevantRecall', 'rowNdcg', 'hitLogPopularity', 'truthLogPopularity'];
  return { name: run.name, validation: curves, traces: traces(run), final: Object.fromEntries(pick.map((m) => [`${m}@${K}`, final[m]])) };
});

const report = await buildReport(
  {
    title: 'Sample report: two simulated runs on movies-multi (validation split)',
    notes:
      'Synthetic: no model was trained. Each "run" is a simulated policy whose lists of 20 films draw a growing share of ' +
      'relevant films (popularity-weighted) and otherwise popular films, evaluated on the 200 validation requests of the ' +
      'bundled movies-multi benchmark with the real metrics. Generated by `scripts/sample-report.js`.',
    runs,
    diagnostics: diagnostics(),
  },
  { bootstrap: { resamples: 2000, seed: 0 } },
);
const written = await writeReport(report, process.argv[2] ?? 'docs/sample-report');
console.log(written.join('\n'));
