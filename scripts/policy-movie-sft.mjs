// Short SFT of the demo-sized built-in policy (4 layers, d 256) on the bundled movie catalog, then three
// sampled completions. Run: npx tsc -p tsconfig.json && node scripts/policy-movie-sft.mjs (a few minutes on 2 cores).
import { readFileSync } from 'node:fs';
import { BuiltinPolicy, Tokenizer, trainBpe, sftLoss } from '../dist/index.js';
const rows = readFileSync(new URL('../../shared/data/movies-catalog.jsonl', import.meta.url), 'utf8').trim().split('\n').map((l) => JSON.parse(l))
  .filter((r) => r.genres?.length && r.cast?.length);
const examples = rows.slice(0, 4000).map((r) => ({ prompt: `Genre: ${r.genres[0]}\nFilm:`, completion: ` ${r.title} (${r.year}), starring ${r.cast[0]}<|endoftext|>` }));
let t = performance.now();
const trained = trainBpe(examples.map((e) => e.prompt + e.completion.replace('<|endoftext|>', '')), { vocabSize: 2048 });
const tokenizer = new Tokenizer(trained.tokenizer, trained.config);
console.log('bpe s', ((performance.now() - t) / 1e3).toFixed(1));
const policy = BuiltinPolicy.create({ vocabSize: 2048, hiddenSize: 256, intermediateSize: 688, numLayers: 4, numHeads: 4, numKvHeads: 4, headDim: 64,
  maxPositions: 128, rmsNormEps: 1e-6, ropeTheta: 10000, tieEmbeddings: true, attentionBias: false, architecture: 'LlamaForCausalLM' },
  { seed: 1, tokenizer, optimizer: { learningRate: 2e-3, warmupSteps: 20, decaySteps: 280 } });
const enc = examples.map((e) => ({ p: tokenizer.encode(e.prompt).ids, c: tokenizer.encode(e.completion).ids }));
t = performance.now();
let tokens = 0;
for (let step = 0; step < 300; step++) {
  const b = Array.from({ length: 32 }, (_, i) => enc[(step * 32 + i) % enc.length]);
  const r = await policy.step({ prompts: b.map((x) => x.p), completions: b.map((x) => x.c) }, sftLoss());
  tokens += b.reduce((s, x) => s + x.p.length + x.c.length - 1, 0);
  if (step % 50 === 0 || step === 299) console.log('step', step, 'loss', r.loss.toFixed(3), 'tok/s', (tokens / ((performance.now() - t) / 1e3)).toFixed(0));
}
const out = await policy.generate(['Genre: Western\nFilm:', 'Genre: Comedy\nFilm:', 'Genre: Noir\nFilm:'], { maxNewTokens: 30, temperature: 0.7, seed: 4 });
for (const g of out) console.log(JSON.stringify(g.text), g.truncated);
