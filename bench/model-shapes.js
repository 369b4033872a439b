// Model shapes and synthetic batches shared by the CPU and GPU model benchmarks.

/** The demo's model (npm start): 4 layers, hidden 256. */
export const DEMO = Object.freeze({
  vocabSize: 4096, hiddenSize: 256, intermediateSize: 688, numLayers: 4, numHeads: 4, numKvHeads: 4, headDim: 64,
  maxPositions: 256, rmsNormEps: 1e-6, ropeTheta: 10000, tieEmbeddings: true, attentionBias: false, architecture: 'LlamaForCausalLM',
});

/** Qwen2.5-0.5B's shape (random weights). */
export const QWEN05B = Object.freeze({
  vocabSize: 151936, hiddenSize: 896, intermediateSize: 4864, numLayers: 24, numHeads: 14, numKvHeads: 2, headDim: 64,
  maxPositions: 32768, rmsNormEps: 1e-6, ropeTheta: 1000000, tieEmbeddings: true, attentionBias: true, architecture: 'Qwen2ForCausalLM',
});

/** n token ids in [0, vocab) from a seeded LCG. */
function tokens(n, vocab, seed) {
  let s = seed >>> 0;
  return Int32Array.from({ length: n }, () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) % vocab));
}

/** rows prompts of promptLen and completions of completionLen random tokens of config's vocabulary. */
export function batchOf(config, rows, promptLen, completionLen, seed) {
  return {
    prompts: Array.from({ length: rows }, (_, i) => tokens(promptLen, config.vocabSize, seed + i)),
    completions: Array.from({ length: rows }, (_, i) => tokens(completionLen, config.vocabSize, seed + 1000 + i)),
  };
}
