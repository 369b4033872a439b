# The built-in model's architecture (Llama / Qwen2 family: RMSNorm, rotate-half RoPE, grouped-query attention,
# SwiGLU, tied embeddings) written in plain PyTorch, on the tensors of a checkpoint that BuiltinPolicy.save wrote.
# With bf16, the dense layers (q/k/v/o projections, MLP) multiply under bf16 autocast, as the built-in model's
# bf16Matmuls; attention and the LM head stay float32 on both sides.
import contextlib
import json
import math
import os
import struct

import numpy as np
import torch

DTYPES = {'F32': np.float32}


def read_safetensors(path):
    """{name: float32 tensor} of a safetensors file (8-byte header length, JSON header, raw little-endian data)."""
    with open(path, 'rb') as f:
        (length,) = struct.unpack('<Q', f.read(8))
        header = json.loads(f.read(length))
        data = f.read()
    tensors = {}
    for name, entry in header.items():
        if name == '__metadata__':
            continue
        begin, end = entry['data_offsets']
        array = np.frombuffer(data, dtype=DTYPES[entry['dtype']], count=(end - begin) // 4, offset=begin)
        tensors[name] = torch.from_numpy(array.copy()).reshape(entry['shape'])
    return tensors


def dense(bf16):
    """The context of a dense product: bf16 autocast for `--bf16` (bf16 inputs, float32 sums, a bf16 result)."""
    return torch.autocast('cpu', dtype=torch.bfloat16) if bf16 else contextlib.nullcontext()


def rms_norm(x, weight, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Llama:
    """Parameters as a dict of leaf tensors; forward over [B, L] token ids, optionally through a KV cache."""

    def __init__(self, checkpoint_dir, bf16=False):
        self.bf16 = bf16
        with open(os.path.join(checkpoint_dir, 'config.json')) as f:
            self.config = json.load(f)
        self.params = read_safetensors(os.path.join(checkpoint_dir, 'model.safetensors'))
        c = self.config
        self.layers = c['num_hidden_layers']
        self.heads, self.kv_heads, self.head_dim = c['num_attention_heads'], c['num_key_value_heads'], c['head_dim']
        self.eps = c['rms_norm_eps']
        dims = torch.arange(0, self.head_dim, 2, dtype=torch.float64) / self.head_dim
        self.inv_freq = (1.0 / c['rope_theta'] ** dims).float()
        self.embed = self.params['model.embed_tokens.weight']
        self.lm_head = self.params.get('lm_head.weight', self.embed)

    def p(self, layer, name):
        return self.params.get(f'model.layers.{layer}.{name}')

    def rope(self, positions):
        angles = positions.float()[:, None] * self.inv_freq[None, :]  # [L, D/2], float32 as in HF
        angles = torch.cat((angles, angles), dim=-1)
        return angles.cos(), angles.sin()

    def linear(self, x, layer, name):
        with dense(self.bf16):
            y = x @ self.p(layer, f'{name}.weight').t()
        y = y.float()
        bias = self.p(layer, f'{name}.bias')
        return y if bias is None else y + bias

    def attention(self, x, layer, cos, sin, cache, start):
        B, L, _ = x.shape
        q = self.linear(x, layer, 'self_attn.q_proj').view(B, L, self.heads, self.head_dim).transpose(1, 2)
        k = self.linear(x, layer, 'self_attn.k_proj').view(B, L, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.linear(x, layer, 'self_attn.v_proj').view(B, L, self.kv_heads, self.head_dim).transpose(1, 2)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        if cache is not None:
            keys, values = cache[layer]
            keys[:, :, start:start + L], values[:, :, start:start + L] = k, v
            k, v = keys[:, :, :start + L], values[:, :, :start + L]
        groups = self.heads // self.kv_heads
        if groups > 1:
            k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(self.head_dim)  # [B, heads, L, start + L]
        if L > 1:
            future = torch.ones(L, start + L, dtype=torch.bool).triu(start + 1)
            scores = scores.masked_fill(future, float('-inf'))
        out = (scores.softmax(-1) @ v).transpose(1, 2).reshape(B, L, self.heads * self.head_dim)
        return self.linear(out, layer, 'self_attn.o_proj')

    def hidden(self, ids, cache=None, start=0):
        """Final-norm hidden states [B, L, H] of token ids [B, L] at positions start … start + L − 1."""
        cos, sin = self.rope(torch.arange(start, start + ids.shape[1]))
        x = self.embed[ids]
        for layer in range(self.layers):
            x = x + self.attention(rms_norm(x, self.p(layer, 'input_layernorm.weight'), self.eps), layer, cos, sin, cache, start)
            h = rms_norm(x, self.p(layer, 'post_attention_layernorm.weight'), self.eps)
            gate = torch.nn.functional.silu(self.linear(h, layer, 'mlp.gate_proj'))
            x = x + self.linear(gate * self.linear(h, layer, 'mlp.up_proj'), layer, 'mlp.down_proj')
        return rms_norm(x, self.params['model.norm.weight'], self.eps)

    def completion_logits(self, prompts, completions):
        """Logits [B, C, V] at the positions that predict each completion token (the LM head on those positions only)."""
        ids = torch.cat((prompts, completions), dim=1)
        P, C = prompts.shape[1], completions.shape[1]
        return self.hidden(ids)[:, P - 1:P + C - 1] @ self.lm_head.t()

    def new_cache(self, batch, length):
        shape = (batch, self.kv_heads, length, self.head_dim)
        return [(torch.empty(shape), torch.empty(shape)) for _ in range(self.layers)]
