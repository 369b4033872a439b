// The raw shape of the addon's exports (native/addon/*.cc), hand-typed next to the loader.
// Arrays are passed zero-copy; outputs are allocated by the TS layer. `async` = true returns a
// Promise that settles when the kernel has run on a worker thread.

type F32 = Float32Array;
type I32 = Int32Array;
type Done = Promise<void> | undefined;

export interface NativeBinding {
  setThreads(threads: number): void;
  getThreads(): number;
  cpuPath(): 'avx512' | 'avx2' | 'generic';
  /** Seconds to stream `data` once through the pool (memory-read roof probe). */
  probeRead(data: F32): number;
  /** FMA roof probe: 12 independent FMA chains per thread for `iterations` rounds. */
  probeFma(iterations: number): { seconds: number; flops: number };

  logprobForward(
    logits: F32, targets: I32, vocab: number, temperature: number, ignoreIndex: number,
    logp: F32, entropy: F32 | null, async: boolean,
  ): Done;
  logprobBackward(
    logits: F32, targets: I32, vocab: number, temperature: number, ignoreIndex: number,
    gradLogp: F32, gradEntropy: F32 | null, gradLogits: F32, async: boolean,
  ): Done;
  linearLogprobForward(
    hidden: F32, weight: F32, bias: F32 | null, targets: I32, hiddenSize: number, temperature: number,
    ignoreIndex: number, chunkRows: number, chunkVocab: number, logp: F32, entropy: F32 | null, lse: F32 | null,
    async: boolean,
  ): Done;
  linearLogprobBackward(
    hidden: F32, weight: F32, bias: F32 | null, targets: I32, hiddenSize: number, temperature: number,
    ignoreIndex: number, chunkRows: number, chunkVocab: number, gradLogp: F32, gradEntropy: F32 | null,
    gradHidden: F32, gradWeight: F32, gradBias: F32 | null, accumulate: boolean, async: boolean,
  ): Done;
  /** linearLogprobForward with hidden and weight as bfloat16 bit patterns. */
  linearLogprobForwardBf16(
    hidden: Uint16Array, weight: Uint16Array, bias: F32 | null, targets: I32, hiddenSize: number, temperature: number,
    ignoreIndex: number, chunkRows: number, chunkVocab: number, logp: F32, entropy: F32 | null, lse: F32 | null,
    async: boolean,
  ): Done;
  /** linearLogprobBackward with hidden and weight as bfloat16 bit patterns; the gradients are float32. */
  linearLogprobBackwardBf16(
    hidden: Uint16Array, weight: Uint16Array, bias: F32 | null, targets: I32, hiddenSize: number, temperature: number,
    ignoreIndex: number, chunkRows: number, chunkVocab: number, gradLogp: F32, gradEntropy: F32 | null,
    gradHidden: F32, gradWeight: F32, gradBias: F32 | null, accumulate: boolean, async: boolean,
  ): Done;
  groupAdvantages(
    rewards: F32, groupSize: number, groupIds: I32 | null, numGroups: number, options: Float64Array,
    advantages: F32, stats: Float64Array, async: boolean,
  ): Done;
  rankAdvantages(
    rewards: F32, groups: number, candidates: number, ranks: number, options: Float64Array,
    advantages: F32, stats: Float64Array, async: boolean,
  ): Done;
  scatterItemAdvantages(
    itemAdvantages: F32, segments: I32, mask: Uint8Array, eosPositions: I32, cols: number, ranks: number,
    shaping: Float64Array, out: F32, async: boolean,
  ): Done;
  broadcastAdvantages(
    advantages: F32, mask: Uint8Array, truncated: Uint8Array | null, prefixEnd: I32 | null, cols: number,
    truncation: number, out: F32, lossMask: Uint8Array, async: boolean,
  ): Done;
  policyLoss(
    logp: F32, oldLogp: F32 | null, refLogp: F32 | null, advantages: F32, mask: Uint8Array, segments: I32 | null,
    entropy: F32 | null, cols: number, options: Float64Array, gradLogp: F32, stats: Float64Array, async: boolean,
  ): Done;
  gemm(
    transA: boolean, transB: boolean, m: number, n: number, k: number, alpha: number, a: F32, lda: number,
    b: F32, ldb: number, beta: number, c: F32, ldc: number, async: boolean,
  ): Done;
  /** gemm with bfloat16-rounded inputs where the CPU has AVX512_BF16 (same arguments). */
  gemmBf16: NativeBinding['gemm'];
  gemmBf16Native(): boolean;
  sample(
    logits: F32, vocab: number, params: NativeSamplingParams, tokens: I32, logp: F32 | null, logpRaw: F32 | null,
    async: boolean,
  ): Done;
  samplingProbs(logits: F32, vocab: number, params: NativeSamplingParams, probs: F32, async: boolean): Done;
}

/** Per-row sampler parameters as the addon reads them (null = the default for every row); built by lib/kernels/sampling.ts. */
export interface NativeSamplingParams {
  temperature: F32 | null;
  topK: I32 | null;
  topP: F32 | null;
  minP: F32 | null;
  repetitionPenalty: F32 | null;
  presencePenalty: F32 | null;
  frequencyPenalty: F32 | null;
  /** [B, ceil(V / 32)] allow bits */
  allow: Uint32Array | null;
  history: I32 | null;
  /** [B + 1] */
  historyOffsets: I32 | null;
  seedLo: number;
  seedHi: number;
  stepLo: number;
  stepHi: number;
}
