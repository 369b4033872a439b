// Plain float64 reference of the log-prob kernels: obviously correct, slow. Tests and benchmarks
// compare the native kernels against it.

/** log-softmax(logits / temperature) gathered at targets, and entropy. logits [T, V], targets [T]. */
export function logprobsReference(
  logits: Float32Array, targets: Int32Array, temperature = 1, ignoreIndex = -100,
): { logp: Float64Array; entropy: Float64Array } {
  const rows = targets.length;
  const vocab = rows === 0 ? 0 : logits.length / rows;
  const logp = new Float64Array(rows); // [T]
  const entropy = new Float64Array(rows); // [T]
  for (let t = 0; t < rows; t++) {
    if (targets[t] === ignoreIndex) continue;
    const { logProbs } = rowLogSoftmax(logits, t * vocab, vocab, temperature);
    logp[t] = logProbs[targets[t]];
    entropy[t] = entropyOf(logProbs);
  }
  return { logp, entropy };
}

/** gradLogits [T, V] of a loss given gradLogp [T] and, optionally, gradEntropy [T]. */
export function logprobsBackwardReference(
  logits: Float32Array, targets: Int32Array, gradLogp: Float32Array, gradEntropy?: Float32Array,
  temperature = 1, ignoreIndex = -100,
): Float64Array {
  const rows = targets.length;
  const vocab = rows === 0 ? 0 : logits.length / rows;
  const grad = new Float64Array(logits.length); // [T, V]
  for (let t = 0; t < rows; t++) {
    if (targets[t] === ignoreIndex) continue;
    const { logProbs } = rowLogSoftmax(logits, t * vocab, vocab, temperature);
    const h = entropyOf(logProbs);
    const g = gradLogp[t];
    const ge = gradEntropy ? gradEntropy[t] : 0;
    for (let j = 0; j < vocab; j++) {
      const p = Math.exp(logProbs[j]);
      const logP = p > 0 ? logProbs[j] : 0;
      grad[t * vocab + j] = (g * ((j === targets[t] ? 1 : 0) - p) - ge * p * (logP + h)) / temperature;
    }
  }
  return grad;
}

/** hidden [T, H] · weight [V, H]ᵀ + bias [V] → logits [T, V] (float32, for comparisons). */
export function linearLogitsReference(hidden: Float32Array, weight: Float32Array, rows: number, bias?: Float32Array): Float32Array {
  const size = rows === 0 ? 0 : hidden.length / rows;
  const vocab = weight.length / size;
  const logits = new Float32Array(rows * vocab); // [T, V]
  for (let t = 0; t < rows; t++) {
    for (let v = 0; v < vocab; v++) {
      let acc = bias ? bias[v] : 0;
      for (let k = 0; k < size; k++) acc += hidden[t * size + k] * weight[v * size + k];
      logits[t * vocab + v] = acc;
    }
  }
  return logits;
}

function rowLogSoftmax(logits: Float32Array, offset: number, vocab: number, temperature: number): { logProbs: Float64Array } {
  let max = -Infinity;
  for (let j = 0; j < vocab; j++) max = Math.max(max, logits[offset + j] / temperature);
  let sum = 0;
  for (let j = 0; j < vocab; j++) sum += Math.exp(logits[offset + j] / temperature - max);
  const lse = max + Math.log(sum);
  const logProbs = new Float64Array(vocab); // [V]
  for (let j = 0; j < vocab; j++) logProbs[j] = logits[offset + j] / temperature - lse;
  return { logProbs };
}

function entropyOf(logProbs: Float64Array): number {
  let h = 0;
  for (const lp of logProbs) {
    const p = Math.exp(lp);
    if (p > 0) h -= p * lp;
  }
  return h;
}
