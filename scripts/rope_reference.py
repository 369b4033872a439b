"""RoPE inverse frequencies and cos/sin scale of a Hugging Face config, written from transformers 4.57.6's
src/transformers/modeling_rope_utils.py (the reference the native model is checked against; transformers
itself is not needed). Line numbers below are of that file. Everything runs in float32, as it does there."""
import math

import torch


def _default(c):
    """_compute_default_rope_parameters (lines 92-132): theta^(-2i/dim), dim = head_dim."""
    dim = c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]
    return dim, 1.0 / (c["rope_theta"] ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))


def _linear(c, s, seq_len):
    """_compute_linear_scaling_rope_parameters (lines 135-175): every frequency / factor."""
    _, inv_freq = _default(c)
    return inv_freq / s["factor"], 1.0


def _dynamic(c, s, seq_len):
    """_compute_dynamic_ntk_parameters (lines 178-243): the base grows only once seq_len > max_position_embeddings
    (seq_len = max(position_ids) + 1 of the forward, lines 62-81)."""
    dim, _ = _default(c)
    max_pos, factor = c["max_position_embeddings"], s["factor"]
    seq_len = max(seq_len, max_pos)
    base = c["rope_theta"] * ((factor * seq_len / max_pos) - (factor - 1)) ** (dim / (dim - 2))
    return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim)), 1.0


def _yarn(c, s, seq_len):
    """_compute_yarn_parameters (lines 246-368): NTK-by-parts frequencies and the attention factor."""
    dim, _ = _default(c)
    base, factor = c["rope_theta"], s["factor"]
    original = s.get("original_max_position_embeddings") or c["max_position_embeddings"]

    def mscale_of(scale, mscale=1):  # get_mscale, lines 314-317
        return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0

    attention = s.get("attention_factor")
    if attention is None:  # lines 320-324
        if s.get("mscale") and s.get("mscale_all_dim"):
            attention = float(mscale_of(factor, s["mscale"]) / mscale_of(factor, s["mscale_all_dim"]))
        else:
            attention = mscale_of(factor)
    beta_fast, beta_slow = s.get("beta_fast") or 32, s.get("beta_slow") or 1

    def correction_dim(rotations):  # find_correction_dim, lines 332-334
        return (dim * math.log(original / (rotations * 2 * math.pi))) / (2 * math.log(base))

    low, high = correction_dim(beta_fast), correction_dim(beta_slow)  # find_correction_range, lines 336-343
    if s.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:  # linear_ramp_factor, lines 345-351
        high += 0.001
    ramp = torch.clamp((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low), 0, 1)
    pos_freqs = base ** (torch.arange(0, dim, 2).float() / dim)  # lines 355-357
    extrapolation, interpolation = 1.0 / pos_freqs, 1.0 / (factor * pos_freqs)
    keep = 1 - ramp  # lines 362-367
    return interpolation * (1 - keep) + extrapolation * keep, attention


def _llama3(c, s, seq_len):
    """_compute_llama3_parameters (lines 453-515)."""
    _, inv_freq = _default(c)
    factor, low_ff, high_ff = s["factor"], s["low_freq_factor"], s["high_freq_factor"]
    old_len = s["original_max_position_embeddings"]
    low_wavelen, high_wavelen = old_len / low_ff, old_len / high_ff
    wavelen = 2 * math.pi / inv_freq
    scaled = torch.where(wavelen > low_wavelen, inv_freq / factor, inv_freq)
    smooth = (old_len / wavelen - low_ff) / (high_ff - low_ff)
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    medium = ~(wavelen < high_wavelen) * ~(wavelen > low_wavelen)
    return torch.where(medium, smoothed, scaled), 1.0


TYPES = {"linear": _linear, "dynamic": _dynamic, "yarn": _yarn, "llama3": _llama3}


def rope_frequencies(c, seq_len):
    """(inv_freq float32 [head_dim / 2], attention_factor) for a forward over positions < seq_len."""
    s = c.get("rope_scaling")
    kind = None if s is None else s.get("rope_type", s.get("type"))  # "type" is the old spelling (line 280 of modeling_qwen2.py)
    if kind in (None, "default"):
        return _default(c)[1], 1.0
    return TYPES[kind](c, s, seq_len)
