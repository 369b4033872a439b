"""The C ABI embedded from Python: libgrpo_native.so through ctypes and NumPy arrays reproduces the TS API's
log-prob (its saved backward too), sampling, group and rank advantages and policy loss bit for bit (both call the same kernels), on inputs
written here and computed in TS by test/abi/ts-results.mjs. Run by `npm run test:abi` (needs numpy and a build:
npm run build:ts plus build/Release, or a prebuild). GRPO_NATIVE_LIB names the library to load.
"""
import base64
import json
import os
import re
import subprocess
import sys
import threading
import unittest

import numpy as np

from grpo_native import (AdvantageOptions, AggregateOptions, GrpoNative, GrpoNativeError, KlOptions, LogprobOptions,
                         LossOptions, SamplingParams, Surrogate, pointer)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LIBRARY = os.environ.get("GRPO_NATIVE_LIB", os.path.join(ROOT, "build", "Release", "libgrpo_native.so"))
GRPO_ERR_NON_FINITE = 3


def encode(value):
    if isinstance(value, np.ndarray):
        return {"dtype": str(value.dtype), "data": base64.b64encode(np.ascontiguousarray(value).tobytes()).decode()}
    if isinstance(value, dict):
        return {key: encode(v) for key, v in value.items()}
    return value


def decode(value):
    if isinstance(value, dict) and "dtype" in value:
        return np.frombuffer(base64.b64decode(value["data"]), dtype=value["dtype"])
    return {key: decode(v) for key, v in value.items()} if isinstance(value, dict) else value


def ts_results(cases):
    """Each case's outputs from the TS API (one node process for all of them)."""
    script = os.path.join(HERE, "ts-results.mjs")
    stdin = json.dumps({"cases": [encode(case) for case in cases]})
    done = subprocess.run(["node", script], input=stdin, capture_output=True, text=True, check=True, cwd=ROOT)
    return [decode(result) for result in json.loads(done.stdout)]


def header_abi_version():
    with open(os.path.join(ROOT, "native", "include", "grpo", "grpo.h")) as header:
        text = header.read()
    major, minor = (int(re.search(rf"#define GRPO_ABI_VERSION_{part} (\d+)", text).group(1)) for part in ("MAJOR", "MINOR"))
    return major * 1000 + minor


def bits(array):
    """The bit patterns of an array (float32 -> uint32, float64 -> uint64): equal bits, not just equal values."""
    array = np.ascontiguousarray(array).ravel()
    return array.view({4: np.uint32, 8: np.uint64, 1: np.uint8}[array.dtype.itemsize])


def stats_array(stats, names):
    return np.array([getattr(stats, name) for name in names], np.float64)


ADVANTAGE_STATS = ("reward_mean", "reward_std", "frac_zero_std")
RANK_STATS = ADVANTAGE_STATS + ("frac_cells_equal", "frac_cells_zero")
LOSS_STATS = ("loss", "policy_loss", "kl_mean", "clip_ratio_low", "clip_ratio_high", "clip_ratio_region",
              "dual_clip_ratio", "ratio_mean", "ratio_min", "ratio_max", "entropy_mean", "ppo_kl", "tokens")
rng = np.random.default_rng(20261202)


def logprob_case():
    logits = rng.normal(0, 3, (7, 50)).astype(np.float32)  # [rows, vocab]
    logits[2, 5] = -np.inf  # a masked token
    targets = rng.integers(0, 50, 7).astype(np.int32)  # [rows]
    targets[3] = -100  # ignore_index: logp = entropy = 0
    ts = {"kernel": "logprob", "logits": logits.ravel(), "targets": targets,
          "options": {"temperature": 0.7, "entropy": True, "ignoreIndex": -100}}

    def c(lib):
        logp, entropy = lib.logprob_forward(logits, targets, LogprobOptions(0.7, -100))
        return {"logp": logp, "entropy": entropy}
    return ts, c


def logprob_saved_case():
    logits = rng.normal(0, 3, (6, 70)).astype(np.float32)  # [rows, vocab]
    targets = rng.integers(0, 70, 6).astype(np.int32)  # [rows]
    targets[1] = -100  # ignored: a zero gradient row
    grad_logp = rng.normal(0, 1, 6).astype(np.float32)  # [rows]
    ts = {"kernel": "logprobSaved", "logits": logits.ravel(), "targets": targets, "gradLogp": grad_logp,
          "options": {"temperature": 0.9, "ignoreIndex": -100}}

    def c(lib):
        options = LogprobOptions(0.9, -100)
        _, lse = lib.logprob_forward_lse(logits, targets, options)
        return {"lse": lse, "grad": lib.logprob_backward_saved(logits, targets, options, lse, grad_logp)}
    return ts, c


def sample_case():
    rows, vocab = 6, 40
    logits = rng.normal(0, 2, (rows, vocab)).astype(np.float32)  # [rows, vocab]
    per_row = {  # [rows] each; temperature 0 is a greedy row
        "temperature": np.array([1.0, 0.7, 0.0, 1.3, 0.9, 1.0], np.float32),
        "topK": np.array([0, 5, 0, 10, 0, 3], np.int32),
        "topP": np.array([1.0, 0.9, 1.0, 0.8, 0.95, 1.0], np.float32),
        "minP": np.array([0.0, 0.0, 0.0, 0.05, 0.0, 0.1], np.float32),
        "repetitionPenalty": np.array([1.2, 1.0, 1.1, 1.0, 1.3, 1.0], np.float32),
        "presencePenalty": np.array([0.0, 0.5, 0.0, 0.2, 0.0, 0.0], np.float32),
        "frequencyPenalty": np.array([0.1, 0.0, 0.0, 0.3, 0.0, 0.0], np.float32),
    }
    history = rng.integers(0, vocab, 15).astype(np.int32)  # [offsets[rows]]
    offsets = np.array([0, 3, 3, 8, 10, 15, 15], np.int32)  # [rows + 1]
    allow = np.full((rows, 2), 0xFFFFFFFF, np.uint32)  # [rows, ceil(vocab / 32)]
    allow[4, 0] = 0x0000FFFF  # row 4 may draw only tokens 0..15 and 32..39
    ts = {"kernel": "sample", "logits": logits.ravel(), "vocab": vocab,
          "options": {**per_row, "seed": 1234, "step": 7, "history": {"ids": history, "offsets": offsets},
                      "allow": allow.ravel()}}

    def c(lib):
        p = SamplingParams(pointer(per_row["temperature"], np.float32), pointer(per_row["topK"], np.int32),
                           pointer(per_row["topP"], np.float32), pointer(per_row["minP"], np.float32),
                           pointer(per_row["repetitionPenalty"], np.float32),
                           pointer(per_row["presencePenalty"], np.float32),
                           pointer(per_row["frequencyPenalty"], np.float32), pointer(allow, np.uint32),
                           pointer(history, np.int32), pointer(offsets, np.int32), 1234, 7)
        tokens, logp, logp_raw = lib.sample(logits, p)
        return {"tokens": tokens, "logp": logp, "logpRaw": logp_raw}
    return ts, c


def group_advantages_case():
    rewards = rng.choice(np.array([0.0, 0.25, 1.0], np.float32), 12)  # [B], groups of 4
    rewards[5] = np.nan  # an unscorable completion leaves the statistics
    rewards[8:12] = 1.0  # a group with zero std
    ts = {"kernel": "groupAdvantages", "rewards": rewards, "options": {"groupSize": 4, "stdEpsilon": 1e-4}}

    def c(lib):  # scale group, singleton zero, NaN excluded: the TS defaults
        advantages, stats = lib.group_advantages(rewards, 4, AdvantageOptions(0, 0, 0, 1e-4))
        return {"advantages": advantages, "stats": stats_array(stats, ADVANTAGE_STATS)}
    return ts, c


def rank_advantages_case():
    rewards = rng.choice(np.array([0.0, 0.5, 1.0], np.float32), (2, 4, 3))  # [groups, candidates, ranks]
    rewards[1, :, 2] = 0.0  # a (group, rank) cell of equal zero rewards
    rewards[0, 1, 0] = np.nan  # counts as 0 with nanRewards "asZero" (Rank-GRPO)
    ts = {"kernel": "rankAdvantages", "rewards": rewards.ravel(),
          "options": {"candidates": 4, "ranks": 3, "scale": "group", "stdEpsilon": 1e-4, "nanRewards": "asZero"}}

    def c(lib):
        advantages, stats = lib.rank_advantages(rewards, AdvantageOptions(0, 0, 1, 1e-4))
        return {"advantages": advantages.ravel(), "stats": stats_array(stats, RANK_STATS)}
    return ts, c


def loss_inputs(rows=4, cols=9):
    logp = rng.normal(-1.5, 0.5, (rows, cols)).astype(np.float32)  # [rows, cols]
    old = (logp + rng.normal(0, 0.2, (rows, cols))).astype(np.float32)
    ref = (logp + rng.normal(0, 0.2, (rows, cols))).astype(np.float32)
    entropy = rng.uniform(0.1, 3.0, (rows, cols)).astype(np.float32)
    lengths = np.array([9, 6, 3, 7])[:rows]
    mask = (np.arange(cols)[None, :] < lengths[:, None]).astype(np.uint8)
    return logp, old, ref, entropy, mask


def surrogate(type=0, epsilon_low=0.2, epsilon_high=0.2):
    """grpo_surrogate with the TS defaults (lib/kernels/loss.ts LOSS_DEFAULTS) for the fields not given."""
    return Surrogate(type, epsilon_low, epsilon_high, 0, 0, 0, 5, 1, 1.05, 2, 3, 3, 2)


def loss_case(ts_options, c_options, per_token=False, items=False):
    logp, old, ref, entropy, mask = loss_inputs()
    rows, cols = logp.shape
    advantages = rng.normal(0, 1, (rows, cols) if per_token else rows).astype(np.float32)  # [rows, cols] or [rows]
    segments = np.tile(np.repeat(np.arange(-1, 4, dtype=np.int32), 2)[:cols], (rows, 1)) if items else None
    ts_input = {"shape": [rows, cols], "logp": logp.ravel(), "oldLogp": old.ravel(), "refLogp": ref.ravel(),
                "advantages": advantages.ravel(), "mask": mask.ravel(), "entropy": entropy.ravel()}
    if items:
        ts_input["segments"] = segments.ravel()
    ts = {"kernel": "policyLoss", "input": ts_input, "options": ts_options}

    def c(lib):
        grad, stats = lib.policy_loss(logp, old, ref, advantages, mask, c_options, entropy, segments)
        return {"gradLogp": grad.ravel(), "stats": stats_array(stats, LOSS_STATS)}
    return ts, c


def loss_cases():
    clip_k3 = loss_case(  # clip with asymmetric epsilon, k3 KL, sequence-mean token-mean
        {"epsilonLow": 0.2, "epsilonHigh": 0.28, "beta": 0.04, "klEstimator": "k3", "aggregation": "seqMeanTokenMean"},
        LossOptions(surrogate(0, 0.2, 0.28), 0, 0, KlOptions(3, 0, 0, 0.04), AggregateOptions(2, 0, 0, 0, 0, 0, 1), 1))
    sapo_sequence = loss_case(  # SAPO on sequence-level ratios, global token mean over a given token count
        {"lossType": "sapo", "isLevel": "sequence", "aggregation": "globalTokenMean", "tokenCount": 40},
        LossOptions(surrogate(3), 1, 0, KlOptions(3, 0, 0, 0), AggregateOptions(0, 0, 40, 0, 0, 0, 1), 1))
    rank_grpo = loss_case(  # Rank-GRPO item-level ratios with per-token advantages and verl's k3 clamp
        {"isLevel": "item", "numItems": 3, "beta": 0.1, "klClamp": "verl", "aggregation": "seqMeanTokenSum",
         "topEntropyQuantile": 0.5},
        LossOptions(surrogate(0), 3, 3, KlOptions(3, 1, 0, 0.1), AggregateOptions(3, 0, 0, 0, 0, 0, 1), 0.5),
        per_token=True, items=True)
    return {"loss clip k3": clip_k3, "loss sapo sequence": sapo_sequence, "loss rank-grpo items": rank_grpo}


class CAbiFromPython(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.lib = GrpoNative(LIBRARY)
        cls.cases = {"logprob": logprob_case(), "logprob saved backward": logprob_saved_case(), "sample": sample_case(),
                     "group advantages": group_advantages_case(), "rank advantages": rank_advantages_case(),
                     **loss_cases()}
        cls.expected = dict(zip(cls.cases, ts_results([ts for ts, _ in cls.cases.values()])))

    def test_the_library_reports_the_abi_of_the_headers(self):
        self.assertEqual(self.lib.abi_version(), header_abi_version())

    def test_every_kernel_reproduces_the_ts_results_bit_for_bit(self):
        for case, (_, c) in self.cases.items():
            for threads in (1, 2):  # the results do not depend on the pool size
                self.lib.set_threads(threads)
                for name, value in c(self.lib).items():
                    with self.subTest(case=case, output=name, threads=threads):
                        self.assertEqual(bits(value).tolist(), bits(self.expected[case][name]).tolist())

    def test_the_cases_exercise_what_they_name(self):
        token = self.expected["sample"]["tokens"][4]
        self.assertTrue(token < 16 or token >= 32, "row 4 draws an allowed token")
        self.assertEqual(self.expected["group advantages"]["advantages"][5], 0, "the NaN reward gets a zero advantage")
        self.assertTrue(np.all(np.isfinite(self.expected["loss clip k3"]["stats"])), "the loss statistics are finite")
        saved = self.expected["logprob saved backward"]
        self.assertEqual(saved["lse"][1], 0, "the ignored row's lse is 0")
        self.assertTrue(np.all(saved["grad"][70:140] == 0) and np.any(saved["grad"][:70] != 0), "row 1's gradient is 0")

    def test_a_failure_is_a_status_and_a_message_for_the_calling_thread(self):
        logits = np.zeros((2, 3), np.float32)  # [rows, vocab]
        logits[1, 2] = np.nan
        with self.assertRaises(GrpoNativeError) as failure:
            self.lib.logprob_forward(logits, np.zeros(2, np.int32), LogprobOptions(1.0, -100))
        self.assertEqual(failure.exception.status, GRPO_ERR_NON_FINITE)
        self.assertIn("row 1", self.lib.last_error())
        other_thread = []
        worker = threading.Thread(target=lambda: other_thread.append(self.lib.last_error()))
        worker.start()
        worker.join()
        self.assertEqual(other_thread, [""], "grpo_last_error is per thread")

    def test_a_wrong_dtype_is_refused_before_the_call(self):
        with self.assertRaises(TypeError):
            self.lib.logprob_forward(np.zeros((1, 3)), np.zeros(1, np.int32), LogprobOptions(1.0, -100))


if __name__ == "__main__":
    print(f"loading {LIBRARY} with Python {sys.version.split()[0]}, NumPy {np.__version__}")
    unittest.main(verbosity=2)
