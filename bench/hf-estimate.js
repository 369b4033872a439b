// The arithmetic of bench/hf-checkpoint.js: one mode's measurements carried to a bigger batch of the same model
// and to another model (the 7B estimate), in two terms, what stays and what comes and goes with the tokens:
//   state     = (RSS after the step − RSS at the process start)      weights, gradients, AdamW moments, the reference
//                                                                     copy and the activation buffers kept after a step
//   transient = (peak RSS − RSS after the step)                       the generation's KV cache, generate's packed copy
//                                                                     of the weights, the scoring buffers
// The transient is counted per token of the step (prompt + completion tokens of all rows) and scaled with the tokens,
// as the KV cache of generate (every row at once) grows: an upper bound, as the packed copy does not grow.

/** Qwen2.5-7B (Qwen/Qwen2.5-7B config.json: hidden_size 3584, num_hidden_layers 28): 7.6e9 parameters. */
export const TARGET_7B = Object.freeze({ name: 'Qwen2.5-7B', parameters: 7.6e9, hiddenSize: 3584, numLayers: 28 });

/**
 * What one step of `tokens` tokens needs on `target` by the measurements `m` of one mode on the model `m.model`:
 *   bytes = (m.stateBytes / P) × target.parameters + (m.transientBytes / m.stepTokens) × (H_t · L_t) / (H · L) × tokens
 *   seconds = (m.stepSeconds / m.stepTokens) × target.parameters / P × tokens
 * (P, H, L: the measured model's parameters, hidden size and layers; per-token activations and KV grow with hidden
 * size × layers, the work per token with the parameters). `target` defaults to the measured model itself.
 * @param m { model: { parameters, hiddenSize, numLayers }, stateBytes, transientBytes, stepSeconds, stepTokens }
 */
export function estimateStep(m, tokens, target = m.model) {
  const P = m.model.parameters;
  const bytesPerParameter = m.stateBytes / P;
  const transientPerToken = m.transientBytes / m.stepTokens;
  const activationScale = (target.hiddenSize * target.numLayers) / (m.model.hiddenSize * m.model.numLayers);
  const stateBytes = bytesPerParameter * target.parameters;
  const transientBytes = transientPerToken * activationScale * tokens;
  const secondsPerToken = (m.stepSeconds / m.stepTokens) * (target.parameters / P);
  return {
    bytesPerParameter, transientPerToken, activationScale, stateBytes, transientBytes,
    bytes: stateBytes + transientBytes, secondsPerToken, seconds: secondsPerToken * tokens,
  };
}

/** The step's tokens at `requests` × `lists` rows of the measured lengths (prompt + completion tokens per row). */
export function tokensAt(m, requests, lists) {
  return (m.stepTokens / m.rows) * requests * lists;
}
