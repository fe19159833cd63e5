#!/usr/bin/env python3
"""Goldens for lab 13 (13_induction_heads): a two-layer attention-only model.

Run from the repository root with Debian's Python:

    /usr/bin/python3 tests/13_induction_heads/gen_goldens.py

Writes tests/13_induction_heads/golden/*.npy (hidden) and
labs/13_induction_heads/golden/*.npy (public), float32. The numbers come from
PyTorch in float64, independently of the C++ code: the model is written in
torch ops (embeddings, then per layer x + MultiHeadAttention(x, causal), then
the unembedding), each layer checked against torch.nn.MultiheadAttention, and
the gradients come from autograd of the mean cross-entropy over the scored
positions.

Weights are drawn as the C++ constructor draws them: embed, pos, unembed from
np.random.default_rng(seed + 1) in that order, layer l's W_Q, W_K, W_V, W_O
from np.random.default_rng(seed + 1000 * l).

Per case <c> (tokens and targets are listed in CASES; -1 = not scored):
<c>_logits (T, vocab), <c>_weights_<l> (n_heads, T, T), <c>_loss (1,),
<c>_d_embed, <c>_d_pos, <c>_d_unembed, <c>_dW_{Q,K,V,O}_<l>; and
<c>_comp_{q,k,v} = composition_scores(layers[0], layers[1]) when the case has
two layers or more. Next to them, <name>_mistake_<m>.npy holds what a classic
mistake <m> computes instead (see MISTAKES).

Extra composition cases (comp_<name>_{q,k,v}): two layers of different head
counts (comp_mixed: 2 heads earlier, 4 later, d_model 8, seeds 21 and 22).
"""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "goldens"))
import common  # noqa: E402  (tools/goldens/common.py)

HIDDEN = common.golden_dir(__file__)
PUBLIC = common.public_golden_dir(__file__)

# The classic mistakes of docs/13_induction_heads.md, as changes to the model.
MISTAKES = [
    "no_residual",        # x_{l+1} = layer(x_l)
    "no_residual_grad",   # backward: g_l = layer's dx only (the path around the layer dropped)
    "no_mask_layer2",     # layers after the first attend without the causal mask
    "mean_over_all",      # loss divided by T instead of by the scored positions
    "no_pos_grad",        # d_pos left at zero
]

# name: (directory, vocab, max_len, d_model, n_heads, n_layers, seed, inputs, targets)
CASES = {
    "pub": (PUBLIC, 7, 8, 8, 2, 2, 5,
            [3, 1, 4, 1, 5, 2], [1, 4, -1, 5, 2, 6]),
    "two": (HIDDEN, 11, 10, 12, 3, 2, 9,
            [0, 7, 3, 10, 3, 7, 1, 2, 9], [7, 3, 10, -1, 7, 1, 2, 9, -1]),
    "three": (HIDDEN, 6, 7, 8, 4, 3, 13,
              [5, 0, 2, 2, 4, 1, 3], [-1, 2, 2, 4, 1, 3, 0]),
    "one": (HIDDEN, 9, 6, 6, 2, 1, 17,
            [8, 2, 0, 6, 4], [2, 0, 6, 4, 1]),
}


def model_weights(vocab, max_len, d_model, n_layers, seed):
    rng = np.random.default_rng(seed + 1)
    embed = common.weights(rng, vocab, d_model, 1)
    pos = common.weights(rng, max_len, d_model, 1)
    unembed = common.weights(rng, d_model, vocab, d_model)
    layers = [common.draws(seed + 1000 * l, d_model) for l in range(n_layers)]
    return embed, pos, unembed, layers


def layer_forward(x, w, n_heads, mask):
    """x (T, d) torch; w = [W_Q, W_K, W_V, W_O] torch; returns (y (T, d), P (H, T, T))."""
    W_Q, W_K, W_V, W_O = w
    q = common.split_heads(x @ W_Q, n_heads)
    k = common.split_heads(x @ W_K, n_heads)
    v = common.split_heads(x @ W_V, n_heads)
    s = q @ k.transpose(-1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        s = s + mask
    p = torch.softmax(s, dim=-1)
    return common.combine_heads(p @ v) @ W_O, p


def run(case, mistake=None):
    _, vocab, max_len, d_model, n_heads, n_layers, seed, inputs, targets = case
    embed, pos, unembed, layers = model_weights(vocab, max_len, d_model, n_layers, seed)
    params = {"embed": common.t64(embed), "pos": common.t64(pos), "unembed": common.t64(unembed)}
    for l, w in enumerate(layers):
        for name, m in zip("QKVO", w):
            params["W_%s_%d" % (name, l)] = common.t64(m)
    for p in params.values():
        p.requires_grad_(True)
    T = len(inputs)
    mask = common.t64(common.causal(T))
    x = params["embed"][inputs] + params["pos"][:T]
    weights = []
    for l in range(n_layers):
        w = [params["W_%s_%d" % (n, l)] for n in "QKVO"]
        y, p = layer_forward(x, w, n_heads, None if (mistake == "no_mask_layer2" and l >= 1) else mask)
        if mistake is None:  # the layer agrees with torch's own MultiheadAttention
            ref = common.torch_mha(x.detach().numpy(), *[m.detach().numpy() for m in w], n_heads,
                                   common.causal(T))
            assert np.allclose(y.detach().numpy(), ref, atol=1e-10), "layer disagrees with torch"
        weights.append(p.detach().numpy())
        if mistake == "no_residual":
            x = y
        elif mistake == "no_residual_grad":
            x = x.detach() + y
        else:
            x = x + y
    logits = x @ params["unembed"]
    scored = [t for t in range(T) if targets[t] >= 0]
    ce = torch.nn.functional.cross_entropy(
        logits[scored], torch.tensor([targets[t] for t in scored]), reduction="sum")
    loss = ce / (T if mistake == "mean_over_all" else len(scored))
    loss.backward()
    grads = {k: v.grad.numpy().copy() if v.grad is not None else np.zeros(v.shape)
             for k, v in params.items()}
    if mistake == "no_pos_grad":
        grads["pos"] = np.zeros_like(grads["pos"])
    return logits.detach().numpy(), weights, loss.item(), grads, layers


def composition(earlier, later, n_a, n_b, mistake=None):
    """The three composition scores in float64 NumPy, straight from the formulas."""
    d = earlier[0].shape[0]

    def circuits(w, n, h):
        dh = d // n
        W_Q, W_K, W_V, W_O = (common.f64(m) for m in w)
        c = slice(h * dh, (h + 1) * dh)
        return W_V[:, c] @ W_O[c, :], W_Q[:, c] @ W_K[:, c].T  # (OV, QK)

    def score(prod, a, b):
        na, nb = np.linalg.norm(a), np.linalg.norm(b)
        return 0.0 if na == 0 or nb == 0 else np.linalg.norm(prod) / (na * nb)

    q, k, v = (np.zeros((n_b, n_a)) for _ in range(3))
    for b in range(n_b):
        ov_b, qk_b = circuits(later, n_b, b)
        for a in range(n_a):
            ov_a, _ = circuits(earlier, n_a, a)
            q[b, a] = score(ov_a @ qk_b, ov_a, qk_b)
            k_prod = ov_a.T @ qk_b if mistake == "k_transposed" else qk_b @ ov_a.T
            k[b, a] = score(k_prod, qk_b, ov_a)
            v[b, a] = score(ov_a @ ov_b, ov_a, ov_b)
    return q, k, v


def save_case(name, case):
    out, n_heads, n_layers = case[0], case[4], case[5]
    logits, weights, loss, grads, layers = run(case)
    common.save(out, name + "_logits", logits)
    for l, w in enumerate(weights):
        common.save(out, "%s_weights_%d" % (name, l), w)
    common.save(out, name + "_loss", np.array([loss]))
    common.save(out, name + "_d_embed", grads["embed"])
    common.save(out, name + "_d_pos", grads["pos"])
    common.save(out, name + "_d_unembed", grads["unembed"])
    for l in range(n_layers):
        for n in "QKVO":
            common.save(out, "%s_dW_%s_%d" % (name, n, l), grads["W_%s_%d" % (n, l)])
    inputs = case[7]
    if len(set(inputs)) < len(inputs):
        # A repeated token's row of d_embed overwritten at each occurrence: the
        # last position's row of d_x (= d_pos's row there) wins.
        wrong = np.zeros_like(grads["embed"])
        for t, tok in enumerate(inputs):
            wrong[tok] = grads["pos"][t]
        assert not np.allclose(wrong, grads["embed"], rtol=1e-2, atol=1e-3), name
        common.save(out, name + "_d_embed_mistake_embed_grad_overwritten", wrong)
    for m in MISTAKES:
        if m == "no_mask_layer2" and n_layers < 2:
            continue
        ml, mw, mloss, mg, _ = run(case, m)
        common.save(out, name + "_logits_mistake_" + m, ml)
        for l, w in enumerate(mw):
            common.save(out, "%s_weights_%d_mistake_%s" % (name, l, m), w)
        common.save(out, name + "_loss_mistake_" + m, np.array([mloss]))
        common.save(out, name + "_d_embed_mistake_" + m, mg["embed"])
        common.save(out, name + "_d_pos_mistake_" + m, mg["pos"])
        common.save(out, name + "_d_unembed_mistake_" + m, mg["unembed"])
        for l in range(n_layers):
            for n in "QKVO":
                common.save(out, "%s_dW_%s_%d_mistake_%s" % (name, n, l, m),
                            mg["W_%s_%d" % (n, l)])
    if n_layers >= 2:
        save_composition(out, name + "_comp", layers[0], layers[1], n_heads, n_heads)


def save_composition(out, name, earlier, later, n_a, n_b):
    for part, value in zip("qkv", composition(earlier, later, n_a, n_b)):
        common.save(out, "%s_%s" % (name, part), value)
    common.save(out, name + "_k_mistake_k_transposed",
                composition(earlier, later, n_a, n_b, "k_transposed")[1])


def main():
    for name, case in CASES.items():
        save_case(name, case)
    save_composition(HIDDEN, "comp_mixed", common.draws(21, 8), common.draws(22, 8), 2, 4)


if __name__ == "__main__":
    main()
