"""ctypes bindings of libgrpo_native.so for NumPy arrays (docs/c-abi.md): the embedding a Python trainer does.

Every array is C-contiguous with the dtype the header names; outputs are allocated here (caller-owned buffers).
A status other than GRPO_OK raises GrpoNativeError with the library's message for this thread.
"""
import ctypes
from ctypes import POINTER, Structure, c_char_p, c_double, c_float, c_int, c_int32, c_int64, c_uint8, c_uint16, c_uint32, c_uint64

import numpy as np

STATUS_NAMES = ["OK", "INVALID_ARGUMENT", "SHAPE", "NON_FINITE", "INDEX_RANGE", "VALUE_RANGE", "OUT_OF_MEMORY",
                "INTERNAL", "UNSUPPORTED"]
CTYPES = {np.float32: c_float, np.float64: c_double, np.int32: c_int32, np.uint8: c_uint8, np.uint16: c_uint16,
          np.uint32: c_uint32}


class GrpoNativeError(RuntimeError):
    def __init__(self, status, message):
        super().__init__(f"GRPO_ERR_{STATUS_NAMES[status]}: {message}")
        self.status = status


class LogprobOptions(Structure):
    _fields_ = [("temperature", c_float), ("ignore_index", c_int32)]


class SamplingParams(Structure):  # each per-row array [rows] or None (the default)
    _fields_ = [("temperature", POINTER(c_float)), ("top_k", POINTER(c_int32)), ("top_p", POINTER(c_float)),
                ("min_p", POINTER(c_float)), ("repetition_penalty", POINTER(c_float)),
                ("presence_penalty", POINTER(c_float)), ("frequency_penalty", POINTER(c_float)),
                ("allow_bits", POINTER(c_uint32)), ("history", POINTER(c_int32)),
                ("history_offsets", POINTER(c_int32)), ("seed", c_uint64), ("step", c_uint64),
                ("first_row", c_uint64)]


class AdvantageOptions(Structure):
    _fields_ = [("scale", c_int32), ("singleton", c_int32), ("nan_rewards", c_int32), ("std_epsilon", c_double)]


class AdvantageStats(Structure):
    _fields_ = [(name, c_double) for name in
                ("reward_mean", "reward_std", "frac_zero_std", "frac_cells_equal", "frac_cells_zero")]


class Surrogate(Structure):
    _fields_ = [("type", c_int32)] + [(name, c_double) for name in (
        "epsilon_low", "epsilon_high", "delta", "dual_clip_c", "log_ratio_clamp", "cispo_cap", "sapo_tau_pos",
        "sapo_tau_neg", "vespo_k_pos", "vespo_lambda_pos", "vespo_k_neg", "vespo_lambda_neg")]


class KlOptions(Structure):
    _fields_ = [("estimator", c_int32), ("clamp", c_int32), ("bias_correction", c_int32), ("beta", c_double),
                ("k2_gradient", c_int32)]


class AggregateOptions(Structure):
    _fields_ = [("mode", c_int32), ("empty_is_nan", c_int32)] + [(name, c_double) for name in (
        "token_count", "sequence_count", "max_completion_length", "loss_scale_factor", "accumulation_steps")]


class LossOptions(Structure):
    _fields_ = [("surrogate", Surrogate), ("is_level", c_int32), ("num_items", c_int32), ("kl", KlOptions),
                ("aggregate", AggregateOptions), ("top_entropy_quantile", c_double)]


LOSS_STAT_NAMES = ("loss", "policy_loss", "kl_mean", "clip_ratio_low", "clip_ratio_high", "clip_ratio_region",
                   "dual_clip_ratio", "ratio_mean", "ratio_min", "ratio_max", "entropy_mean", "ppo_kl", "tokens",
                   "phi_seq_mean")


class LossStats(Structure):
    _fields_ = [(name, c_double) for name in LOSS_STAT_NAMES]


def pointer(array, dtype):
    """The data pointer of a C-contiguous array of exactly `dtype`, or None for None (a NULL argument)."""
    if array is None:
        return None
    if array.dtype != dtype or not array.flags["C_CONTIGUOUS"]:
        raise TypeError(f"expected a C-contiguous {np.dtype(dtype)} array, got {array.dtype}")
    return array.ctypes.data_as(POINTER(CTYPES[dtype]))


F32, I32, U8 = POINTER(c_float), POINTER(c_int32), POINTER(c_uint8)
PROTOTYPES = {
    "grpo_abi_version": (c_int32, []),
    "grpo_last_error": (c_char_p, []),
    "grpo_set_num_threads": (c_int, [c_int]),
    "grpo_get_num_threads": (c_int, []),
    "grpo_logprob_forward": (c_int, [F32, I32, c_int64, c_int64, POINTER(LogprobOptions), F32, F32]),
    "grpo_logprob_forward_lse": (c_int, [F32, I32, c_int64, c_int64, POINTER(LogprobOptions), F32, F32, F32]),
    "grpo_logprob_backward_saved": (c_int, [F32, I32, c_int64, c_int64, POINTER(LogprobOptions), F32, F32, F32, F32,
                                            F32]),
    "grpo_sample": (c_int, [F32, c_int64, c_int64, POINTER(SamplingParams), I32, F32, F32]),
    "grpo_group_advantages": (c_int, [F32, c_int64, c_int64, I32, c_int64, POINTER(AdvantageOptions), F32,
                                      POINTER(AdvantageStats)]),
    "grpo_rank_advantages": (c_int, [F32, c_int64, c_int64, c_int64, POINTER(AdvantageOptions), F32,
                                     POINTER(AdvantageStats)]),
    "grpo_policy_loss": (c_int, [F32, F32, F32, F32, c_int32, U8, I32, F32, c_int64, c_int64, POINTER(LossOptions),
                                 F32, POINTER(LossStats)]),
}


class GrpoNative:
    """The library at `path` with typed prototypes; each kernel method returns new NumPy arrays."""

    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        for name, (restype, argtypes) in PROTOTYPES.items():
            function = getattr(self.lib, name)
            function.restype, function.argtypes = restype, argtypes

    def check(self, status):
        if status != 0:
            raise GrpoNativeError(status, self.last_error())

    def abi_version(self):
        return self.lib.grpo_abi_version()

    def last_error(self):
        return self.lib.grpo_last_error().decode()

    def set_threads(self, n):
        self.check(self.lib.grpo_set_num_threads(n))

    def logprob_forward(self, logits, targets, options):
        """logits [rows, vocab] float32, targets [rows] int32 -> (logp [rows], entropy [rows])."""
        rows, vocab = logits.shape
        logp, entropy = np.empty(rows, np.float32), np.empty(rows, np.float32)
        self.check(self.lib.grpo_logprob_forward(pointer(logits, np.float32), pointer(targets, np.int32), rows, vocab,
                                                 ctypes.byref(options), pointer(logp, np.float32),
                                                 pointer(entropy, np.float32)))
        return logp, entropy

    def logprob_forward_lse(self, logits, targets, options):
        """logits [rows, vocab] float32, targets [rows] int32 -> (logp [rows], lse [rows]), without entropy."""
        rows, vocab = logits.shape
        logp, lse = np.empty(rows, np.float32), np.empty(rows, np.float32)
        self.check(self.lib.grpo_logprob_forward_lse(pointer(logits, np.float32), pointer(targets, np.int32), rows, vocab,
                                                     ctypes.byref(options), pointer(logp, np.float32), None,
                                                     pointer(lse, np.float32)))
        return logp, lse

    def logprob_backward_saved(self, logits, targets, options, lse, grad_logp):
        """The gradient [rows, vocab] of the logits from the forward's lse [rows] and grad_logp [rows]."""
        rows, vocab = logits.shape
        grad = np.empty((rows, vocab), np.float32)
        self.check(self.lib.grpo_logprob_backward_saved(pointer(logits, np.float32), pointer(targets, np.int32), rows, vocab,
                                                        ctypes.byref(options), pointer(lse, np.float32), None,
                                                        pointer(grad_logp, np.float32), None, pointer(grad, np.float32)))
        return grad

    def sample(self, logits, params):
        """logits [rows, vocab] -> (tokens, logp, logp_raw), each [rows]."""
        rows, vocab = logits.shape
        tokens, logp, logp_raw = np.empty(rows, np.int32), np.empty(rows, np.float32), np.empty(rows, np.float32)
        self.check(self.lib.grpo_sample(pointer(logits, np.float32), rows, vocab, ctypes.byref(params),
                                        pointer(tokens, np.int32), pointer(logp, np.float32),
                                        pointer(logp_raw, np.float32)))
        return tokens, logp, logp_raw

    def group_advantages(self, rewards, group_size, options):
        """rewards [n] in contiguous groups of group_size -> (advantages [n], AdvantageStats)."""
        advantages, stats = np.empty_like(rewards), AdvantageStats()
        self.check(self.lib.grpo_group_advantages(pointer(rewards, np.float32), rewards.size, group_size, None,
                                                  rewards.size // group_size, ctypes.byref(options),
                                                  pointer(advantages, np.float32), ctypes.byref(stats)))
        return advantages, stats

    def rank_advantages(self, rewards, options):
        """rewards [groups, candidates, ranks] -> (advantages of the same shape, AdvantageStats)."""
        advantages, stats = np.empty_like(rewards), AdvantageStats()
        self.check(self.lib.grpo_rank_advantages(pointer(rewards, np.float32), *rewards.shape, ctypes.byref(options),
                                                 pointer(advantages, np.float32), ctypes.byref(stats)))
        return advantages, stats

    def policy_loss(self, logp, old_logp, ref_logp, advantages, mask, options, entropy=None, segments=None):
        """[rows, cols] inputs (advantages [rows] or [rows, cols]) -> (grad_logp [rows, cols], LossStats)."""
        rows, cols = logp.shape
        grad_logp, stats = np.empty_like(logp), LossStats()
        self.check(self.lib.grpo_policy_loss(
            pointer(logp, np.float32), pointer(old_logp, np.float32), pointer(ref_logp, np.float32),
            pointer(advantages, np.float32), int(advantages.ndim == 2), pointer(mask, np.uint8),
            pointer(segments, np.int32), pointer(entropy, np.float32), rows, cols, ctypes.byref(options),
            pointer(grad_logp, np.float32), ctypes.byref(stats)))
        return grad_logp, stats
