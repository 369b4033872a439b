// The TS side of the C ABI test (test/abi/c_abi.py): reads the cases as JSON on stdin, runs each through the
// public TS API and writes the outputs as JSON on stdout. Typed arrays travel as {dtype, data: base64 of the
// little-endian bytes}, so every value crosses bit for bit; statistics travel as Float64Arrays (NaN included).
import {
  groupAdvantagesSync, logprobsBackwardSync, logprobsSync, policyLossSync, rankAdvantagesSync, sampleSync,
} from '../../dist/index.js';

const TYPES = { float32: Float32Array, float64: Float64Array, int32: Int32Array, uint8: Uint8Array, uint32: Uint32Array };
const ADVANTAGE_STATS = ['rewardMean', 'rewardStd', 'fracRewardZeroStd'];
const RANK_STATS = [...ADVANTAGE_STATS, 'fracCellsEqual', 'fracCellsZero'];
const LOSS_STATS = ['policyLoss', 'kl', 'clipRatioLow', 'clipRatioHigh', 'clipRatioRegion', 'dualClipRatio',
  'ratioMean', 'ratioMin', 'ratioMax', 'entropy', 'ppoKl', 'tokens'];

function decode(_key, value) {
  if (value === null || typeof value !== 'object' || !('dtype' in value)) return value;
  const bytes = Buffer.from(value.data, 'base64');
  return new TYPES[value.dtype](bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
}

function encode(_key, value) {
  if (!ArrayBuffer.isView(value)) return value;
  const dtype = Object.keys(TYPES).find((name) => value instanceof TYPES[name]);
  return { dtype, data: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64') };
}

/** Statistics in the order of grpo_advantage_stats. */
const statsOf = (stats, names) => Float64Array.from(names, (name) => stats[name]);

const RUN = {
  logprob: (c) => logprobsSync(c.logits, c.targets, c.options),
  logprobSaved: (c) => {
    const forward = logprobsSync(c.logits, c.targets, { ...c.options, lse: true });
    return { lse: forward.lse, grad: logprobsBackwardSync(c.logits, c.targets, c.gradLogp, { ...c.options, saved: forward }) };
  },
  sample: (c) => sampleSync(c.logits, c.vocab, c.options),
  groupAdvantages: (c) => {
    const { advantages, stats } = groupAdvantagesSync(c.rewards, c.options);
    return { advantages, stats: statsOf(stats, ADVANTAGE_STATS) };
  },
  rankAdvantages: (c) => {
    const { advantages, stats } = rankAdvantagesSync(c.rewards, c.options);
    return { advantages, stats: statsOf(stats, RANK_STATS) };
  },
  policyLoss: (c) => {
    const { loss, gradLogp, stats } = policyLossSync(c.input, c.options);
    return { gradLogp, stats: Float64Array.of(loss, ...LOSS_STATS.map((name) => stats[name])) };
  },
};

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const { cases } = JSON.parse(Buffer.concat(chunks).toString('utf8'), decode);
process.stdout.write(JSON.stringify(cases.map((c) => RUN[c.kernel](c)), encode));
