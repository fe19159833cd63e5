"""The goldens of lab 15's optimiser and sampler (clip_grad_norm, AdamW,
learning_rate_at, sample_token), and what every golden of the lab is saved
with: gen_goldens.py (the model's) calls them; see its docstring for the files.
"""
import importlib.util
import math
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools",
                                "goldens"))
import common  # noqa: E402  (tools/goldens/common.py)

# Lab 14's block in torch (its generator), reused as it is.
_spec = importlib.util.spec_from_file_location(
    "block_goldens", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                  "14_transformer_block", "gen_goldens.py"))
block14 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(block14)

t64 = common.t64
BLOCK = block14.BLOCK_PARAMS  # lab 14's BlockGrads order
MATRICES = {"embed", "W_Q", "W_K", "W_V", "W_O", "W_1", "W_2"}  # AdamW decays these only


def keys(n_layers):
    """Every parameter, in the API's declaration order."""
    return (["embed"] + ["%d_%s" % (l, n) for l in range(n_layers) for n in BLOCK]
            + ["lnf_gamma", "lnf_beta"])


def decayed(key):
    return key.split("_", 1)[-1] in MATRICES or key == "embed"


def save(out, name, a):
    a = np.asarray(a)
    assert np.all(np.isfinite(a)), name
    common.save(out, name, a)


def save_mistake(out, name, right, wrong, m, tol=(1e-4, 1e-3)):
    """Only a mistake that the test's tolerance (kModel's, or AdamW's kRowOp)
    tells apart by ten times over."""
    atol, rtol = tol
    right, wrong = np.asarray(right, np.float64), np.asarray(wrong, np.float64)
    assert np.any(np.abs(wrong - right) > 10 * (atol + rtol * np.abs(right))), (name, m)
    save(out, "%s_mistake_%s" % (name, m), wrong)


def clip_case(out, c, grads, n_layers):
    """torch.nn.utils.clip_grad_norm_ of the parameter gradients (not dx) to
    half their norm, rounded to 3 digits and to float."""
    names = keys(n_layers)
    tensors = [t64(grads[k]) for k in names]
    norm = math.sqrt(sum(float((t * t).sum()) for t in tensors))
    max_norm = float(np.float32(float("%.3g" % (0.5 * norm))))
    leaves = [torch.zeros_like(t, requires_grad=True) for t in tensors]
    for leaf, t in zip(leaves, tensors):
        leaf.grad = t.clone()
    total = torch.nn.utils.clip_grad_norm_(leaves, max_norm)
    assert abs(float(total) - norm) < 1e-9 * norm
    save(out, c + "_clip_max_norm", [max_norm])
    save(out, c + "_clip_norm", [float(total)])
    for k, leaf in zip(names, leaves):
        right = leaf.grad.numpy()
        save(out, "%s_clip_%s" % (c, k), right)
        own = float(np.sqrt((grads[k].astype(np.float64) ** 2).sum()))
        if own > max_norm:  # clipped alone it would shrink by another factor
            save_mistake(out, "%s_clip_%s" % (c, k), right,
                         grads[k] * (max_norm / (own + 1e-6)), "clip_per_tensor")


def adamw_reference(theta, grads, lrs, config, mistake=None):
    """The API's AdamW in float64 NumPy over flattened parameters: the state
    after each step. theta: {key: array}; grads: per step {key: array}."""
    b1, b2, eps, wd = config
    theta = {k: v.astype(np.float64) for k, v in theta.items()}
    m = {k: np.zeros_like(v) for k, v in theta.items()}
    v = {k: np.zeros_like(x) for k, x in theta.items()}
    states = []
    for t, (g, lr) in enumerate(zip(grads, lrs), start=1):
        g = {k: x.astype(np.float64) for k, x in g.items()}
        for k in theta:
            if decayed(k) or mistake == "decay_all":
                theta[k] *= 1 - lr * wd
            m[k] = b1 * m[k] + (1 - b1) * g[k]
            v[k] = b2 * v[k] + (1 - b2) * g[k] ** 2
            if mistake == "no_bias_correction":
                theta[k] -= lr * m[k] / (np.sqrt(v[k]) + eps)
            else:
                theta[k] -= lr * (m[k] / (1 - b1 ** t)) / (np.sqrt(v[k] / (1 - b2 ** t)) + eps)
        states.append({k: x.copy() for k, x in theta.items()})
    return states


def flat(d, names):
    return np.concatenate([np.asarray(d[k], np.float64).ravel() for k in names])


def adamw_case(out, c, p, n_layers, config, lrs, seed):
    """torch.optim.AdamW (decay on the matrices only) for len(lrs) steps on
    random gradients, checked against the formula of the API."""
    names = keys(n_layers)
    config = [float(np.float32(x)) for x in config]  # AdamWConfig holds floats
    lrs = [float(np.float32(lr)) for lr in lrs]      # step() takes a float lr
    rng = np.random.default_rng(seed)
    grads = [{k: (rng.standard_normal(p[k].shape) * 0.05).astype(np.float32) for k in names}
             for _ in lrs]
    leaves = {k: t64(p[k]).requires_grad_() for k in names}
    groups = [{"params": [leaves[k] for k in names if decayed(k)], "weight_decay": config[3]},
              {"params": [leaves[k] for k in names if not decayed(k)], "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=lrs[0], betas=(config[0], config[1]), eps=config[2])
    right = adamw_reference(p, grads, lrs, config)
    wrong = {m: adamw_reference(p, grads, lrs, config, m)
             for m in ("decay_all", "no_bias_correction")}
    save(out, c + "_adamw_config", config)
    save(out, c + "_adamw_lr", lrs)
    for step, (g, lr) in enumerate(zip(grads, lrs), start=1):
        for k in names:
            leaves[k].grad = t64(g[k])
        for group in opt.param_groups:
            group["lr"] = lr
        opt.step()
        theta = flat({k: leaves[k].detach().numpy() for k in names}, names)
        assert np.allclose(theta, flat(right[step - 1], names), rtol=1e-12, atol=1e-14)
        save(out, "%s_adamw_grads_%d" % (c, step), flat(g, names))
        save(out, "%s_adamw_theta_%d" % (c, step), theta)
        for m, states in wrong.items():
            save_mistake(out, "%s_adamw_theta_%d" % (c, step), theta, flat(states[step - 1], names),
                         m, tol=(1e-6, 1e-5))


# ------------------------------------------------------------------ sampling

def sample(logits, temperature, top_k, u, ties="low"):
    """The API's sample_token in float64 NumPy; also the cumulative sums, for
    the margin checks. ties="high": the mistake that keeps the higher ids."""
    logits = np.asarray(logits, np.float32).astype(np.float64)
    V = len(logits)
    if temperature == 0:
        return int(np.argmax(logits)), None
    k = V if top_k == 0 or top_k >= V else top_k
    ids = np.arange(V)
    order = sorted(ids, key=lambda i: (-logits[i], i if ties == "low" else -i))
    kept = np.sort(np.array(order[:k]))
    z = logits[kept] / float(np.float32(temperature))
    e = np.exp(z - z.max())
    cdf = np.cumsum(e / e.sum())
    for i, c in enumerate(cdf):
        if c > u:
            return int(kept[i]), cdf
    return int(kept[-1]), cdf


def margin(logits, temperature, u, cdf):
    """How far a float32 model could move the choice: u to the nearest cumulative
    sum, or (greedy) the gap between the two largest logits."""
    if temperature == 0:
        top = np.sort(np.asarray(logits, np.float64))[::-1]
        return top[0] - top[1]
    return np.min(np.abs(cdf - u))


def sample_case(out, c, logits, settings, us):
    us = [float(np.float32(u)) for u in us]  # the test reads them as float
    for t, k in settings:
        for u in us:
            _, cdf = sample(logits, t, k, u)
            # A sum this close to u could fall either way with another summation order.
            assert t == 0 or margin(logits, t, u, cdf) > 1e-6, (c, t, k, u)
    ids = np.array([[sample(logits, t, k, u)[0] for u in us] for t, k in settings])
    save(out, c + "_logits", logits)
    save(out, c + "_settings", settings)
    save(out, c + "_u", us)
    save(out, c + "_ids", ids)
    high = np.array([[sample(logits, t, k, u, ties="high")[0] for u in us] for t, k in settings])
    if not np.array_equal(high, ids):
        save(out, c + "_ids_mistake_topk_ties_high", high)


def sched_case(out, c, max_lr, min_lr, warmup, total):
    steps = np.arange(0, total + 4)
    lr = [max_lr * s / warmup if s < warmup else min_lr if s > total else
          min_lr + 0.5 * (1 + math.cos(math.pi * (s - warmup) / (total - warmup))) * (max_lr - min_lr)
          for s in steps]
    save(out, c + "_args", [max_lr, min_lr, warmup, total])
    save(out, c + "_steps", steps)
    save(out, c + "_lr", lr)
