#!/usr/bin/python3
"""The PyTorch pilot of lab 15: the Mini-GPT and its training, in torch ops.

    /usr/bin/python3 tests/15_mini_gpt/pilot.py                       # 3 seeds x 3 settings
    /usr/bin/python3 tests/15_mini_gpt/pilot.py --score all --seeds 0 --steps 300 \
        --d_model 32 --d_ff 128                                       # one run, smaller model
    /usr/bin/python3 tests/15_mini_gpt/pilot.py --json out/pilot.json

Written from the lab's specification (the comments of labs/15_mini_gpt/mini_gpt.h
and issue 37) and the corpus of tests/15_mini_gpt/verb_grammar.py alone,
independently of the C++, and run with Debian's PyTorch on one thread
(float32). It is what the C++ experiment (bazel run //labs/15_mini_gpt:train_mini_gpt)
is checked against: the same model, weights, batches and settings, so that the
first losses agree to float rounding and the final accuracies can be compared.

The model: x_0 = embed[tokens] (no position vector); per block (pre-LN, GPT-2's
order) a = LN1(x), h = x + RoPE-attention(a, causal) @ W_O (no biases; half-split
rotary pairs, base 10000), b = LN2(h), y = h + gelu(b @ W_1 + b_1) @ W_2 + b_2
(exact GELU); then LN_f, and logits = h @ embed^T (tied). Weights as the C++
constructors draw them from np.random.default_rng: embed from seed; block l's
W_Q, W_K, W_V, W_O from seed + 1000 (l + 1), its W_1, W_2 from seed + 1000 (l + 1) + 1.

Training: the 912 training sentences; each step the next 16 of a queue that
holds them in a random order, refilled with a fresh order when fewer than 16
are left (an order: Fisher-Yates from the last position down, j = floor(u (i + 1)),
u = np.random.default_rng(seed + 1).random(), as the C++ Trainer; --sampling
replacement draws floor(u * 912) instead); the loss of a sentence is the mean
cross-entropy over its scored positions, the step's loss the mean over its 16
sentences (--mean tokens: the mean over every scored position of the batch). AdamW (0.9, 0.95, eps 1e-8, weight
decay 0.1 on embed, W_Q, W_K, W_V, W_O, W_1, W_2 only), the global gradient norm
clipped to 1.0, the learning rate of step t = 1 .. steps warm-up to 3e-3 over 100
steps, then cosine to 3e-4 at the last step.

Settings: --score decided (the default) scores only the positions whose next
token the grammar fixes; --score all scores every position; --no_attention
removes both attention sub-layers (h = x), so that no position sees another.

Reported per run: the loss (train and held out, on the run's scoring) at a few
steps; the accuracy of the argmax at the grammar-fixed positions by category,
on held-out and on training sentences; the share of held-out sentences whose
Spanish half the model writes exactly, greedily, from the English half and "/";
the seconds. And once, the n-gram baseline of the same accuracies.

Measured (Debian's PyTorch 1.13, one thread, the defaults: /usr/bin/python3
tests/15_mini_gpt/pilot.py), held-out accuracy at the grammar-fixed positions:

  setting           seed  agreement  form   stem   pronoun  "-s" alone  translations
  --score decided     0     1.000   1.000  1.000   1.000     1.000        1.000
  --score decided     1     1.000   0.997  1.000   1.000     1.000        0.990
  --score decided     2     0.982   0.934  1.000   1.000     1.000        0.823
  --score all         0     0.571   1.000  1.000   1.000     0.062        1.000
  --score all         1     0.458   1.000  1.000   1.000     0.000        1.000
  --score all         2     0.571   1.000  1.000   1.000     0.250        1.000
  no attention        0     0.000   0.000  0.000   0.250     0.000        0.000
  no attention        1     0.143   0.000  0.000   0.250     0.000        0.000
  no attention        2     0.000   0.000  0.000   0.250     0.000        0.000
  --score decided, seeds 3-7: agreement 0.881, 0.857, 0.952, 0.857, 0.815;
  form 1.000, 1.000, 1.000, 0.997, 1.000 (--seeds 3,4,5,6,7 --score decided)

Against the numbers issue 37 quotes for the pilot it asked for: with --score decided,
held-out agreement >= 99% and every Spanish category and translation 100% on
3 seeds of 3 is NOT reproduced (seed 2 above, and seeds 3-7: the model
sometimes keeps "this verb is never followed by s" for a held-out present
verb); with --score all the Spanish half generalises and the "-s" falls
(<= 10% on seeds 0 and 1, 25% on seed 2); without attention agreement is 0%
to 14% and the Spanish forms 0% (quoted: 7% and 0%). The first steps agree
with the C++ program's (train_mini_gpt, same seed) to the fourth decimal.
"""
import argparse
import json
import math
import os
import sys
import time

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"

import numpy as np  # noqa: E402
import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import verb_grammar as vg  # noqa: E402

REPORTED = ["english_agreement", "spanish_form", "spanish_stem", "spanish_pronoun"]


# ------------------------------------------------------------------ the model

def weights(rng, rows, cols, fan_in):
    """As NumpyRng::normal_matrix: float32(z) * float32(1 / sqrt(fan_in))."""
    return rng.standard_normal((rows, cols)).astype(np.float32) * np.float32(1 / np.sqrt(fan_in))


class MiniGpt:
    """The parameters, in the header's declaration order, as torch leaves."""

    def __init__(self, vocab, max_len, d_model, n_heads, d_ff, n_layers, seed, base=10000.0):
        self.vocab, self.max_len, self.d, self.H, self.d_ff = vocab, max_len, d_model, n_heads, d_ff
        self.base = base
        p = [("embed", weights(np.random.default_rng(seed), vocab, d_model, d_model), True)]
        for l in range(n_layers):
            s = seed + 1000 * (l + 1)
            r = np.random.default_rng(s)
            wq, wk, wv, wo = (weights(r, d_model, d_model, d_model) for _ in range(4))
            r = np.random.default_rng(s + 1)
            w1 = weights(r, d_model, d_ff, d_model)
            w2 = weights(r, d_ff, d_model, d_ff)
            ones, zeros = np.ones(d_model, np.float32), np.zeros(d_model, np.float32)
            p += [("blocks.%d.ln1_gamma" % l, ones, False), ("blocks.%d.ln1_beta" % l, zeros, False),
                  ("blocks.%d.attn.W_Q" % l, wq, True), ("blocks.%d.attn.W_K" % l, wk, True),
                  ("blocks.%d.attn.W_V" % l, wv, True), ("blocks.%d.attn.W_O" % l, wo, True),
                  ("blocks.%d.ln2_gamma" % l, ones, False), ("blocks.%d.ln2_beta" % l, zeros, False),
                  ("blocks.%d.ffn.W_1" % l, w1, True),
                  ("blocks.%d.ffn.b_1" % l, np.zeros(d_ff, np.float32), False),
                  ("blocks.%d.ffn.W_2" % l, w2, True), ("blocks.%d.ffn.b_2" % l, zeros, False)]
        p += [("lnf_gamma", np.ones(d_model, np.float32), False),
              ("lnf_beta", np.zeros(d_model, np.float32), False)]
        self.names = [n for n, _, _ in p]
        self.decayed = {n for n, _, d in p if d}
        self.p = {n: torch.tensor(np.array(v), requires_grad=True) for n, v, _ in p}
        self.n_layers = n_layers
        # RoPE's cos and sin at positions 0 .. max_len - 1: angles in double,
        # rounded to float once; half-split pairs (i with i + d_head / 2).
        dh = d_model // n_heads
        theta = base ** (-2.0 * np.arange(dh // 2) / dh)
        angles = np.arange(max_len)[:, None] * theta[None, :]
        self.cos = torch.tensor(np.cos(angles).astype(np.float32))  # (max_len, d_head / 2)
        self.sin = torch.tensor(np.sin(angles).astype(np.float32))

    def parameter_count(self):
        return sum(t.numel() for t in self.p.values())

    def rope(self, x):  # (B, H, T, d_head)
        T, half = x.shape[2], x.shape[3] // 2
        c, s = self.cos[:T], self.sin[:T]
        a, b = x[..., :half], x[..., half:]
        return torch.cat([a * c - b * s, b * c + a * s], dim=-1)

    def logits(self, tokens, attention=True, with_weights=False):
        """tokens: (B, T) ids -> logits (B, T, vocab) [and per block (B, H, T, T)]."""
        p, B, T = self.p, tokens.shape[0], tokens.shape[1]
        dh = self.d // self.H
        mask = torch.triu(torch.full((T, T), float("-inf")), diagonal=1)
        x = p["embed"][tokens]  # (B, T, d)
        maps = []
        for l in range(self.n_layers):
            q = "blocks.%d." % l
            a = torch.nn.functional.layer_norm(x, (self.d,), p[q + "ln1_gamma"], p[q + "ln1_beta"], 1e-5)
            if attention:
                def heads(w):
                    return (a @ p[q + "attn." + w]).view(B, T, self.H, dh).transpose(1, 2)
                qh, kh, vh = self.rope(heads("W_Q")), self.rope(heads("W_K")), heads("W_V")
                att = torch.softmax(qh @ kh.transpose(-1, -2) / math.sqrt(dh) + mask, dim=-1)
                maps.append(att)
                o = (att @ vh).transpose(1, 2).reshape(B, T, self.d)
                h = x + o @ p[q + "attn.W_O"]
            else:
                h = x
            b = torch.nn.functional.layer_norm(h, (self.d,), p[q + "ln2_gamma"], p[q + "ln2_beta"], 1e-5)
            f = torch.nn.functional.gelu(b @ p[q + "ffn.W_1"] + p[q + "ffn.b_1"])
            x = h + f @ p[q + "ffn.W_2"] + p[q + "ffn.b_2"]
        hf = torch.nn.functional.layer_norm(x, (self.d,), p["lnf_gamma"], p["lnf_beta"], 1e-5)
        out = hf @ p["embed"].T
        return (out, maps) if with_weights else out


# ------------------------------------------------------------------- the data

def examples(sentences, score, nexts):
    """Per sentence (inputs, targets): inputs ids[:-1], targets ids[1:] where
    scored, -1 elsewhere."""
    out = []
    for *_, ids in sentences:
        inputs, targets = ids[:-1], list(ids[1:])
        if score == "decided":
            keep = {pos for pos, _, _ in vg.decisions(ids, nexts)}
            targets = [tg if t in keep else -1 for t, tg in enumerate(targets)]
        out.append((inputs, targets))
    return out


def pad(batch):
    T = max(len(i) for i, _ in batch)
    inputs = torch.tensor([i + [vg.ID["<eos>"]] * (T - len(i)) for i, _ in batch])
    targets = torch.tensor([t + [-1] * (T - len(t)) for _, t in batch])
    return inputs, targets


def batch_loss(model, inputs, targets, attention):
    """The mean over sentences of each sentence's mean cross-entropy over its
    scored positions."""
    logits = model.logits(inputs, attention)
    B, T, V = logits.shape
    ce = torch.nn.functional.cross_entropy(logits.reshape(B * T, V), targets.reshape(-1),
                                           ignore_index=-1, reduction="none").view(B, T)
    return (ce.sum(1) / (targets >= 0).sum(1)).mean()


def learning_rate_at(step, max_lr, min_lr, warmup, total):
    if step < warmup:
        return max_lr * step / warmup
    if step > total:
        return min_lr
    return min_lr + 0.5 * (1 + math.cos(math.pi * (step - warmup) / (total - warmup))) * (max_lr - min_lr)


# -------------------------------------------------------------- measurements

def accuracy(model, sentences, nexts, attention):
    """{category: (correct, total)} of the argmax at the grammar-fixed positions."""
    counts = {c: [0, 0] for c in vg.CATEGORIES}
    with torch.no_grad():
        for start in range(0, len(sentences), 128):
            chunk = sentences[start:start + 128]
            inputs, _ = pad([(s[3][:-1], s[3][1:]) for s in chunk])
            pred = model.logits(inputs, attention).argmax(-1)  # ties: the lowest id
            for row, (*_, ids) in enumerate(chunk):
                for pos, target, cat in vg.decisions(ids, nexts):
                    counts[cat][0] += int(pred[row, pos].item() == target)
                    counts[cat][1] += 1
    return counts


def translations(model, sentences, attention):
    """Share of sentences whose Spanish half greedy decoding writes exactly from
    the English half and "/"; and a few of them, as text."""
    exact, shown = 0, []
    with torch.no_grad():
        for *_, ids in sentences:
            slash = ids.index(vg.ID["/"])
            out = list(ids[:slash + 1])
            while len(out) < model.max_len and out[-1] != vg.ID["<eos>"]:
                logits = model.logits(torch.tensor([out]), attention)[0, -1]
                out.append(int(logits.argmax().item()))
            exact += int(out == list(ids))
            if len(shown) < 4:
                shown.append(" ".join(vg.TOKENS[i] for i in out))
    return exact / len(sentences), shown


def mean_loss(model, data, attention):
    with torch.no_grad():
        total = 0.0
        for start in range(0, len(data), 128):
            inputs, targets = pad(data[start:start + 128])
            total += batch_loss(model, inputs, targets, attention).item() * len(data[start:start + 128])
    return total / len(data)


def ngram_accuracy(n, train, sentences, nexts):
    """{category: (correct, total)} of an n-gram model of the training
    sentences: the most frequent next token after the last n - 1 tokens,
    backing off to shorter contexts, ties to the lowest id."""
    counts = {}
    for *_, ids in train:
        for t in range(len(ids) - 1):
            for k in range(0, n):
                if t - k + 1 < 0:
                    break
                ctx = tuple(ids[t - k + 1:t + 1]) if k else ()
                counts.setdefault(ctx, {}).setdefault(ids[t + 1], 0)
                counts[ctx][ids[t + 1]] += 1
    out = {c: [0, 0] for c in vg.CATEGORIES}
    for *_, ids in sentences:
        for pos, target, cat in vg.decisions(ids, nexts):
            for k in range(n - 1, -1, -1):
                ctx = tuple(ids[pos - k + 1:pos + 1]) if k else ()
                if pos - k + 1 >= 0 and ctx in counts:
                    seen = counts[ctx]
                    guess = min(seen, key=lambda tok: (-seen[tok], tok))
                    break
            out[cat][0] += int(guess == target)
            out[cat][1] += 1
    return out


def fractions(counts):
    return {c: counts[c][0] / counts[c][1] for c in REPORTED if counts[c][1]}


def s_slot_accuracy(model, sentences, nexts, attention):
    """(correct, total) of the argmax where the grammar-fixed target is "s"
    (he or she with a present-tense verb: the English "-s")."""
    right = total = 0
    with torch.no_grad():
        for *_, ids in sentences:
            pred = model.logits(torch.tensor([ids[:-1]]), attention)[0].argmax(-1)
            for pos, target, _ in vg.decisions(ids, nexts):
                if target == vg.ID["s"]:
                    right += int(pred[pos].item() == target)
                    total += 1
    return right, total


# ------------------------------------------------------------------ training

def shuffled(n, draws):
    """0 .. n-1 in a random order: Fisher-Yates from the last position down,
    j = floor(u (i + 1)) with u = draws.random() (as the C++ Trainer)."""
    order = list(range(n))
    for i in range(n - 1, 0, -1):
        j = int(draws.random() * (i + 1))
        order[i], order[j] = order[j], order[i]
    return order


def train_once(args, seed, score, attention, log):
    sentences = vg.all_sentences()
    train, held = vg.split(sentences)
    nexts = vg.continuations(sentences)
    model = MiniGpt(64, 32, args.d_model, args.n_heads, args.d_ff, args.n_layers, seed)
    train_data = examples(train, score, nexts)
    held_data = examples(held, score, nexts)
    groups = [{"params": [model.p[n] for n in model.names if n in model.decayed], "weight_decay": 0.1},
              {"params": [model.p[n] for n in model.names if n not in model.decayed], "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=0.0, betas=(0.9, 0.95), eps=1e-8)
    params = [model.p[n] for n in model.names]
    draws = np.random.default_rng(seed + 1)
    losses, queue = [], []
    start = time.time()
    for step in range(1, args.steps + 1):
        if args.sampling == "replacement":
            picks = [int(draws.random() * len(train_data)) for _ in range(args.batch)]
        else:  # epochs: a fresh shuffle of the training sentences each time they run out
            while len(queue) < args.batch:
                queue += shuffled(len(train_data), draws)
            picks, queue = queue[:args.batch], queue[args.batch:]
        inputs, targets = pad([train_data[i] for i in picks])
        if args.mean == "tokens":
            logits = model.logits(inputs, attention)
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                     targets.reshape(-1), ignore_index=-1)
        else:
            loss = batch_loss(model, inputs, targets, attention)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        lr = learning_rate_at(step, args.max_lr, args.min_lr, args.warmup, args.steps)
        for g in opt.param_groups:
            g["lr"] = lr
        opt.step()
        if step == 1 or step % args.eval_every == 0 or step == args.steps:
            losses.append({"step": step, "batch": loss.item(),
                           "train": mean_loss(model, train_data, attention),
                           "held_out": mean_loss(model, held_data, attention)})
            log("  step %4d  batch %.4f  train %.4f  held out %.4f" %
                (step, loss.item(), losses[-1]["train"], losses[-1]["held_out"]))
    seconds = time.time() - start
    held_acc = accuracy(model, held, nexts, attention)
    train_acc = accuracy(model, train, nexts, attention)
    exact, shown = translations(model, held, attention)
    s_right, s_total = s_slot_accuracy(model, held, nexts, attention)
    return {"held_out_s": s_right / s_total if s_total else None, "seed": seed, "score": score, "attention": attention, "steps": args.steps,
            "parameters": model.parameter_count(), "losses": losses, "seconds": seconds,
            "held_out": fractions(held_acc), "train": fractions(train_acc),
            "translations_exact": exact, "translations": shown}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--score", choices=["decided", "all"], action="append",
                    help="what the loss scores (repeatable; default: decided, all and no attention)")
    ap.add_argument("--no_attention", action="store_true", help="only the no-attention runs")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--d_model", type=int, default=64)
    ap.add_argument("--n_heads", type=int, default=4)
    ap.add_argument("--d_ff", type=int, default=256)
    ap.add_argument("--n_layers", type=int, default=2)
    ap.add_argument("--max_lr", type=float, default=3e-3)
    ap.add_argument("--min_lr", type=float, default=3e-4)
    ap.add_argument("--warmup", type=int, help="warm-up steps (default: a tenth of --steps, at most 100)")
    ap.add_argument("--eval_every", type=int, default=250)
    ap.add_argument("--ngram", type=int, default=3)
    ap.add_argument("--sampling", choices=["epochs", "replacement"], default="epochs",
                    help="how a step's sentences are drawn")
    ap.add_argument("--mean", choices=["sentences", "tokens"], default="sentences",
                    help="the step's loss: the mean of the sentences' means, or over every scored token")
    ap.add_argument("--json", help="write every run's numbers here")
    args = ap.parse_args()
    if args.warmup is None:
        args.warmup = min(100, args.steps // 10)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    seeds = [int(s) for s in args.seeds.split(",")]
    if args.no_attention:
        settings = [((args.score or ["decided"])[0], False)]
    elif args.score:
        settings = [(s, True) for s in args.score]
    else:
        settings = [("decided", True), ("all", True), ("decided", False)]

    sentences = vg.all_sentences()
    train, held = vg.split(sentences)
    nexts = vg.continuations(sentences)
    ngram = {"n": args.ngram,
             "held_out": fractions(ngram_accuracy(args.ngram, train, held, nexts)),
             "train": fractions(ngram_accuracy(args.ngram, train, train, nexts))}
    print("corpus: %d sentences, %d train, %d held out; entropy floor %.4f nats" %
          (len(sentences), len(train), len(held), vg.entropy_floor(train)))
    print("%d-gram baseline: held out %s; train %s" % (
        args.ngram, " ".join("%s %.3f" % kv for kv in ngram["held_out"].items()),
        " ".join("%s %.3f" % kv for kv in ngram["train"].items())))

    runs = []
    for score, attention in settings:
        for seed in seeds:
            print("--score %s%s, seed %d" % (score, "" if attention else ", no attention", seed),
                  flush=True)
            run = train_once(args, seed, score, attention, lambda s: print(s, flush=True))
            runs.append(run)
            print("  held out: %s   translations %.3f" % (
                " ".join("%s %.3f" % kv for kv in run["held_out"].items()), run["translations_exact"]))
            print("  train:    %s" % " ".join("%s %.3f" % kv for kv in run["train"].items()))
            print("  held-out \"s\" after he/she (present): %.3f" % run["held_out_s"])
            print("  %s" % run["translations"][0])
            print("  %.1f s" % run["seconds"], flush=True)

    print("\nsummary (held-out accuracy at the grammar-fixed positions; train in brackets)")
    print("%-22s %4s  %-14s %-14s %-14s %-14s %s" % ("setting", "seed", *REPORTED, "translations"))
    for r in runs:
        name = r["score"] + ("" if r["attention"] else ", no attention")
        print("%-22s %4d  %s %.3f" % (name, r["seed"], " ".join(
            "%.3f (%.3f)  " % (r["held_out"][c], r["train"][c]) for c in REPORTED),
            r["translations_exact"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"ngram": ngram, "runs": runs,
                       "settings": vars(args)}, f, indent=1, sort_keys=True)
        print("wrote", args.json)


if __name__ == "__main__":
    main()
