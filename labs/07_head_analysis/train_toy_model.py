"""Train a tiny attention-only model on a toy agreement grammar for lab 7.

Run from the repository root with Debian's Python (torch 1.13, numpy 1.24):

    /usr/bin/python3 labs/07_head_analysis/train_toy_model.py

It writes labs/07_head_analysis/trained/: vocab.txt, embed.npy (V, 32),
pos.npy (T_max, 32), W_Q.npy, W_K.npy, W_V.npy, W_O.npy (32, 32) in our (in, out)
layout (Q = x @ W_Q), unembed.npy (32, V) and README.md. show_heads --trained
loads them into lab 3's MultiHeadAttention.

The grammar. A sequence is 2 to 5 clauses joined by ",":

    PRONOUN [ADVERB] VERB

with pronouns I/you/he/she/we/they in random order, an optional adverb
(often/never/also, half the time) and ONE verb stem per sequence
(work/play/read), inflected with -s after he/she. Examples:

    I work , you often work , he works
    they never read , she reads , we also read , I read

Two things can only be predicted by looking back, so they need attention:
  * after an adverb, the verb form depends on the pronoun one token back
    (agreement across the adverb);
  * the verb stem of clause 2 onward is the stem of the earlier clauses.

The model is one attention layer and nothing else:

    x = embed[tokens] + pos[:T]                    (T, 32)
    y = x + MultiHeadAttention(x, causal)          (T, 32), 4 heads, d_head 8
    logits = y @ unembed                           (T, V)

with the layer exactly as in lab 3: Q = x @ W_Q (weights (in, out), no bias),
scores scaled by 1/sqrt(d_head), additive causal mask, heads own consecutive
column blocks, combine then @ W_O. Loss: next-token cross-entropy.
Deterministic: fixed seeds, one thread.
"""

import os
import random
import time

import numpy as np
import torch

D_MODEL = 32
N_HEADS = 4
D_HEAD = D_MODEL // N_HEADS
T_MAX = 20  # 5 clauses of at most 4 tokens, joined by 4 commas = 19
STEPS = 1500
BATCH = 64
SEED = 0

PRONOUNS = ["I", "you", "he", "she", "we", "they"]
THIRD_PERSON = {"he", "she"}
STEMS = ["work", "play", "read"]
ADVERBS = ["often", "never", "also"]
VOCAB = PRONOUNS + STEMS + [s + "s" for s in STEMS] + ADVERBS + [","]
INDEX = {t: i for i, t in enumerate(VOCAB)}
# The trained model goes beside this script, whatever the working directory.
OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "trained")


def verb(stem, pronoun):
    return stem + "s" if pronoun in THIRD_PERSON else stem


def sentence(rng):
    """One sequence of the grammar, as a list of tokens."""
    stem = rng.choice(STEMS)
    n = rng.randint(2, 5)
    pronouns = rng.sample(PRONOUNS, n)
    tokens = []
    for c, p in enumerate(pronouns):
        if c > 0:
            tokens.append(",")
        tokens.append(p)
        if rng.random() < 0.5:
            tokens.append(rng.choice(ADVERBS))
        tokens.append(verb(stem, p))
    return tokens


def batch(rng, size):
    """(size, T_MAX) token ids padded with -1 (ignored by the loss)."""
    ids = torch.full((size, T_MAX), -1, dtype=torch.long)
    for b in range(size):
        s = [INDEX[t] for t in sentence(rng)]
        ids[b, : len(s)] = torch.tensor(s)
    return ids


class AttentionOnly(torch.nn.Module):
    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(SEED)
        init = lambda *shape, scale: torch.nn.Parameter(torch.randn(*shape, generator=g) * scale)
        self.embed = init(len(VOCAB), D_MODEL, scale=1.0)  # (V, d_model)
        self.pos = init(T_MAX, D_MODEL, scale=0.3)  # (T_max, d_model)
        fan = 1.0 / D_MODEL**0.5
        self.W_Q = init(D_MODEL, D_MODEL, scale=fan)  # (in, out): Q = x @ W_Q
        self.W_K = init(D_MODEL, D_MODEL, scale=fan)
        self.W_V = init(D_MODEL, D_MODEL, scale=fan)
        self.W_O = init(D_MODEL, D_MODEL, scale=fan)
        self.unembed = init(D_MODEL, len(VOCAB), scale=fan)  # (d_model, V)

    def attend(self, x):
        """x: (B, T, d_model) -> output (B, T, d_model), weights (B, H, T, T)."""
        B, T, _ = x.shape
        split = lambda m: m.view(B, T, N_HEADS, D_HEAD).transpose(1, 2)  # (B, H, T, d_head)
        q, k, v = split(x @ self.W_Q), split(x @ self.W_K), split(x @ self.W_V)
        causal = torch.triu(torch.full((T, T), float("-inf")), diagonal=1)  # (T, T), additive
        scores = q @ k.transpose(-1, -2) / D_HEAD**0.5 + causal  # (B, H, T, T)
        w = torch.softmax(scores, dim=-1)
        o = (w @ v).transpose(1, 2).reshape(B, T, D_MODEL)  # combine heads: (B, T, d_model)
        return o @ self.W_O, w

    def forward(self, ids):
        T = ids.shape[1]
        x = self.embed[ids.clamp(min=0)] + self.pos[:T]  # (B, T, d_model)
        y = x + self.attend(x)[0]  # residual
        return y @ self.unembed  # (B, T, V)


def evaluate(model, rng, n=2000):
    """Loss on fresh sequences and accuracy where the target is a verb."""
    ids = batch(rng, n)
    with torch.no_grad():
        logits = model(ids[:, :-1])
    target = ids[:, 1:]
    valid = target >= 0
    loss = torch.nn.functional.cross_entropy(logits[valid], target[valid]).item()
    verbs = torch.tensor([INDEX[s] for s in STEMS] + [INDEX[s + "s"] for s in STEMS])
    is_verb = (target.unsqueeze(-1) == verbs).any(-1)
    pred = logits.argmax(-1)
    exact = (pred[is_verb] == target[is_verb]).float().mean().item()
    # From clause 2 on the stem is known (copied from earlier verbs).
    later = (torch.cumsum((ids[:, :-1] == INDEX[","]).long(), 1) > 0) & is_verb
    exact_later = (pred[later] == target[later]).float().mean().item()
    # Agreement alone: of the two forms of the right stem, is the right one likelier?
    stem = torch.tensor([INDEX[t.rstrip("s")] if t in VOCAB[6:12] else 0 for t in VOCAB])
    t = target[is_verb]
    plain, third = stem[t], stem[t] + len(STEMS)
    lv = logits[is_verb]
    third_wins = lv.gather(1, third[:, None])[:, 0] > lv.gather(1, plain[:, None])[:, 0]
    agree = (third_wins == (t == third)).float().mean().item()
    # Separately after an adverb, where only attention can see the pronoun.
    prev = ids[:, :-1]
    adverb = torch.zeros_like(prev, dtype=torch.bool)
    for a in ADVERBS:
        adverb |= prev == INDEX[a]
    adv_mask = adverb[is_verb]
    agree_adv = (third_wins[adv_mask] == (t[adv_mask] == third[adv_mask])).float().mean().item()
    return loss, exact, exact_later, agree, agree_adv


def save(model, stats):
    os.makedirs(OUT_DIR, exist_ok=True)
    with open(os.path.join(OUT_DIR, "vocab.txt"), "w") as f:
        f.write("\n".join(VOCAB) + "\n")
    for name in ["embed", "pos", "W_Q", "W_K", "W_V", "W_O", "unembed"]:
        a = getattr(model, name).detach().numpy().astype(np.float32)
        np.save(os.path.join(OUT_DIR, name + ".npy"), a)
    loss, exact, exact_later, agree, agree_adv, seconds = stats
    with open(os.path.join(OUT_DIR, "README.md"), "w") as f:
        f.write(README.format(loss=loss, exact=exact, exact_later=exact_later, agree=agree, agree_adv=agree_adv,
                              seconds=seconds, steps=STEPS, batch=BATCH, t_max=T_MAX, vocab_len=len(VOCAB),
                              vocab=" ".join(VOCAB)))


README = """# A trained toy attention layer (lab 7)

Weights of a tiny attention-only model trained by
`labs/07_head_analysis/train_toy_model.py` on a toy agreement grammar, for
`bazel run //labs/07_head_analysis:show_heads -- --trained`.
Generated files: do not edit by hand.

The grammar: 2 to 5 clauses `PRONOUN [ADVERB] VERB` joined by `,`, pronouns
in random order, one verb stem per sequence, `-s` after he/she, e.g.
`I work , you often work , he works`. Vocabulary ({vocab_len} tokens):
`{vocab}`.

The model: `x = embed[tokens] + pos[:T]`, `y = x + MultiHeadAttention(x)`
(d_model 32, 4 heads, d_head 8, causal), `logits = y @ unembed`; nothing
else (no MLP, no layer norm). The attention weights use lab 3's layout:
`Q = x @ W_Q`, matrices (in, out), no bias, scores scaled by 1/sqrt(8).

| file | shape |
|---|---|
| vocab.txt | one token per line, row i of embed is line i |
| embed.npy | (V, 32) float32 |
| pos.npy | ({t_max}, 32) float32, learned positions |
| W_Q.npy, W_K.npy, W_V.npy, W_O.npy | (32, 32) float32, (in, out) |
| unembed.npy | (32, V) float32 (not used by show_heads) |

Training: Adam (lr 1e-2, cosine decay), {steps} steps of {batch} random sequences,
next-token cross-entropy, seeds fixed, one thread (about 10 s on a CPU;
the script prints the time).
On 2000 fresh sequences:

- loss {loss:.3f} nats per token (a floor remains: the next pronoun, the
  adverb and the stem of the first clause are random);
- verb predicted exactly: {exact:.3f} overall (the first clause's stem is a
  guess), {exact_later:.3f} from the second clause on (stem copied);
- right form of the right stem (agreement): {agree:.3f}, and {agree_adv:.3f}
  where an adverb separates the verb from its pronoun.

Regenerate (from the repository root; with torch 1.13 and numpy 1.24 on the
same kind of CPU the result is identical byte for byte; on another CPU the
float arithmetic differs in its last bits and the weights with it, while the
model's scores agree within a few thousandths):

```
/usr/bin/python3 labs/07_head_analysis/train_toy_model.py
```
"""


def main():
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    rng = random.Random(SEED)
    model = AttentionOnly()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, STEPS)
    start = time.time()
    for step in range(STEPS + 1):
        ids = batch(rng, BATCH)
        logits = model(ids[:, :-1])  # predict token t + 1 from tokens 0..t
        target = ids[:, 1:]
        valid = target >= 0
        loss = torch.nn.functional.cross_entropy(logits[valid], target[valid])
        if step % 250 == 0:
            print(f"step {step:5d}  loss {loss.item():.3f}", flush=True)
        if step == STEPS:
            break
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    seconds = time.time() - start
    loss, exact, exact_later, agree, agree_adv = evaluate(model, random.Random(SEED + 1))
    print(f"trained in {seconds:.1f} s")
    print(f"eval loss {loss:.3f}  verb exact {exact:.3f} (from clause 2: {exact_later:.3f})"
          f"  agreement {agree:.3f}"
          f"  agreement after an adverb {agree_adv:.3f}")
    save(model, (loss, exact, exact_later, agree, agree_adv, seconds))
    print("wrote", os.path.relpath(OUT_DIR))


if __name__ == "__main__":
    main()
