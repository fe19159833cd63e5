#!/usr/bin/python3
"""Lab 15: one training step of the default Mini-GPT, C++ beside PyTorch; and
one generated token with the KV cache beside re-running the model.

    /usr/bin/python3 tools/perf/mini_gpt_step_vs_torch.py [--rounds 7] [--min_time 0.5]

Builds //bench:mini_gpt_bench (optimised, against the solutions: --config=bench)
and, alternating round by round so that machine noise hits both alike, times
one step of train_mini_gpt's default model, MiniGpt(64, 32, 64, 4, 256, 2,
seed 0) (103,680 parameters), on a fixed batch of 16 training sentences of
the verb grammar (--score decided), one thread each:

  * C++ (BM_TrainingStep): gpt_loss_and_grads on each sentence
    (solutions/15_mini_gpt on lab 14's blocks), the mean gradient,
    clip_grad_norm(1.0), one AdamW step;
  * PyTorch 1.13, float32, torch.set_num_threads(1): the same model in torch
    ops (tests/15_mini_gpt/pilot.py's, the pilot of the lab) on the whole batch
    at once (padded to the longest sentence), loss.backward(),
    clip_grad_norm_(1.0), torch.optim.AdamW (decay on the matrices only).

It first checks that both compute the same mean loss for the batch on the
same weights. C++ times are Google Benchmark's CPU time (median over
rounds), PyTorch's the process CPU time per step (median over rounds); wall
times are printed beside them. Target: C++ / PyTorch <= 0.5.

Then the decoder: BM_CachedToken (one GptDecoder step with S - 1 tokens
cached) against BM_Recompute (MiniGpt::logits over all S tokens), S = 16 ..
1024 (the default sizes with max_len 1024), CPU time per generated token,
median of --rounds repetitions.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch_bench  # noqa: F401  (first: one thread for OpenBLAS, OpenMP, MKL)
import torch  # noqa: E402

sys.path.insert(0, os.path.join(torch_bench.ROOT, "tests", "15_mini_gpt"))
import pilot  # noqa: E402  (the lab's PyTorch pilot: the model in torch ops)
import verb_grammar  # noqa: E402

TARGET = "//bench:mini_gpt_bench"
BATCH = 16


def torch_side():
    """The model, its AdamW and the batch, as BM_TrainingStep has them."""
    sentences = verb_grammar.all_sentences()
    train, _ = verb_grammar.split(sentences)
    data = pilot.examples(train, "decided", verb_grammar.continuations(sentences))
    batch = pilot.pad([data[(57 * b) % len(data)] for b in range(BATCH)])
    model = pilot.MiniGpt(64, 32, 64, 4, 256, 2, 0)
    groups = [{"params": [model.p[n] for n in model.names if n in model.decayed],
               "weight_decay": 0.1},
              {"params": [model.p[n] for n in model.names if n not in model.decayed],
               "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=1e-3, betas=(0.9, 0.95), eps=1e-8)
    return model, opt, batch


def torch_step(model, opt, batch):
    loss = pilot.batch_loss(model, *batch, True)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_([model.p[n] for n in model.names], 1.0)
    opt.step()
    return loss


def torch_round(model, opt, batch, min_time):
    """(CPU, wall) microseconds per step over at least min_time CPU seconds."""
    n, c0, w0 = 0, time.process_time(), time.perf_counter()
    while time.process_time() - c0 < min_time:
        torch_step(model, opt, batch)
        n += 1
    return (time.process_time() - c0) / n * 1e6, (time.perf_counter() - w0) / n * 1e6


def cpp_rows(binary, bench_filter, min_time, repetitions=1):
    args = [binary, "--benchmark_format=json", "--benchmark_filter=" + bench_filter,
            "--benchmark_min_time=%g" % min_time]
    if repetitions > 1:
        args += ["--benchmark_repetitions=%d" % repetitions,
                 "--benchmark_report_aggregates_only=true"]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["benchmarks"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    torch_bench.add_timing_args(ap)
    ap.set_defaults(rounds=7)
    args = ap.parse_args()
    torch.set_num_threads(1)
    binary = args.binary or torch_bench.build(TARGET)

    model, opt, batch = torch_side()
    with tempfile.TemporaryDirectory() as tmp:
        dump = os.path.join(tmp, "loss.txt")
        subprocess.run([binary, "--dump", dump], check=True)
        cpp_loss = float(open(dump).read())
    with torch.no_grad():
        torch_loss = pilot.batch_loss(model, *batch, True).item()
    print("the batch's mean loss on the same weights: C++ %.6f, PyTorch %.6f" %
          (cpp_loss, torch_loss))
    if abs(cpp_loss - torch_loss) > 1e-4 * abs(torch_loss):
        sys.exit("the two sides compute different losses: not the same model")
    for _ in range(3):
        torch_step(model, opt, batch)  # warm-up

    cpp_cpu, cpp_wall, tor_cpu, tor_wall = [], [], [], []
    for r in range(args.rounds):
        row = cpp_rows(binary, "BM_TrainingStep$", args.min_time)[0]
        cpp_cpu.append(row["cpu_time"])
        cpp_wall.append(row["real_time"])
        c, w = torch_round(model, opt, batch, args.min_time)
        tor_cpu.append(c)
        tor_wall.append(w)
        print("round %d: CPU per step C++ %.0f us, PyTorch %.0f us (wall %.0f, %.0f)" %
              (r + 1, cpp_cpu[-1], tor_cpu[-1], cpp_wall[-1], tor_wall[-1]), flush=True)
    c, t = statistics.median(cpp_cpu), statistics.median(tor_cpu)
    print("median CPU time per training step (16 sentences): C++ %.2f ms, PyTorch %.2f ms, "
          "ratio C++/PyTorch %.2fx (target <= 0.5); wall %.2f ms, %.2f ms" %
          (c / 1e3, t / 1e3, c / t, statistics.median(cpp_wall) / 1e3,
           statistics.median(tor_wall) / 1e3))

    rows = cpp_rows(binary, "BM_(CachedToken|Recompute)", args.min_time / 2, args.rounds)
    med = {}
    for b in rows:
        if b.get("aggregate_name") == "median":
            name, s = b["run_name"].split("/")
            med[(name, int(s.split(":")[1]))] = b["cpu_time"]
    print("\none generated token, CPU time (median of %d):" % args.rounds)
    print("| S | cached us | recompute us | recompute / cached |")
    print("| ---: | ---: | ---: | ---: |")
    for s in sorted({s for _, s in med}):
        a, b = med[("BM_CachedToken", s)], med[("BM_Recompute", s)]
        print("| %d | %.0f | %.0f | **%.0fx** |" % (s, a, b, b / a))
    print("load average: %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()
