#!/usr/bin/env python3
"""Writes test/fixtures/model/<name>/: tiny random Llama/Qwen2 checkpoints and the logits of an
independent PyTorch implementation of the Hugging Face forward (written here from the architecture
description: RMSNorm, rotate-half RoPE, grouped-query causal attention, SwiGLU; Qwen3's per-head q/k RMSNorm). Run once with
Debian's python3-torch:  /usr/bin/python3 scripts/make-model-fixture.py   (CI never needs torch)."""
import json
import os
import struct

import torch

OUT = os.path.join(os.path.dirname(__file__), "..", "test", "fixtures", "model")

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


def weights(c, generator):
    h, i, v = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    hd = c.get("head_dim", h // c["num_attention_heads"])
    q, kv = c["num_attention_heads"] * hd, c["num_key_value_heads"] * hd
    bias = c["model_type"] == "qwen2"
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


def forward(c, w, ids):
    """Logits [len, vocab] of one sequence, in float64."""
    h, nh, nkv = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"]
    hd, eps, n = c.get("head_dim", h // nh), c["rms_norm_eps"], len(ids)
    W = {k: t.double() for k, t in w.items()}
    x = W["model.embed_tokens.weight"][torch.tensor(ids)]
    inv_freq = 1.0 / (c["rope_theta"] ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
    angles = torch.outer(torch.arange(n, dtype=torch.float64), inv_freq)
    cos, sin = torch.cat((angles, angles), -1).cos(), torch.cat((angles, angles), -1).sin()
    mask = torch.full((n, n), float("-inf"), dtype=torch.float64).triu(1)
    for l in range(c["num_hidden_layers"]):
        p = f"model.layers.{l}."
        y = rms_norm(x, W[p + "input_layernorm.weight"], eps)
        proj = lambda name: y @ W[p + f"self_attn.{name}_proj.weight"].T + W.get(p + f"self_attn.{name}_proj.bias", 0)
        q = proj("q").view(n, nh, hd).transpose(0, 1)
        k = proj("k").view(n, nkv, hd).transpose(0, 1)
        v = proj("v").view(n, nkv, hd).transpose(0, 1)
        if p + "self_attn.q_norm.weight" in W:  # Qwen3: RMSNorm of each head's vector before RoPE
            q, k = rms_norm(q, W[p + "self_attn.q_norm.weight"], eps), rms_norm(k, W[p + "self_attn.k_norm.weight"], eps)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        k, v = k.repeat_interleave(nh // nkv, 0), v.repeat_interleave(nh // nkv, 0)
        attn = torch.softmax(q @ k.transpose(1, 2) / hd ** 0.5 + mask, -1) @ v
        x = x + attn.transpose(0, 1).reshape(n, nh * hd) @ W[p + "self_attn.o_proj.weight"].T
        y = rms_norm(x, W[p + "post_attention_layernorm.weight"], eps)
        gate, up = y @ W[p + "mlp.gate_proj.weight"].T, y @ W[p + "mlp.up_proj.weight"].T
        x = x + (torch.nn.functional.silu(gate) * up) @ W[p + "mlp.down_proj.weight"].T
    head = W["lm_head.weight"] if "lm_head.weight" in W else W["model.embed_tokens.weight"]
    return rms_norm(x, W["model.norm.weight"], eps) @ head.T


def write_safetensors(path, tensors, dtype):
    """float32 ("F32") or bfloat16 ("BF16", round-to-nearest-even as torch does)."""
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, t in tensors.items():
        data = (t.to(torch.bfloat16).view(torch.int16) if dtype == "BF16" else t.float().view(torch.int32)).numpy().tobytes()
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def main():
    for name, c in CONFIGS.items():
        folder = os.path.join(OUT, name)
        os.makedirs(folder, exist_ok=True)
        w = weights(c, torch.Generator().manual_seed(1234))
        dtype = "BF16" if c["torch_dtype"] == "bfloat16" else "F32"
        if dtype == "BF16":  # the reference sees exactly the weights the file holds
            w = {k: t.to(torch.bfloat16).float() for k, t in w.items()}
        write_safetensors(os.path.join(folder, "model.safetensors"), w, dtype)
        with open(os.path.join(folder, "config.json"), "w") as f:
            json.dump(c, f, indent=2)
        expected = [{"tokens": ids, "logits": [[round(v, 7) for v in row] for row in forward(c, w, ids).tolist()]}
                    for ids in SEQUENCES[name]]
        with open(os.path.join(folder, "expected.json"), "w") as f:
            json.dump({"generator": "scripts/make-model-fixture.py (PyTorch %s, float64)" % torch.__version__, "sequences": expected}, f)


if __name__ == "__main__":
    main()
