"""Writes test/fixtures/lora: a tiny Qwen2-shaped base (its q_proj, v_proj and down_proj weights, float32 and bfloat16),
a random LoRA adapter in PEFT's layout, and what PEFT's merge makes of them, computed in PyTorch as peft 0.18's
src/peft/tuners/lora/layer.py does (peft itself is not needed): get_delta_weight (lines 1005-1033) takes
transpose(B @ A, fan_in_fan_out=False) * scaling (lines 278-281: lora_alpha / r) in the adapter's dtype, float32 here
(PEFT keeps adapter weights in float32 by default), and Linear.merge (line 915) adds it in place,
base_layer.weight.data += delta_weight (line 969): on a bfloat16 base the sum is taken in float32 and rounded once. Run: /usr/bin/python3 scripts/lora-merge-reference.py"""
import json
import os

import torch

from safetensors_io import write_safetensors

OUT = os.path.join(os.path.dirname(__file__), "..", "test", "fixtures", "lora")
HIDDEN, INTER, LAYERS, HEADS, KV, HEAD_DIM, R, ALPHA = 16, 24, 2, 4, 2, 4, 4, 8
CONFIG = {
    "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "vocab_size": 40, "hidden_size": HIDDEN,
    "intermediate_size": INTER, "num_hidden_layers": LAYERS, "num_attention_heads": HEADS, "num_key_value_heads": KV,
    "head_dim": HEAD_DIM, "max_position_embeddings": 32, "rms_norm_eps": 1e-6, "rope_theta": 10000.0,
    "tie_word_embeddings": False, "hidden_act": "silu",
}
SHAPES = {"self_attn.q_proj": (HEADS * HEAD_DIM, HIDDEN), "self_attn.v_proj": (KV * HEAD_DIM, HIDDEN), "mlp.down_proj": (HIDDEN, INTER)}


def peft_merge(weight, a, b):
    delta = (b @ a) * (ALPHA / R)  # get_delta_weight of a float32 adapter
    merged = weight.clone()
    merged += delta  # Linear.merge: weight += delta in place, promoted to float32 and rounded into the base's dtype
    return merged


def main():
    torch.manual_seed(0)
    base, adapter = {}, {}
    for layer in range(LAYERS):
        for module, (out, inner) in SHAPES.items():
            name = f"model.layers.{layer}.{module}"
            base[f"{name}.weight"] = torch.randn(out, inner) * 0.5
            adapter[f"base_model.model.{name}.lora_A.weight"] = torch.randn(R, inner) * 0.3
            adapter[f"base_model.model.{name}.lora_B.weight"] = torch.randn(out, R) * 0.3
    os.makedirs(os.path.join(OUT, "adapter"), exist_ok=True)
    write_safetensors(os.path.join(OUT, "adapter", "adapter_model.safetensors"), adapter)
    with open(os.path.join(OUT, "adapter", "adapter_config.json"), "w") as f:
        json.dump({"peft_type": "LORA", "task_type": "CAUSAL_LM", "r": R, "lora_alpha": ALPHA, "lora_dropout": 0.0,
                   "target_modules": ["down_proj", "q_proj", "v_proj"], "bias": "none", "fan_in_fan_out": False,
                   "use_rslora": False, "base_model_name_or_path": None, "inference_mode": True, "modules_to_save": None}, f, indent=2)
    for dtype, folder in [(torch.float32, "base-f32"), (torch.bfloat16, "base-bf16")]:
        os.makedirs(os.path.join(OUT, folder), exist_ok=True)
        weights = {n: w.to(dtype) for n, w in base.items()}
        write_safetensors(os.path.join(OUT, folder, "model.safetensors"), weights)
        with open(os.path.join(OUT, folder, "config.json"), "w") as f:
            json.dump({**CONFIG, "torch_dtype": str(dtype).removeprefix("torch.")}, f, indent=2)
        merged = {}
        for n, w in weights.items():
            stem = "base_model.model." + n.removesuffix(".weight")
            merged[n] = peft_merge(w, adapter[f"{stem}.lora_A.weight"], adapter[f"{stem}.lora_B.weight"])
        write_safetensors(os.path.join(OUT, f"peft-merged-{folder.removeprefix('base-')}.safetensors"), merged)


if __name__ == "__main__":
    main()
