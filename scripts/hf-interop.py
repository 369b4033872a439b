#!/usr/bin/env python3
"""The Python half of scripts/hf-interop.js: real transformers and peft on the folders grpo-native writes, and the
folders they write for grpo-native to read. Not run by hand: `node scripts/hf-interop.js --python PYTHON` runs it.

Python set-up (not in CI: it has no PyPI): python3 -m venv /tmp/hfenv && /tmp/hfenv/bin/pip install torch transformers
peft. Checked with torch 2.13.0+cpu, transformers 5.17.0, peft 0.21.0.

  hf-interop.py read <root>   for each case in <root>/cases.json (written by the node script: a base folder, our PEFT
                              adapter, our merged folder, token sequences): loads base + adapter with
                              PeftModel.from_pretrained, the merged folder with AutoModelForCausalLM alone, and runs
                              merge_and_unload; prints their logits and merged weights' differences as JSON.
  hf-interop.py write <root>  for each architecture writes <root>/<name>/: a random transformers base, a LoRA adapter
                              made by get_peft_model (random B), variants of it with PEFT features grpo-native may not
                              implement, PEFT's merged weights and expected.json (PEFT's logits, the base's logits).
"""
import json
import logging
import os
import sys
import warnings

import peft
import torch
import transformers
from peft import LoraConfig, PeftModel, get_peft_model
from safetensors.torch import load_file, save_file
from transformers import AutoConfig, AutoModelForCausalLM

MODULES = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
VERSIONS = {"torch": torch.__version__, "transformers": transformers.__version__, "peft": peft.__version__}
SEQUENCES = [[3, 17, 42, 8, 25, 11, 0, 99], [9, 4, 120]]

# The tiny models PEFT writes adapters for: GQA everywhere, Qwen2 with its q/k/v biases, Qwen3 with head_dim * heads
# unequal to hidden_size; embeddings tied on one
SHAPE = dict(vocab_size=160, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=64, rms_norm_eps=1e-6, rope_theta=10000.0, hidden_act="silu")
ARCHITECTURES = {
    "llama": dict(model_type="llama", architectures=["LlamaForCausalLM"], tie_word_embeddings=False, head_dim=8),
    "qwen2": dict(model_type="qwen2", architectures=["Qwen2ForCausalLM"], tie_word_embeddings=True),
    "qwen3": dict(model_type="qwen3", architectures=["Qwen3ForCausalLM"], tie_word_embeddings=False, head_dim=16),
}
R, ALPHA = 4, 8
# PEFT features beyond plain LoRA: each variant's adapter must be refused by grpo-native, naming the field
# (fan_in_fan_out=True is not among them: on nn.Linear PEFT warns, resets it to False and saves False)
VARIANTS = {
    "use_dora": dict(use_dora=True),
    "rank_pattern": dict(rank_pattern={"q_proj": 2}),
    "alpha_pattern": dict(alpha_pattern={"v_proj": 4}),
    "modules_to_save": dict(modules_to_save=["lm_head"]),
    "bias": dict(bias="lora_only"),
    "trainable_token_indices": dict(trainable_token_indices=[5, 6]),
    "alora_invocation_tokens": dict(alora_invocation_tokens=[7, 8]),
}


class Recorder(logging.Handler):
    """Keeps every warning transformers and peft log (missing / unexpected keys are logged or warned)."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def recorded(body):
    """body()'s result and every warning (warnings.warn or a transformers / peft logger) it raised."""
    recorder = Recorder()
    loggers = [logging.getLogger(name) for name in ("transformers", "peft")]
    for logger in loggers:
        logger.addHandler(recorder)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = body()
    finally:
        for logger in loggers:
            logger.removeHandler(recorder)
    return result, recorder.messages + [str(w.message) for w in caught]


def logits(model, sequences):
    """The logits of each sequence alone, concatenated: [sum of lengths, vocab] as nested lists, to 1e-7."""
    with torch.no_grad():
        rows = torch.cat([model(torch.tensor([ids])).logits[0] for ids in sequences]).tolist()
    return [[round(v, 7) for v in row] for row in rows]


def is_target_weight(name):
    return name.endswith(".weight") and any(f".{m}." in name for m in MODULES)


def max_diff(a, b):
    return (torch.tensor(a, dtype=torch.float64) - torch.tensor(b, dtype=torch.float64)).abs().max().item()


def load_base(folder):
    model, info = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, output_loading_info=True)
    problems = {k: sorted(v) for k, v in info.items() if v and k in ("missing_keys", "unexpected_keys", "mismatched_keys")}
    return model.eval(), problems


def adapter_tensors_read(peft_model, adapter_dir):
    """The largest difference between each tensor of the adapter file and the parameter PEFT loaded it into, and the
    file's tensors PEFT has no parameter for."""
    saved = load_file(os.path.join(adapter_dir, "adapter_model.safetensors"))
    params = {name.replace(".default", ""): p for name, p in peft_model.named_parameters() if "lora_" in name}
    unread = sorted(set(saved) - set(params))
    unfilled = sorted(set(params) - set(saved))
    diff = max((saved[k].float() - params[k].float()).abs().max().item() for k in saved if k in params)
    return diff, unread, unfilled


def read_case(case):
    """transformers and peft on grpo-native's base, adapter and merged folder."""
    base, base_problems = load_base(case["base"])
    (model, load_warnings) = recorded(lambda: PeftModel.from_pretrained(base, case["adapter"]).eval())
    tensor_diff, unread, unfilled = adapter_tensors_read(model, case["adapter"])
    peft_logits = logits(model, case["sequences"])
    merged, merged_problems = load_base(case["merged"])
    merged_logits = logits(merged, case["sequences"])
    peft_merged = model.merge_and_unload().state_dict()
    ours = load_file(os.path.join(case["merged"], "model.safetensors"))
    targets = [k for k in ours if is_target_weight(k)]
    return {
        "name": case["name"],
        "load_warnings": load_warnings, "base_load_problems": base_problems, "merged_load_problems": merged_problems,
        "adapter_tensor_max_diff": tensor_diff, "tensors_peft_did_not_read": unread, "peft_params_not_in_file": unfilled,
        "peft_vs_ours_max_abs_logit": max_diff(peft_logits, case["logits"]),
        "merged_transformers_vs_ours_max_abs_logit": max_diff(merged_logits, case["logits"]),
        "peft_merge_vs_ours_max_abs_weight": max(max_diff(peft_merged[k], ours[k]) for k in ours),
        "merged_weights_compared": len(ours), "merged_target_weights": len(targets),
    }


def random_base(name, seed):
    """A transformers model of the architecture with every parameter random (norms about 1)."""
    torch.manual_seed(seed)
    config = AutoConfig.for_model(**{**SHAPE, **ARCHITECTURES[name]})
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    with torch.no_grad():
        for pname, p in model.named_parameters():
            p.copy_(1 + 0.1 * torch.randn_like(p) if "norm" in pname else 0.2 * torch.randn_like(p))
    return model.eval()


def peft_adapter(base, folder, seed, **extra):
    """get_peft_model on `base` with random A and B (init_lora_weights=False), saved to `folder`; the PeftModel."""
    torch.manual_seed(seed)
    config = LoraConfig(r=R, lora_alpha=ALPHA, lora_dropout=0.05, target_modules=MODULES, init_lora_weights=False,
                        task_type="CAUSAL_LM", **extra)
    model = get_peft_model(base, config).eval()
    model.save_pretrained(folder)
    return model


def write_case(name, root, seed):
    folder = os.path.join(root, name)
    base = random_base(name, seed)
    base.save_pretrained(os.path.join(folder, "base"))
    base_logits = logits(base, SEQUENCES)
    model = peft_adapter(base, os.path.join(folder, "adapter"), seed + 1)
    expected = logits(model, SEQUENCES)
    merged = model.merge_and_unload().state_dict()
    save_file({k: v.contiguous() for k, v in merged.items() if is_target_weight(k)},
              os.path.join(folder, "peft-merged.safetensors"))
    rslora = peft_adapter(random_base(name, seed), os.path.join(folder, "adapter-rslora"), seed + 2, use_rslora=True)
    rslora_logits = logits(rslora, SEQUENCES)
    variants = {}
    for field, extra in VARIANTS.items():
        variants[field] = os.path.join(folder, f"adapter-{field}")
        peft_adapter(random_base(name, seed), variants[field], seed + 3, **extra)
    with open(os.path.join(folder, "expected.json"), "w") as f:
        json.dump({"generator": "scripts/hf-interop.py write", "versions": VERSIONS, "r": R, "lora_alpha": ALPHA,
                   "sequences": SEQUENCES, "logits": expected, "base_logits": base_logits}, f)
    return {"name": name, "folder": folder, "rslora_logits": rslora_logits, "variants": variants}


def main():
    mode, root = sys.argv[1], sys.argv[2]
    if mode == "read":
        with open(os.path.join(root, "cases.json")) as f:
            cases = json.load(f)
        out = {"versions": VERSIONS, "cases": [read_case(c) for c in cases]}
    else:
        out = {"versions": VERSIONS, "cases": [write_case(name, root, 10 + i) for i, name in enumerate(ARCHITECTURES)]}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
