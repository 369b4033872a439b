#!/usr/bin/env python3
"""Writes test/fixtures/lora-forward: a random LoRA adapter (r 4, lora_alpha 8, all seven target modules, A and B both
non-zero) in PEFT's layout for the base test/fixtures/model/qwen2-tiny, and the logits of that base with the adapter,
computed in float64 by scripts/make-model-fixture.py's forward with every target module as PEFT's LoRA Linear computes
it in eval mode (peft/src/peft/tuners/lora/layer.py, Linear.forward: result = base_layer(x) +
lora_B(lora_A(dropout(x))) * scaling, dropout the identity outside training, scaling = lora_alpha / r).
Run once with Debian's python3-torch:  /usr/bin/python3 scripts/lora-forward-reference.py   (CI never needs torch)."""
import importlib.util
import json
import os

import torch

HERE = os.path.dirname(__file__)
spec = importlib.util.spec_from_file_location("fixture", os.path.join(HERE, "make-model-fixture.py"))
fixture = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fixture)

BASE = "qwen2-tiny"
OUT = os.path.join(HERE, "..", "test", "fixtures", "lora-forward")
R, ALPHA = 4, 8
MODULES = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
SEQUENCES = [[3, 17, 42, 8, 25, 11, 0], [9, 4]]


def module_path(layer, module):
    return f"model.layers.{layer}.{'mlp' if module in ('gate_proj', 'up_proj', 'down_proj') else 'self_attn'}.{module}"


def main():
    c = fixture.CONFIGS[BASE]
    w = fixture.weights(c, torch.Generator().manual_seed(1234))
    w = {k: t.to(torch.float32) for k, t in w.items()}  # qwen2-tiny is stored in float32: the file's weights
    generator = torch.Generator().manual_seed(19)
    adapter = {}
    for layer in range(c["num_hidden_layers"]):
        for module in MODULES:
            out, inner = w[module_path(layer, module) + ".weight"].shape
            adapter[module_path(layer, module) + ".lora_A.weight"] = torch.randn(R, inner, generator=generator) * 0.3
            adapter[module_path(layer, module) + ".lora_B.weight"] = torch.randn(out, R, generator=generator) * 0.3

    def lora_linear(module, x, W):
        result = fixture.dense(module, x, W)
        if module + ".lora_A.weight" not in adapter:
            return result
        a, b = adapter[module + ".lora_A.weight"].double(), adapter[module + ".lora_B.weight"].double()
        return result + (x @ a.T) @ b.T * (ALPHA / R)

    os.makedirs(os.path.join(OUT, "adapter"), exist_ok=True)
    fixture.write_safetensors(os.path.join(OUT, "adapter", "adapter_model.safetensors"),
                              {"base_model.model." + k: t for k, t in adapter.items()}, "F32")
    with open(os.path.join(OUT, "adapter", "adapter_config.json"), "w") as f:
        json.dump({"peft_type": "LORA", "task_type": "CAUSAL_LM", "r": R, "lora_alpha": ALPHA, "lora_dropout": 0.0,
                   "target_modules": MODULES, "bias": "none", "fan_in_fan_out": False, "use_rslora": False,
                   "base_model_name_or_path": None, "inference_mode": True, "modules_to_save": None}, f, indent=2)
    expected = [{"tokens": ids, "logits": [[round(v, 7) for v in row] for row in fixture.forward(c, w, ids, lora_linear).tolist()]}
                for ids in SEQUENCES]
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump({"generator": "scripts/lora-forward-reference.py (PyTorch %s, float64)" % torch.__version__, "base": BASE,
                   "sequences": expected}, f)


if __name__ == "__main__":
    main()
