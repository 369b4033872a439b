# The PyTorch side of each workload of bench/torch/run.js: setup(dir) loads the inputs the driver wrote and returns
# (call, outputs): call() is what is timed; outputs(dir) runs once and writes what the agreement check reads.
# The workloads with a bf16 form (workloads.js: bf16) take bf16=True for `--bf16`: their dense products run under
# torch.autocast('cpu', dtype=torch.bfloat16), the same products grpo-native then runs in bf16, everything else float32.
import json
import os

import numpy as np
import torch

from llama import Llama, dense


def load(dir, name, dtype, shape=None):
    array = np.fromfile(os.path.join(dir, name), dtype=dtype)
    tensor = torch.from_numpy(array)
    return tensor if shape is None else tensor.reshape(shape)


def save(dir, name, tensor):
    tensor.detach().contiguous().numpy().tofile(os.path.join(dir, name))


def meta(dir):
    with open(os.path.join(dir, 'meta.json')) as f:
        return json.load(f)


def logits_of(hidden, weight, bf16):
    """hidden @ weight.t(), float32; under `--bf16` the product runs in bf16 and only its result is widened."""
    with dense(bf16):
        logits = hidden @ weight.t()
    return logits.float()


def logprobs(logits, targets):
    return torch.log_softmax(logits, dim=-1).gather(1, targets[:, None].long())[:, 0]


def logprob_forward(dir):
    m = meta(dir)
    logits = load(dir, 'logits.f32', np.float32, (m['T'], m['V']))
    targets = load(dir, 'targets.i32', np.int32)

    def call():
        with torch.no_grad():
            return logprobs(logits, targets)
    return call, lambda out: save(out, 'logp.f32', call())


def logprob_forward_backward(dir):
    m = meta(dir)
    logits = load(dir, 'logits.f32', np.float32, (m['T'], m['V'])).requires_grad_()
    targets = load(dir, 'targets.i32', np.int32)

    def call():
        logits.grad = None
        logp = logprobs(logits, targets)
        logp.backward(torch.ones_like(logp))
        return logp, logits.grad

    def outputs(out):
        logp, grad = call()
        save(out, 'logp.f32', logp)
        save(out, 'grad_head.f32', grad[:m['checkRows']])
    return call, outputs


def lm_head_inputs(dir):
    m = meta(dir)
    hidden = load(dir, 'hidden.f32', np.float32, (m['T'], m['H']))
    weight = load(dir, 'weight.f32', np.float32, (m['V'], m['H']))
    return m, hidden, weight, load(dir, 'targets.i32', np.int32)


def lm_head_forward(dir, bf16=False):
    _, hidden, weight, targets = lm_head_inputs(dir)

    def call():
        with torch.no_grad():
            return logprobs(logits_of(hidden, weight, bf16), targets)
    return call, lambda out: save(out, 'logp.f32', call())


def lm_head_forward_backward(dir, bf16=False):
    _, hidden, weight, targets = lm_head_inputs(dir)
    hidden.requires_grad_()
    weight.requires_grad_()

    def call():
        hidden.grad = weight.grad = None
        logp = logprobs(logits_of(hidden, weight, bf16), targets)
        logp.backward(torch.ones_like(logp))
        return logp, hidden.grad, weight.grad

    def outputs(out):
        logp, grad_hidden, grad_weight = call()
        save(out, 'logp.f32', logp)
        save(out, 'grad_hidden.f32', grad_hidden)
        save(out, 'grad_weight.f32', grad_weight)
    return call, outputs


def model_batch(dir, name):
    m = meta(dir)[name]
    prompts = load(dir, f'{name}-prompts.i32', np.int32, (m['rows'], m['prompt'])).long()
    completions = load(dir, f'{name}-completions.i32', np.int32, (m['rows'], m['completion'])).long()
    return prompts, completions


def score_rows(model, prompts, completions, entropy=True):
    """logp and (when asked) entropy [B, C] of each completion token (temperature 1)."""
    logsm = torch.log_softmax(model.completion_logits(prompts, completions), dim=-1)
    logp = logsm.gather(2, completions[:, :, None])[:, :, 0]
    return logp, -(logsm.exp() * logsm).sum(-1) if entropy else None


def model_score(dir, bf16=False):
    model = Llama(os.path.join(dir, 'checkpoint'), bf16)
    prompts, completions = model_batch(dir, 'score')
    check_prompts, check_completions = model_batch(dir, 'check')
    chunk = 32  # sequences per forward: the [chunk, C, V] logits stay near 100 MB

    def call():
        with torch.no_grad():
            parts = [score_rows(model, prompts[i:i + chunk], completions[i:i + chunk]) for i in range(0, len(prompts), chunk)]
        return torch.cat([p[0] for p in parts]), torch.cat([p[1] for p in parts])

    def outputs(out):
        with torch.no_grad():
            logp, entropy = score_rows(model, check_prompts, check_completions)
        save(out, 'logp.f32', logp)
        save(out, 'entropy.f32', entropy)
    return call, outputs


def model_train(dir, bf16=False):
    """One SFT step as BuiltinPolicy.step(batch, sftLoss()) runs it: mean −logp of the completion tokens, backward,
    global gradient norm clipped to 1, AdamW (lr 1e-3, decay 0.01 on matrices and embeddings only)."""
    model = Llama(os.path.join(dir, 'checkpoint'), bf16)
    prompts, completions = model_batch(dir, 'train')
    params = list(model.params.values())
    for p in params:
        p.requires_grad_()
    optimizer = torch.optim.AdamW([
        {'params': [p for p in params if p.dim() > 1], 'weight_decay': 0.01},
        {'params': [p for p in params if p.dim() <= 1], 'weight_decay': 0.0},
    ], lr=1e-3, betas=(0.9, 0.999), eps=1e-8)

    def call():
        optimizer.zero_grad(set_to_none=True)
        logp, _ = score_rows(model, prompts, completions, entropy=False)
        loss = -logp.mean()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        return loss

    def outputs(out):
        save(out, 'loss.f32', call().reshape(1))
    return call, outputs


def decode(model, prompts, new_tokens, forced=None, generator=None):
    """Tokens and their log-probs [B, new_tokens] through a KV cache, sampled at temperature 1 (or `forced`)."""
    B, P = prompts.shape
    cache = model.new_cache(B, P + new_tokens)
    tokens, logps = [], []
    with torch.no_grad():
        h = model.hidden(prompts, cache, 0)[:, -1]
        for step in range(new_tokens):
            logsm = torch.log_softmax(h @ model.lm_head.t(), dim=-1)  # [B, V]
            token = forced[:, step] if forced is not None else torch.multinomial(logsm.exp(), 1, generator=generator)[:, 0]
            tokens.append(token)
            logps.append(logsm.gather(1, token[:, None])[:, 0])
            if step + 1 < new_tokens:
                h = model.hidden(token[:, None], cache, P + step)[:, -1]
    return torch.stack(tokens, 1), torch.stack(logps, 1)


def model_generate(dir, bf16=False):
    model = Llama(os.path.join(dir, 'checkpoint'), bf16)
    m = meta(dir)['generate']
    prompts, _ = model_batch(dir, 'generate')
    check_prompts, check_tokens = model_batch(dir, 'generated')
    generator = torch.Generator().manual_seed(3)

    def call():
        return decode(model, prompts, m['newTokens'], generator=generator)

    def outputs(out):
        _, logp = decode(model, check_prompts, check_tokens.shape[1], forced=check_tokens)
        save(out, 'logp.f32', logp)
    return call, outputs


def top_p_sample(logits, top_p, generator):
    """Sort-based top-p (as HF's TopPLogitsWarper + multinomial): tokens [B] and the truncated distribution [B, V]."""
    probs = logits.softmax(-1)
    sorted_probs, order = probs.sort(-1, descending=True)
    before = sorted_probs.cumsum(-1) - sorted_probs  # mass of the more likely tokens
    sorted_probs = sorted_probs.masked_fill(before >= top_p, 0)
    sorted_probs = sorted_probs / sorted_probs.sum(-1, keepdim=True)
    choice = torch.multinomial(sorted_probs, 1, generator=generator)
    return order.gather(1, choice)[:, 0], torch.zeros_like(probs).scatter(1, order, sorted_probs)


def top_p(dir):
    m = meta(dir)
    logits = load(dir, 'logits.f32', np.float32, (m['B'], m['V']))
    generator = torch.Generator().manual_seed(2)

    def call():
        return top_p_sample(logits, m['topP'], generator)

    def outputs(out):
        tokens, probs = call()
        save(out, 'tokens.i32', tokens.int())
        save(out, 'probs_head.f32', probs[:m['checkRows']])
        save(out, 'support.u8', (probs > 0).to(torch.uint8))
    return call, outputs


def grpo_loss(dir):
    """Clipped surrogate (ε 0.2) + β·k3 KL, mean over the masked tokens; d loss / d logp by autograd."""
    m = meta(dir)
    shape = (m['rows'], m['cols'])
    logp = load(dir, 'logp.f32', np.float32, shape).requires_grad_()
    old, ref, adv = (load(dir, f'{n}.f32', np.float32, shape) for n in ('old', 'ref', 'adv'))
    mask = load(dir, 'mask.u8', np.uint8, shape).float()
    beta, eps = m['beta'], m['epsilon']

    def call():
        logp.grad = None
        ratio = (logp - old).exp()
        surrogate = -torch.min(ratio * adv, ratio.clamp(1 - eps, 1 + eps) * adv)
        kl = (ref - logp).exp() - (ref - logp) - 1
        loss = ((surrogate + beta * kl) * mask).sum() / mask.sum().clamp(min=1)
        loss.backward()
        return loss, logp.grad

    def outputs(out):
        loss, grad = call()
        save(out, 'loss.f32', loss.detach().reshape(1))
        save(out, 'grad.f32', grad)
    return call, outputs


def group_advantages(dir):
    """(r − group mean) / (group std + 1e-4), torch.std (unbiased) over groups of G, as TRL's scale_rewards='group'."""
    m = meta(dir)
    rewards = load(dir, 'rewards.f32', np.float32, (-1, m['groupSize']))

    def call():
        return ((rewards - rewards.mean(1, keepdim=True)) / (rewards.std(1, keepdim=True) + m['stdEpsilon'])).reshape(-1)
    return call, lambda out: save(out, 'advantages.f32', call())


WORKLOADS = {
    'logprob-forward': logprob_forward,
    'logprob-forward-backward': logprob_forward_backward,
    'lm-head-forward': lm_head_forward,
    'lm-head-forward-backward': lm_head_forward_backward,
    'lm-head-forward-backward-kept': lm_head_forward_backward,  # PyTorch's autograd keeps its logits either way
    'model-train': model_train,
    'model-score': model_score,
    'model-generate': model_generate,
    'top-p': top_p,
    'grpo-loss': grpo_loss,
    'group-advantages': group_advantages,
}
