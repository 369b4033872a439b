// The fused LM head (linear log-prob) at (T=2048, H=512, V=32768), float32 and bfloat16 inputs, against the GEMM
// alone and the unfused GEMM + log-prob. Every fast result is checked against the float64 reference in the same
// run before it is timed. Run: npm run build && node bench/linear-logprob.bench.js
import {
  getThreads, cpuPath, fromBf16, linearLogprobsBackwardSync, linearLogprobsSync, logprobsSync, matmulBf16Native, toBf16,
} from '../dist/index.js';
import { linearLogitsReference, logprobsReference } from '../dist/reference/logprob.js';
import { native } from '../dist/binding/index.js';
import { execFileSync } from 'node:child_process';
import { randomLogits, targetsFor } from './logits.js';
import { measureRoofs } from './roof.js';
import { fixed, maxAbsDiff, measure } from './timing.js';

function fusedRows(roofs) {
  const T = 2048, H = 512, V = 32768;
  const hidden = randomLogits(T * H, 1).map((x) => x / 8);
  const weight = randomLogits(V * H, 2).map((x) => x / 64);
  const targets = targetsFor(T, V);
  const check = 32;
  const refLogits = linearLogitsReference(hidden.subarray(0, check * H), weight, check);
  const error = maxAbsDiff(linearLogprobsSync(hidden.subarray(0, check * H), weight, targets.subarray(0, check)).logp,
    logprobsReference(refLogits, targets.subarray(0, check)).logp);
  if (error > 1e-3) throw new Error(`linearLogprobs differs from the reference by ${error}`);
  const flops = 2 * T * H * V;
  const fused = measure('fused forward', () => linearLogprobsSync(hidden, weight, targets), 5);
  const memory = JSON.parse(execFileSync(process.execPath, [new URL('./fused-memory.js', import.meta.url).pathname, T, H, V], { encoding: 'utf8' }));
  const gradLogp = new Float32Array(T).fill(1);
  const { lse } = linearLogprobsSync(hidden, weight, targets, { lse: true });
  const fusedBackward = measure('fused backward (saved lse)', () => linearLogprobsBackward(hidden, weight, targets, gradLogp, lse), 3);
  const kept = linearLogprobsSync(hidden, weight, targets, { lse: true, keepLogits: true });
  const keptBackward = measure('fused backward (saved lse and logits)', () => linearLogprobsBackwardSync(hidden, weight, targets, gradLogp, { saved: kept }), 3);
  const logits = new Float32Array(T * V); // [T, V]: the unfused path's 256 MB
  const gemmCall = () => native().gemm(hidden, weight, logits,
    { transA: false, transB: true, m: T, n: V, k: H, alpha: 1, beta: 0, lda: H, ldb: H, ldc: V }, false);
  const gemm = measure('GEMM alone', gemmCall, 5);
  const unfused = measure('unfused (GEMM + logprobs)', () => {
    gemmCall();
    logprobsSync(logits, targets);
  }, 5);
  const workspaceMb = (512 * 2048 * 4) / 2 ** 20; // the default tile
  return [
    { kernel: 'fused linear forward', shape: `${T}x${H}x${V}`, ms: fused.ms, rme: fused.rme, GFLOPs: flops / fused.ms / 1e6,
      fmaRoof: flops / fused.ms / 1e6 / roofs.fmaGflops, vsGemm: fused.ms / gemm.ms, vsUnfused: fused.ms / unfused.ms, workspaceMb,
      peakExtraMb: memory.forwardPeakExtraMb, maxError: error },
    { kernel: 'fused linear backward', shape: `${T}x${H}x${V}`, ms: fusedBackward.ms, rme: fusedBackward.rme,
      GFLOPs: (3 * flops) / fusedBackward.ms / 1e6, fmaRoof: (3 * flops) / fusedBackward.ms / 1e6 / roofs.fmaGflops,
      vsGemm: fusedBackward.ms / gemm.ms, vsUnfused: NaN, workspaceMb, peakExtraMb: memory.backwardPeakExtraMb, maxError: error },
    { kernel: 'fused linear backward, logits kept', shape: `${T}x${H}x${V}`, ms: keptBackward.ms, rme: keptBackward.rme,
      GFLOPs: (2 * flops) / keptBackward.ms / 1e6, fmaRoof: (2 * flops) / keptBackward.ms / 1e6 / roofs.fmaGflops,
      vsGemm: keptBackward.ms / gemm.ms, vsUnfused: NaN, workspaceMb: workspaceMb + (T * V * 4) / 2 ** 20,
      peakExtraMb: memory.keptPeakExtraMb, maxError: error },
    { kernel: 'GEMM alone (NT)', shape: `${T}x${H}x${V}`, ms: gemm.ms, rme: gemm.rme, GFLOPs: flops / gemm.ms / 1e6,
      fmaRoof: flops / gemm.ms / 1e6 / roofs.fmaGflops, vsGemm: 1, vsUnfused: NaN, workspaceMb: 256, peakExtraMb: NaN, maxError: NaN },
  ];
}

// The backward with the forward's lse (3 products per tile), on the default tile.
function linearLogprobsBackward(hidden, weight, targets, gradLogp, lse) {
  return native().linearLogprobBackward(hidden, weight, null, targets, 512,
    { temperature: 1, ignoreIndex: -100, chunkRows: 0, chunkVocab: 0 }, gradLogp, null,
    new Float32Array(hidden.length), new Float32Array(weight.length), null, false, false, lse, null);
}

// Fused forward and forward+backward with bf16 hidden/weight against the same calls on float32 inputs. The FMA
// roof is float32's: with AVX512_BF16, vdpbf16ps does two products per lane, so bf16 can reach 2× that roof.
function bf16Rows(roofs) {
  const T = 2048, H = 512, V = 32768;
  const hidden = toBf16(randomLogits(T * H, 3).map((x) => x / 8)); // [T, H] bf16 bits
  const weight = toBf16(randomLogits(V * H, 4).map((x) => x / 64)); // [V, H] bf16 bits
  const wideHidden = fromBf16(hidden), wideWeight = fromBf16(weight);
  const targets = targetsFor(T, V);
  const check = 32;
  const refLogits = linearLogitsReference(wideHidden.subarray(0, check * H), wideWeight, check);
  const maxError = maxAbsDiff(linearLogprobsSync(hidden.subarray(0, check * H), weight, targets.subarray(0, check), { dtype: 'bf16' }).logp,
    logprobsReference(refLogits, targets.subarray(0, check)).logp);
  if (maxError > 1e-3) throw new Error(`linearLogprobs (bf16) differs from the reference by ${maxError}`);
  const gradLogp = new Float32Array(T).fill(1 / T);
  const flops = 2 * T * H * V;
  const rows = [];
  for (const [dtype, h, w] of [['bf16', hidden, weight], ['f32', wideHidden, wideWeight]]) {
    const forward = measure(`fused ${dtype} forward`, () => linearLogprobsSync(h, w, targets, { dtype }), 5);
    const saved = linearLogprobsSync(h, w, targets, { dtype, lse: true });
    const backward = measure(`fused ${dtype} backward`, () => linearLogprobsBackwardSync(h, w, targets, gradLogp, { dtype, saved }), 3);
    rows.push({ dtype, forwardMs: forward.ms, backwardMs: backward.ms, fwdBwdMs: forward.ms + backward.ms,
      GFLOPs: (4 * flops) / (forward.ms + backward.ms) / 1e6, maxError });
  }
  return rows.map((r) => ({ ...r, fmaRoof: r.GFLOPs / roofs.fmaGflops, vsF32: rows[1].fwdBwdMs / r.fwdBwdMs }));
}

const roofs = await measureRoofs();
console.log(`cpu path ${cpuPath()}, ${getThreads()} threads; read roof ${fixed(roofs.readGBs, 1)} GB/s, FMA roof ${fixed(roofs.fmaGflops, 0)} GFLOP/s`);
console.table(fusedRows(roofs).map((r) => ({ ...r, ms: fixed(r.ms), rme: `±${fixed(r.rme, 1)}%`, GFLOPs: fixed(r.GFLOPs, 0),
  fmaRoof: `${fixed(100 * r.fmaRoof, 0)}%`, vsGemm: `${fixed(r.vsGemm)}×`, vsUnfused: `${fixed(r.vsUnfused)}×`,
  workspaceMb: fixed(r.workspaceMb, 0), peakExtraMb: fixed(r.peakExtraMb, 0), maxError: Number.isFinite(r.maxError) ? r.maxError.toExponential(1) : '' })));
console.log(`fused LM head ${2048}x${512}x${32768}, forward + backward (8·THV FLOPs: the backward reuses the forward's lse and recomputes each tile); bf16 dot products: ${matmulBf16Native() ? 'AVX512_BF16' : 'no (float32 GEMM on widened values)'}`);
console.table(bf16Rows(roofs).map((r) => ({ ...r, forwardMs: fixed(r.forwardMs), backwardMs: fixed(r.backwardMs), fwdBwdMs: fixed(r.fwdBwdMs),
  GFLOPs: fixed(r.GFLOPs, 0), fmaRoof: `${fixed(100 * r.fmaRoof, 0)}%`, vsF32: `${fixed(r.vsF32)}×`, maxError: r.maxError.toExponential(1) })));
