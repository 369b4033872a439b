// The arithmetic of bench/hf-checkpoint.js: one mode's measurements carried to a bigger batch of the same model and
// to another model (the 7B estimate). Memory is three measured terms (bench/hf-checkpoint-child.js measures them):
//   state        RSS after the step − RSS at the start − the activations kept: weights, the reference copy,
//                gradients and AdamW moments; scales with the parameters
//   activations  peak of a training forward above the RSS before it, per token of its micro-batch (the model keeps
//                these buffers, sized by the largest run); scales with hidden size × layers
//   generation   peak of the rollout's generate above the RSS before it: its KV cache (float32 k and v of every
//                layer, every row at once: 2 · layers · kv heads · head dim · 4 bytes per row and position, the layout of
//                native/model/layer.h; with generation.maxRows only that many rows at once) and the rest (generate's packed copy of the dense weights, the logits), which
//                scales with the parameters
// and their sum is an upper bound of a later step's peak (a step ≥ 2 generates with the gradients, moments and
// activation buffers of the step before still allocated). Time: the optimizer step's seconds and the rest of the
// step's seconds per token times the tokens, both scaled with the parameters (the work per token).

/** Qwen2.5-7B (Qwen/Qwen2.5-7B config.json: hidden_size 3584, num_hidden_layers 28, 4 KV heads of head_dim 128). */
export const TARGET_7B = Object.freeze({ name: 'Qwen2.5-7B', parameters: 7.6e9, hiddenSize: 3584, numLayers: 28, kvDim: 512 });

/** Bytes of the KV cache per row and position: float32 k and v of every layer. */
export function kvBytesPerPosition(model) {
  return 2 * model.numLayers * model.kvDim * 4;
}

/**
 * Memory and time of a step of `at` = { tokens, rows, kvRows, cacheLength, runTokens } (prompt + completion tokens of all
 * rows, rows, the rows of one native generate call, the generation's longest prompt + cap, the largest micro-batch's
 * tokens) on `target` (default: the measured
 * model), by the measurements `m` of one mode on `m.model` = { parameters P, hiddenSize H, numLayers L, kvDim }:
 *   state       = m.stateBytes × P' / P
 *   activations = m.activationBytesPerToken × (H' · L') / (H · L) × at.runTokens
 *   generation  = (m.generationBytes − kv(m.model) × m.generationPositions) × P' / P + kv(target) × at.kvRows × at.cacheLength
 *   bytes       = state + activations + generation
 *   seconds     = (m.optimizerSeconds + (m.stepSeconds − m.optimizerSeconds) / m.stepTokens × at.tokens) × P' / P
 * (the optimizer step's time does not grow with the tokens; the rest is counted per token, an upper bound for a bigger
 * batch: decoding few rows reads every weight per token, many rows share those reads).
 */
export function estimateStep(m, at, target = m.model) {
  const byParameters = target.parameters / m.model.parameters;
  const activationScale = (target.hiddenSize * target.numLayers) / (m.model.hiddenSize * m.model.numLayers);
  const measuredKv = kvBytesPerPosition(m.model) * m.generationPositions;
  const generationRest = Math.max(0, m.generationBytes - measuredKv) * byParameters;
  const kvBytes = kvBytesPerPosition(target) * at.kvRows * at.cacheLength;
  const stateBytes = m.stateBytes * byParameters;
  const activationBytes = m.activationBytesPerToken * activationScale * at.runTokens;
  const secondsPerToken = ((m.stepSeconds - m.optimizerSeconds) / m.stepTokens) * byParameters;
  const optimizerSeconds = m.optimizerSeconds * byParameters;
  return {
    byParameters, activationScale, stateBytes, activationBytes, generationRest, kvBytes,
    bytes: stateBytes + activationBytes + generationRest + kvBytes, secondsPerToken, optimizerSeconds, seconds: optimizerSeconds + secondsPerToken * at.tokens,
  };
}

/**
 * A step of `requests` × `lists` rows capped at `maxTokens` (default: the measured cap), from the measured lengths:
 * each row's prompt tokens as measured and its completion tokens in proportion to the cap (every row reaches the cap
 * with random weights), the KV cache's length moved by the change of cap, micro-batches filled to the budget
 * (all of the tokens at once without one), and `maxRows` rows per generate call (0 = all).
 */
export function stepAt(m, requests, lists, maxTokens = m.maxTokens, maxRows = 0) {
  const rows = requests * lists;
  const tokens = rows * (m.promptTokens + (m.completionTokens * maxTokens) / m.maxTokens) / m.rows;
  const runTokens = m.microBatchTokens > 0 ? Math.min(m.microBatchTokens, tokens) : tokens;
  const kvRows = maxRows > 0 ? Math.min(maxRows, rows) : rows;
  return { rows, kvRows, tokens, cacheLength: m.cacheLength + maxTokens - m.maxTokens, runTokens };
}

/** The measured step itself, as {@link estimateStep} reads it. */
export function measuredStep(m) {
  return { rows: m.rows, kvRows: m.rows, tokens: m.stepTokens, cacheLength: m.cacheLength, runTokens: m.runTokens };
}
