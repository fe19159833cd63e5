"""Goldens for lab 7 (head analysis): tests/07_head_analysis/golden/*.npy.

Run from the repository root:  /usr/bin/python3 tests/07_head_analysis/gen_goldens.py
Writes the hidden tests' goldens and, in labs/07_head_analysis/golden/, the
public tests' (other patterns: see public()).

The attention patterns are random softmax rows (torch.softmax over random
logits, one causal and one unmasked). The statistics are computed here with
vectorised NumPy, straight from the definitions in the header, on the very
float32 weights the C++ test loads:

  entropy        mean_i  -sum_j p_ij ln p_ij   (nats, 0 ln 0 = 0)
  mean_distance  mean_i   sum_j p_ij |i - j|
  previous_token mean_{i>=1} p_{i,i-1}
  self           mean_i   p_{i,i}
  first_token    mean_i   p_{i,0}
  induction      mean_{i in [L,2L)} p_{i,i-L+1}

Known-mistake goldens (what a mistaken implementation returns on the same
weights) are written next to them; docs/07_head_analysis.md, "Classic
mistakes", explains each.
"""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "goldens"))
from common import causal, golden_dir, inputs, public_golden_dir, save

OUT = golden_dir(__file__)
PUBLIC = public_golden_dir(__file__)


def softmax_pattern(seed, H, T, scale, masked):
    """(H, T, T) float32 attention weights: softmax of random logits."""
    logits = torch.from_numpy(inputs(seed, H, T, T, scale=scale).astype(np.float64))
    if masked:
        logits = logits + torch.from_numpy(causal(T).astype(np.float64))
    return torch.softmax(logits, dim=-1).numpy().astype(np.float32)


def xlogx(p):
    """p ln p with the limit 0 at p = 0."""
    out = np.zeros_like(p)
    nz = p > 0
    out[nz] = p[nz] * np.log(p[nz])
    return out


def profile(w):
    """Returns a dict of (H,) float64 arrays from (H, T, T) weights."""
    p = w.astype(np.float64)
    H, T, _ = p.shape
    i = np.arange(T)[:, None]
    j = np.arange(T)[None, :]
    rows = np.arange(1, T)
    return {
        "entropy": (-xlogx(p).sum(-1)).mean(-1),
        "entropy_bits": (-xlogx(p).sum(-1)).mean(-1) / np.log(2.0),
        "mean_distance": (p * np.abs(i - j)).sum(-1).mean(-1),
        "signed_distance": (p * (i - j)).sum(-1).mean(-1),
        "previous_token": p[:, rows, rows - 1].mean(-1),
        "previous_over_T": p[:, rows, rows - 1].sum(-1) / T,
        "self": np.einsum("hii->hi", p).mean(-1),
        "first_token": p[:, :, 0].mean(-1),
    }


def write_profile_case(name, w, OUT=OUT):
    save(OUT, name + "_weights", w)
    prof = profile(w)
    save(OUT, name + "_entropy", prof["entropy"])
    save(OUT, name + "_entropy_mistake_bits", prof["entropy_bits"])
    save(OUT, name + "_mean_distance", prof["mean_distance"])
    save(OUT, name + "_mean_distance_mistake_signed", prof["signed_distance"])
    save(OUT, name + "_mean_distance_mistake_signed_reversed", -prof["signed_distance"])
    save(OUT, name + "_previous_token", prof["previous_token"])
    save(OUT, name + "_previous_token_mistake_over_T", prof["previous_over_T"])
    save(OUT, name + "_self", prof["self"])
    save(OUT, name + "_first_token", prof["first_token"])


def induction(head, L, offset):
    p = head.astype(np.float64)
    i = np.arange(L, 2 * L)
    return np.array([p[i, i - L + offset].mean()])


def write_induction_case(out, head, L):
    save(out, "induction_weights", head)
    save(out, "induction_score", induction(head, L, offset=1))
    save(out, "induction_score_mistake_key_i_minus_L", induction(head, L, offset=0))
    save(out, "induction_score_mistake_key_i_minus_L_plus_2", induction(head, L, offset=2))
    # The sum over the second copy divided by all 2L queries.
    save(out, "induction_score_mistake_over_2L", induction(head, L, offset=1) / 2)


def public():
    """The public tests' goldens (labs/07_head_analysis/golden): other patterns
    and sizes than the hidden ones."""
    # Causal: 2 heads, 6 queries (masked keys have weight exactly 0).
    write_profile_case("causal", softmax_pattern(seed=711, H=2, T=6, scale=3.0, masked=True),
                       OUT=PUBLIC)
    # Unmasked: 3 heads, 4 queries; keys after the query make |i - j| matter.
    write_profile_case("full", softmax_pattern(seed=712, H=3, T=4, scale=2.0, masked=False),
                       OUT=PUBLIC)
    # Induction: one causal head on 2L = 6 tokens.
    L = 3
    write_induction_case(PUBLIC, softmax_pattern(seed=713, H=1, T=2 * L, scale=3.0,
                                                 masked=True)[0], L)


def main():
    public()
    # Causal: 3 heads, 7 queries; logits of scale 3 give peaked and flat rows.
    write_profile_case("causal", softmax_pattern(seed=701, H=3, T=7, scale=3.0, masked=True))
    # Unmasked: 2 heads, 5 queries; keys after the query make |i - j| matter.
    write_profile_case("full", softmax_pattern(seed=702, H=2, T=5, scale=2.0, masked=False))

    # Induction: one causal head on 2L = 8 tokens.
    L = 4
    head = softmax_pattern(seed=703, H=1, T=2 * L, scale=3.0, masked=True)[0]
    write_induction_case(OUT, head, L)


if __name__ == "__main__":
    main()
