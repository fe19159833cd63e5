#!/usr/bin/env python3
"""Goldens for lab 15 (15_mini_gpt): the Mini-GPT, its loss and gradients,
clipping, the schedule, AdamW, sampling, the decoder and generation.

    /usr/bin/python3 tests/15_mini_gpt/gen_goldens.py      # from the repository root

Writes tests/15_mini_gpt/golden/*.npy (hidden) and labs/15_mini_gpt/golden/*.npy
(public), float32, the same bytes at every run. Every number comes from PyTorch
in float64 (a NumPy sampler), independently of the C++: the blocks are lab 14's
generator's (torch layer_norm, exact GELU, Hugging Face Llama's rotation), every
gradient is autograd's, clipping torch.nn.utils.clip_grad_norm_, the optimiser
torch.optim.AdamW.

A model case <c>: _config (vocab, max_len, d_model, n_heads, d_ff, n_layers,
seed, base); _inputs, _targets (ids as floats, -1 not scored); _p_<key> (every
parameter, where gammas, betas and biases are moved; "mini" has the
constructor's own, drawn by the test); _logits, _weights_<l>, _loss, _g_<key>
and _g_<l>_dx (dLoss/dx_l), with <key> = embed, <l>_<lab 14's BlockGrads field>,
lnf_gamma, lnf_beta. On the same model: _clip_max_norm, _clip_norm, _clip_<key>
(clipped to half the norm); _adamw_config (beta1 beta2 eps weight_decay),
_adamw_lr, _adamw_grads_<k> and _adamw_theta_<k> (every parameter flattened in
the API's order: the gradients of step k, the parameters after it);
_gen_<i>_setting (temperature top_k max_new_tokens eos seed 0), _gen_<i>_prompt,
_gen_<i>_tokens. Other cases: ce_<c> (_logits, _targets, _loss, _d_logits),
sched_<c> (_args: max_lr min_lr warmup total; _steps, _lr), sample_<c> (_logits,
_settings (temperature, top_k) by row, _u, _ids).

Beside a right answer, <name>_mistake_<m>.npy holds what the classic mistake m
computes instead (labs/15_mini_gpt/mini_gpt_test_util.h names them): lnf_missing,
mean_over_all, tied_output_grad_missing, tied_input_grad_missing,
scatter_overwritten (the rows assigned: last occurrence wins, the output part
lost), clip_per_tensor, decay_all, no_bias_correction, topk_ties_high,
cached_keys_rotated_again (every key at 2 p theta, its query at p theta). A
golden sampler choice never lies within 1e-6 of a cumulative sum (1e-3 in
generation), so that float32 logits cannot turn it.
"""
import contextlib
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "goldens"))
import common  # noqa: E402  (tools/goldens/common.py)

sys.path.insert(0, HERE)
import verb_grammar as vg  # noqa: E402  (the corpus, in Python)
from optimiser_goldens import (BLOCK, adamw_case, block14, clip_case, decayed, keys,  # noqa: E402
                               margin, sample, sample_case, save, save_mistake, sched_case)

HIDDEN = common.golden_dir(__file__)
PUBLIC = common.public_golden_dir(__file__)
t64 = common.t64


# ------------------------------------------------------------------ the model

class Config:
    def __init__(self, vocab, max_len, d_model, n_heads, d_ff, n_layers, seed, base=10000.0):
        self.vocab, self.max_len, self.d, self.H = vocab, max_len, d_model, n_heads
        self.d_ff, self.L, self.seed, self.base = d_ff, n_layers, seed, base

    def array(self):
        return np.array([self.vocab, self.max_len, self.d, self.H, self.d_ff, self.L, self.seed,
                         self.base])


def draw_params(cfg, moved_seed=None):
    """The constructor's draws (embed from seed, block l's from seed + 1000 (l + 1),
    as TransformerBlock draws them); with moved_seed, gammas, betas and biases
    moved away from 1 and 0 so that a gradient or forward that ignores one shows."""
    p = {"embed": common.weights(np.random.default_rng(cfg.seed), cfg.vocab, cfg.d, cfg.d)}
    for l in range(cfg.L):
        W, (W_1, W_2) = block14.weight_draws(cfg.seed + 1000 * (l + 1), cfg.d, cfg.d_ff)
        p.update({"%d_%s" % (l, n): w for n, w in zip(["W_Q", "W_K", "W_V", "W_O"], W)})
        p["%d_W_1" % l], p["%d_W_2" % l] = W_1, W_2
        for n, size in [("ln1_gamma", cfg.d), ("ln2_gamma", cfg.d)]:
            p["%d_%s" % (l, n)] = np.ones(size, np.float32)
        for n, size in [("ln1_beta", cfg.d), ("ln2_beta", cfg.d), ("b_1", cfg.d_ff), ("b_2", cfg.d)]:
            p["%d_%s" % (l, n)] = np.zeros(size, np.float32)
    p["lnf_gamma"], p["lnf_beta"] = np.ones(cfg.d, np.float32), np.zeros(cfg.d, np.float32)
    if moved_seed is not None:
        for i, k in enumerate(keys(cfg.L)):
            if k.endswith("gamma"):
                p[k] = (1.0 + 0.3 * common.inputs(moved_seed + i, p[k].size)).astype(np.float32)
            elif not decayed(k):
                p[k] = common.inputs(moved_seed + i, p[k].size, scale=0.3)
    return p


@contextlib.contextmanager
def keys_rotated_twice():
    """Lab 14's rotary attention with every key turned twice (2 p theta) and its
    query once: what a decoder that turns its cached keys again computes, for
    any chunking."""
    once = block14.rotary_heads

    def twice(x, W, H, base):
        q, k, v = once(x, W, H, base)
        return q, block14.rotate(k, 0, base), v

    block14.rotary_heads = twice
    try:
        yield
    finally:
        block14.rotary_heads = once


def forward(P, cfg, inputs, mistake=None, keep=None):
    """logits (T, vocab) of torch parameters P; `keep` (a dict) receives x_0 ..
    x_{L-1}, the input rows' embedding x0 and h."""
    E_in = P.get("embed_in", P["embed"])
    x = E_in[torch.as_tensor(inputs)]
    xs = [x]
    for l in range(cfg.L):
        p = {n: P["%d_%s" % (l, n)] for n in BLOCK}
        x = block14.block_forward(x, p, cfg.H, cfg.base)
        xs.append(x)
    h = x if mistake == "lnf_missing" else block14.layer_norm(x, P["lnf_gamma"], P["lnf_beta"])
    if keep is not None:
        keep.update(xs=xs[:-1], h=h)
    return h @ P["embed"].T


def attention_weights(P, cfg, inputs):
    x = P["embed"][torch.as_tensor(inputs)]
    out = []
    for l in range(cfg.L):
        p = {n: P["%d_%s" % (l, n)] for n in BLOCK}
        out.append(block14.block_weights(x, p, cfg.H, cfg.base).numpy())
        x = block14.block_forward(x, p, cfg.H, cfg.base)
    return out


def cross_entropy(logits, targets, over="scored"):
    """Mean over the scored rows (targets >= 0), or (a mistake) over all T rows."""
    tg = torch.as_tensor(targets)
    total = torch.nn.functional.cross_entropy(logits, tg, ignore_index=-1, reduction="sum")
    return total / (len(targets) if over == "all" else int((tg >= 0).sum()))


def torch_params(p):
    return {k: t64(v).requires_grad_() for k, v in p.items()}


def loss_and_grads(p, cfg, inputs, targets):
    """{loss, logits, g_<key>, g_<l>_dx} and what the tied-gradient mistakes
    compute. The embedding is two leaves, E_in for the rows read and E_out for
    the output layer, so that autograd gives the two parts of the tied
    gradient apart; their sum is the right one."""
    P = torch_params(p)
    P["embed_in"] = t64(p["embed"]).requires_grad_()
    keep = {}
    logits = forward(P, cfg, inputs, keep=keep)
    loss = cross_entropy(logits, targets)
    names = keys(cfg.L)
    wrt = [P[k] for k in names] + [P["embed_in"]] + keep["xs"]
    g = torch.autograd.grad(loss, wrt)
    out = {"loss": np.array([loss.item()]), "logits": logits.detach().numpy()}
    grads = dict(zip(names, [t.numpy() for t in g[:len(names)]]))
    output_part, input_part = grads["embed"], g[len(names)].numpy()
    grads["embed"] = output_part + input_part
    for l in range(cfg.L):
        grads["%d_dx" % l] = g[len(names) + 1 + l].numpy()
    out["grads"] = grads
    # The mistakes of the tied weight.
    dx0 = grads["0_dx"]
    overwritten = output_part.copy()
    for t, tok in enumerate(inputs):
        overwritten[tok] = dx0[t]  # the last occurrence wins, the output part is gone
    out["embed_mistakes"] = {"tied_output_grad_missing": input_part,
                             "tied_input_grad_missing": output_part,
                             "scatter_overwritten": overwritten}
    # Autograd through E_in gives exactly the scatter-add of dx_0.
    scatter = np.zeros_like(input_part)
    np.add.at(scatter, np.asarray(inputs), dx0)
    assert np.allclose(scatter, input_part, rtol=1e-12, atol=1e-14)
    return out


def generate(p, cfg, prompt, max_new, temperature, top_k, eos, seed):
    """generate() over the float64 model, re-running it on the whole sequence
    at every token; the smallest margin of any choice."""
    P = {k: t64(v) for k, v in p.items()}
    rng = np.random.default_rng(seed)
    seq, new, worst = list(prompt), [], np.inf
    while len(new) < max_new and len(seq) < cfg.max_len:
        with torch.no_grad():
            row = forward(P, cfg, seq)[-1].numpy()
        u = rng.random()
        tok, cdf = sample(row, temperature, top_k, u)
        worst = min(worst, margin(row, temperature, u, cdf))
        new.append(tok)
        seq.append(tok)
        if tok == eos:
            break
    return new, worst


def generate_case(out, c, p, cfg, i, prompt, max_new, temperature, top_k, eos, seed):
    tokens, worst = generate(p, cfg, prompt, max_new, temperature, top_k, eos, seed)
    # float32 logits differ from these by ~1e-6: no choice may be that close.
    assert worst > 1e-3, (c, i, worst)
    save(out, "%s_gen_%d_setting" % (c, i), [temperature, top_k, max_new, eos, seed, 0])
    save(out, "%s_gen_%d_prompt" % (c, i), prompt)
    save(out, "%s_gen_%d_tokens" % (c, i), tokens)
    return tokens


# ------------------------------------------------------------------ cases

def model_case(out, c, cfg, inputs, targets, moved_seed=None):
    """The forward, the loss, every gradient and the decoder's mistake; returns
    the parameters and the gradients for the cases built on them."""
    p = draw_params(cfg, moved_seed)
    save(out, c + "_config", cfg.array())
    save(out, c + "_inputs", inputs)
    save(out, c + "_targets", targets)
    if moved_seed is not None:
        for k in keys(cfg.L):
            save(out, "%s_p_%s" % (c, k), p[k])
    r = loss_and_grads(p, cfg, inputs, targets)
    P = {k: t64(v) for k, v in p.items()}
    save(out, c + "_logits", r["logits"])
    for l, w in enumerate(attention_weights(P, cfg, inputs)):
        save(out, "%s_weights_%d" % (c, l), w)
    save(out, c + "_loss", r["loss"])
    for k, g in r["grads"].items():
        save(out, "%s_g_%s" % (c, k), g)
    with torch.no_grad():
        save_mistake(out, c + "_logits", r["logits"],
                     forward(P, cfg, inputs, "lnf_missing").numpy(), "lnf_missing")
        with keys_rotated_twice():
            save_mistake(out, c + "_logits", r["logits"], forward(P, cfg, inputs).numpy(),
                         "cached_keys_rotated_again")
    scored = sum(1 for t in targets if t >= 0)
    over_all = scored / len(targets)
    save_mistake(out, c + "_loss", r["loss"], r["loss"] * over_all, "mean_over_all")
    for k in ("embed", "lnf_gamma", "0_W_Q"):
        save_mistake(out, "%s_g_%s" % (c, k), r["grads"][k], r["grads"][k] * over_all,
                     "mean_over_all")
    for m, wrong in r["embed_mistakes"].items():
        save_mistake(out, c + "_g_embed", r["grads"]["embed"], wrong, m)
    return p, r["grads"]


def ce_case(out, c, logits, targets):
    save(out, c + "_logits", logits)
    save(out, c + "_targets", targets)
    x = t64(logits).requires_grad_()
    loss = cross_entropy(x, targets)
    (d,) = torch.autograd.grad(loss, [x])
    save(out, c + "_loss", [loss.item()])
    save(out, c + "_d_logits", d.numpy())
    if any(t < 0 for t in targets):
        over_all = sum(1 for t in targets if t >= 0) / len(targets)
        save_mistake(out, c + "_loss", [loss.item()], [loss.item() * over_all], "mean_over_all")
        save_mistake(out, c + "_d_logits", d.numpy(), d.numpy() * over_all, "mean_over_all")


def sentence_case(index):
    """Sentence `index` of the corpus: inputs ids[:-1], targets ids[1:] at the
    grammar-fixed positions and -1 elsewhere (train_mini_gpt's --score decided)."""
    sentences = vg.all_sentences()
    nexts = vg.continuations(sentences)
    ids = sentences[index][3]
    keep = {pos for pos, _, _ in vg.decisions(ids, nexts)}
    return ids[:-1], [t if pos in keep else -1 for pos, t in enumerate(ids[1:])]


def main():
    for d in (HIDDEN, PUBLIC):
        for f in os.listdir(d):
            if f.endswith(".npy"):
                os.remove(os.path.join(d, f))
    V = 10  # the public model's vocabulary

    # Public: a small model where every mistake shows.
    pub = Config(vocab=V, max_len=9, d_model=8, n_heads=2, d_ff=12, n_layers=2, seed=15)
    p, g = model_case(PUBLIC, "pub", pub, [3, 7, 3, 1, 9, 3, 0], [7, -1, 1, 9, 3, 0, 2],
                      moved_seed=1500)
    clip_case(PUBLIC, "pub", g, pub.L)
    adamw_case(PUBLIC, "pub", p, pub.L, (0.9, 0.95, 1e-8, 0.1), [1e-2, 5e-2, 3e-2], seed=1510)
    generate_case(PUBLIC, "pub", p, pub, 0, [2, 5], 10, 0.0, 0, 1, seed=7)
    generate_case(PUBLIC, "pub", p, pub, 1, [2, 5, 8], 4, 0.9, 4, 0, seed=1)
    ce_case(PUBLIC, "ce_pub", common.inputs(1520, 6, 9, scale=3.0), [2, -1, 8, 0, -1, 5])
    big = common.inputs(1521, 3, 5, scale=3.0)
    big[0] = [1e4, -1e4, 0.0, 3.0, 1e4 - 2.0]
    big[1] += 1e4
    ce_case(PUBLIC, "ce_big", big, [1, 4, 0])
    sched_case(PUBLIC, "sched_pub", 3e-3, 3e-4, 10, 50)
    ties = np.array([1.0, 2.5, 2.5, 0.3, -1.0, 2.0, 2.5, 0.0, -0.5, 1.2], np.float32)
    settings = [(0.0, 0), (1.0, 0), (0.5, 0), (1.0, 2), (2.0, 3), (0.7, 4), (1.0, 100)]
    sample_case(PUBLIC, "sample_pub", ties, settings,
                [0.0, 0.1, 0.25, 0.4, 0.55, 0.7, 0.9, 0.99, 0.999999])

    # Hidden: another size with three blocks and a base of 500000; the seed
    # course's model on a corpus sentence; other settings.
    small = Config(vocab=13, max_len=12, d_model=12, n_heads=3, d_ff=20, n_layers=3, seed=1501,
                   base=500000.0)
    p, g = model_case(HIDDEN, "small", small, [4, 11, 4, 0, 12, 7, 4, 2, 9, 11, 1],
                      [11, 4, -1, 12, 7, -1, 2, 9, 11, 1, 3], moved_seed=1600)
    clip_case(HIDDEN, "small", g, small.L)
    adamw_case(HIDDEN, "small", p, small.L, (0.8, 0.99, 1e-6, 0.05), [2e-2, 4e-2, 1e-2, 3e-2],
               seed=1610)
    generate_case(HIDDEN, "small", p, small, 0, [0, 6, 2], 20, 0.0, 0, 5, seed=3)
    generate_case(HIDDEN, "small", p, small, 1, [0], 7, 1.3, 0, 0, seed=11)
    generate_case(HIDDEN, "small", p, small, 2, [7, 7, 1, 2], 9, 0.6, 3, 12, seed=5)
    mini = Config(vocab=64, max_len=32, d_model=64, n_heads=4, d_ff=256, n_layers=2, seed=0)
    inputs, targets = sentence_case(300)
    model_case(HIDDEN, "mini", mini, inputs, targets)
    ce_case(HIDDEN, "ce_small", common.inputs(1620, 8, 13, scale=4.0), [12, 0, -1, 3, 3, -1, -1, 7])
    ce_case(HIDDEN, "ce_one", common.inputs(1621, 4, 6), [-1, -1, 2, -1])
    huge = common.inputs(1622, 4, 7, scale=5.0)
    huge[1] = [-1e4, 1e4, 1e4 - 1.0, 0.0, 5.0, 1e4 - 30.0, -3.0]
    huge[2:] += 1e4
    ce_case(HIDDEN, "ce_huge", huge, [1, 2, -1, 6])
    sched_case(HIDDEN, "sched_small", 1e-2, 1e-3, 7, 40)
    sched_case(HIDDEN, "sched_nowarmup", 5e-4, 5e-5, 0, 12)
    sched_case(HIDDEN, "sched_flat", 2e-3, 2e-3, 3, 9)
    ties = np.array([0.5, 3.0, -2.0, 3.0, 3.0, 1.0, 3.0, 2.9, -0.1, 0.0, 1.5, 3.0, -4.0],
                    np.float32)
    settings = [(0.0, 0), (0.0, 3), (1.0, 1), (1.0, 3), (1.5, 5), (0.3, 0), (1.0, 13), (4.0, 6)]
    sample_case(HIDDEN, "sample_small", ties, settings,
                [0.0, 0.03, 0.17, 0.33, 0.47, 0.61, 0.68, 0.82, 0.93, 0.9999])

    common.report_written(PUBLIC, HIDDEN)


if __name__ == "__main__":
    main()
