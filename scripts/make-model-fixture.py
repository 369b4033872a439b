#!/usr/bin/env python3
"""Writes test/fixtures/model/<name>/: tiny random Llama/Qwen2/Qwen3/Mistral checkpoints and the logits of an
independent PyTorch implementation of the Hugging Face forward (written here from the architecture
description: RMSNorm, rotate-half RoPE, grouped-query causal attention, SwiGLU; Qwen3's per-head q/k RMSNorm;
rope_scaling from scripts/rope_reference.py). The "-tiny" folders of real checkpoints keep every field of the
real config.json (test/fixtures/hf-configs) and shrink only the sizes. Run once with
Debian's python3-torch:  /usr/bin/python3 scripts/make-model-fixture.py   (CI never needs torch)."""
import json
import os

import torch

from rope_reference import rope_frequencies
from safetensors_io import DTYPES, write_safetensors

HERE = os.path.dirname(__file__)
OUT = os.path.join(HERE, "..", "test", "fixtures", "model")
REAL = os.path.join(HERE, "..", "test", "fixtures", "hf-configs")

# The sizes of every scaled-down checkpoint (head_dim, when the real config has one, keeps its ratio to hidden / heads).
TINY = dict(vocab_size=48, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2)


def scaled(real_name, **fields):
    """The real config.json of `real_name` with TINY sizes and `fields` (e.g. rope_scaling) replaced."""
    with open(os.path.join(REAL, real_name + ".config.json")) as f:
        c = json.load(f)
    ratio = c["head_dim"] / (c["hidden_size"] // c["num_attention_heads"]) if c.get("head_dim") else None
    c.update(TINY)
    if ratio is not None:
        c["head_dim"] = int(ratio * TINY["hidden_size"] // TINY["num_attention_heads"])
    c.update(fields)
    return c

CONFIGS = {
    "qwen2-tiny": dict(architectures=["Qwen2ForCausalLM"], model_type="qwen2", vocab_size=50, hidden_size=32,
                       intermediate_size=56, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                       max_position_embeddings=64, rms_norm_eps=1e-6, rope_theta=1000000.0, tie_word_embeddings=False,
                       hidden_act="silu", torch_dtype="float32"),
    "llama-tiny": dict(architectures=["LlamaForCausalLM"], model_type="llama", vocab_size=40, hidden_size=24,
                       intermediate_size=40, num_hidden_layers=3, num_attention_heads=6, num_key_value_heads=6,
                       max_position_embeddings=48, rms_norm_eps=1e-5, rope_theta=10000.0, tie_word_embeddings=True,
                       attention_bias=False, hidden_act="silu", torch_dtype="bfloat16"),
    "qwen3-tiny": dict(architectures=["Qwen3ForCausalLM"], model_type="qwen3", vocab_size=45, hidden_size=32,
                       intermediate_size=48, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=12,
                       max_position_embeddings=64, rms_norm_eps=1e-6, rope_theta=1000000.0, tie_word_embeddings=True,
                       attention_bias=False, hidden_act="silu", torch_dtype="float32"),
}
SEQUENCES = {"qwen2-tiny": [[3, 17, 42, 8, 8, 1, 49, 20, 0, 33, 12], [7, 7, 2]],
             "llama-tiny": [[1, 39, 5, 22, 17, 30, 2, 9], [4, 11, 38, 0, 25, 6]],
             "qwen3-tiny": [[2, 44, 13, 13, 7, 30, 1, 0, 41], [9, 3]]}

# Real configs, scaled: the context shrinks with the sizes (original_max_position_embeddings 16, so that the
# positions of a 30-token sequence reach the frequencies RoPE scaling changes).
LONG = [(7 * i + 3) % 48 for i in range(30)]
SCALED = {
    "qwen2.5-0.5b-tiny": scaled("qwen2.5-0.5b", max_position_embeddings=64, sliding_window=64),
    # Qwen2.5's README: add "rope_scaling": {"factor": 4.0, "original_max_position_embeddings": 32768, "type": "yarn"}
    "qwen2.5-yarn-tiny": scaled("qwen2.5-0.5b", max_position_embeddings=64, sliding_window=64, torch_dtype="float16",
                                rope_scaling={"factor": 4.0, "original_max_position_embeddings": 16, "type": "yarn"}),
    "qwen3-0.6b-tiny": scaled("qwen3-0.6b", max_position_embeddings=64),
    # Qwen3's model card: "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}
    "qwen3-yarn-tiny": scaled("qwen3-0.6b", max_position_embeddings=64,
                              rope_scaling={"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16}),
    "llama-3.2-1b-tiny": scaled("llama-3.2-1b", max_position_embeddings=512, rope_scaling={
        "factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0, "original_max_position_embeddings": 16, "rope_type": "llama3"}),
    # SmolLM2 (Llama layout), float32, with linear position interpolation
    "smollm-linear-tiny": dict(TINY, architectures=["LlamaForCausalLM"], model_type="llama", max_position_embeddings=64,
                               rms_norm_eps=1e-5, rope_theta=100000, tie_word_embeddings=True, attention_bias=False,
                               mlp_bias=False, hidden_act="silu", rope_interleaved=False, torch_dtype="float32",
                               rope_scaling={"type": "linear", "factor": 2.0}),
    # Mistral layout (no sliding window), untied, YaRN with mscale / mscale_all_dim and an untruncated range
    "mistral-yarn-tiny": dict(TINY, architectures=["MistralForCausalLM"], model_type="mistral", max_position_embeddings=64,
                              rms_norm_eps=1e-5, rope_theta=1000000.0, tie_word_embeddings=False, sliding_window=None,
                              hidden_act="silu", torch_dtype="float32", head_dim=8,
                              rope_scaling={"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16,
                                            "beta_fast": 16.0, "mscale": 1.0, "mscale_all_dim": 0.5, "truncate": False}),
    # Dynamic NTK: within max_position_embeddings transformers keeps the plain frequencies
    "mistral-dynamic-tiny": dict(TINY, architectures=["MistralForCausalLM"], model_type="mistral", max_position_embeddings=32,
                                 rms_norm_eps=1e-5, rope_theta=10000.0, tie_word_embeddings=True, sliding_window=None,
                                 hidden_act="silu", torch_dtype="float32", rope_scaling={"rope_type": "dynamic", "factor": 2.0}),
}
CONFIGS.update(SCALED)
SEQUENCES.update({name: [LONG, [5, 9, 1, 44, 20]] for name in SCALED})


def weights(c, generator):
    h, i, v = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    hd = c.get("head_dim", h // c["num_attention_heads"])
    q, kv = c["num_attention_heads"] * hd, c["num_key_value_heads"] * hd
    bias = c["model_type"] == "qwen2" or c.get("attention_bias", False)
    rand = lambda *shape: torch.randn(*shape, generator=generator) * 0.3
    w = {"model.embed_tokens.weight": rand(v, h), "model.norm.weight": 1 + rand(h)}
    for l in range(c["num_hidden_layers"]):
        p = f"model.layers.{l}."
        w[p + "input_layernorm.weight"] = 1 + rand(h)
        w[p + "post_attention_layernorm.weight"] = 1 + rand(h)
        for name, out in (("q", q), ("k", kv), ("v", kv)):
            w[p + f"self_attn.{name}_proj.weight"] = rand(out, h)
            if bias:
                w[p + f"self_attn.{name}_proj.bias"] = rand(out)
        if c["model_type"] == "qwen3":
            w[p + "self_attn.q_norm.weight"] = 1 + rand(hd)
            w[p + "self_attn.k_norm.weight"] = 1 + rand(hd)
        w[p + "self_attn.o_proj.weight"] = rand(h, q)
        w[p + "mlp.gate_proj.weight"] = rand(i, h)
        w[p + "mlp.up_proj.weight"] = rand(i, h)
        w[p + "mlp.down_proj.weight"] = rand(h, i)
    if not c["tie_word_embeddings"]:
        w["lm_head.weight"] = rand(v, h)
    return w


def rms_norm(x, weight, eps):
    x64 = x.double()
    return (x64 * torch.rsqrt(x64.pow(2).mean(-1, keepdim=True) + eps) * weight.double())


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def dense(module, x, W):
    """nn.Linear: x @ weight.T (+ bias)."""
    return x @ W[module + ".weight"].T + W.get(module + ".bias", 0)


def forward(c, w, ids, linear=None):
    """Logits [len, vocab] of one sequence, in float64. `linear(module, x, W)` computes the module's output from its
    weights W (a float64 copy of w) and input (default: x @ weight.T + bias; scripts/lora-forward-reference.py adds LoRA)."""
    h, nh, nkv = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"]
    hd, eps, n = c.get("head_dim", h // nh), c["rms_norm_eps"], len(ids)
    W = {k: t.double() for k, t in w.items()}
    linear = linear or dense
    x = W["model.embed_tokens.weight"][torch.tensor(ids)]
    inv_freq, attention_factor = rope_frequencies(c, n)  # float32, as transformers computes them
    angles = torch.outer(torch.arange(n, dtype=torch.float64), inv_freq.double())
    cos, sin = (torch.cat((angles, angles), -1).cos() * attention_factor, torch.cat((angles, angles), -1).sin() * attention_factor)
    mask = torch.full((n, n), float("-inf"), dtype=torch.float64).triu(1)
    for l in range(c["num_hidden_layers"]):
        p = f"model.layers.{l}."
        y = rms_norm(x, W[p + "input_layernorm.weight"], eps)
        proj = lambda name: linear(p + f"self_attn.{name}_proj", y, W)
        q = proj("q").view(n, nh, hd).transpose(0, 1)
        k = proj("k").view(n, nkv, hd).transpose(0, 1)
        v = proj("v").view(n, nkv, hd).transpose(0, 1)
        if p + "self_attn.q_norm.weight" in W:  # Qwen3: RMSNorm of each head's vector before RoPE
            q, k = rms_norm(q, W[p + "self_attn.q_norm.weight"], eps), rms_norm(k, W[p + "self_attn.k_norm.weight"], eps)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        k, v = k.repeat_interleave(nh // nkv, 0), v.repeat_interleave(nh // nkv, 0)
        attn = torch.softmax(q @ k.transpose(1, 2) / hd ** 0.5 + mask, -1) @ v
        x = x + linear(p + "self_attn.o_proj", attn.transpose(0, 1).reshape(n, nh * hd), W)
        y = rms_norm(x, W[p + "post_attention_layernorm.weight"], eps)
        gate, up = linear(p + "mlp.gate_proj", y, W), linear(p + "mlp.up_proj", y, W)
        x = x + linear(p + "mlp.down_proj", torch.nn.functional.silu(gate) * up, W)
    head = W["lm_head.weight"] if "lm_head.weight" in W else W["model.embed_tokens.weight"]
    return rms_norm(x, W["model.norm.weight"], eps) @ head.T


# config.json "torch_dtype" → the safetensors dtype the fixture is written in
FILE_DTYPES = {"float32": "F32", "bfloat16": "BF16", "float16": "F16"}


def main():
    for name, c in CONFIGS.items():
        folder = os.path.join(OUT, name)
        os.makedirs(folder, exist_ok=True)
        w = weights(c, torch.Generator().manual_seed(1234))
        dtype = FILE_DTYPES[c["torch_dtype"]]
        torch_dtype = DTYPES[dtype][0]
        w = {k: t.to(torch_dtype).float() for k, t in w.items()}  # the reference sees exactly the weights the file holds
        write_safetensors(os.path.join(folder, "model.safetensors"), w, dtype)
        with open(os.path.join(folder, "config.json"), "w") as f:
            json.dump(c, f, indent=2)
        expected = [{"tokens": ids, "logits": [[round(v, 7) for v in row] for row in forward(c, w, ids).tolist()]}
                    for ids in SEQUENCES[name]]
        with open(os.path.join(folder, "expected.json"), "w") as f:
            json.dump({"generator": "scripts/make-model-fixture.py (PyTorch %s, float64)" % torch.__version__, "sequences": expected}, f)


if __name__ == "__main__":
    main()
