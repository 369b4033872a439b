// Peak extra memory of one fused linear log-prob call (forward, then backward), measured in a fresh
// process so that nothing else has raised the peak: VmHWM after the call minus VmRSS before it; then of the
// same call keeping the logits (keepLogits), whose T × V floats make it the higher peak.
// Prints one JSON line; bench/linear-logprob.bench.js runs it. Usage: node bench/fused-memory.js T H V
import { linearLogprobsBackwardSync, linearLogprobsSync } from '../dist/index.js';
import { peakRssMb, rssMb } from './timing.js';

const [T, H, V] = process.argv.slice(2).map(Number);
const hidden = new Float32Array(T * H).fill(0.01); // [T, H]
const weight = new Float32Array(V * H).fill(0.001); // [V, H]
const targets = Int32Array.from({ length: T }, (_, t) => t % V);
const gradLogp = new Float32Array(T).fill(1);
const gradHidden = new Float32Array(T * H).fill(0); // outputs touched before the baseline is taken
const gradWeight = new Float32Array(V * H).fill(0);
linearLogprobsSync(hidden.subarray(0, H), weight, targets.subarray(0, 1)); // load the addon and warm up
const before = rssMb();
const forward = linearLogprobsSync(hidden, weight, targets, { lse: true });
const forwardPeak = peakRssMb() - before;
linearLogprobsBackwardSync(hidden, weight, targets, gradLogp, { gradHidden, gradWeight, saved: forward });
const backwardPeak = peakRssMb() - before;
const kept = linearLogprobsSync(hidden, weight, targets, { lse: true, keepLogits: true });
linearLogprobsBackwardSync(hidden, weight, targets, gradLogp, { gradHidden, gradWeight, saved: kept });
console.log(JSON.stringify({ forwardPeakExtraMb: forwardPeak, backwardPeakExtraMb: backwardPeak, keptPeakExtraMb: peakRssMb() - before }));
