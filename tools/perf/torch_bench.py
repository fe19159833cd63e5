"""What the scripts that time a C++ benchmark beside PyTorch share
(backward_vs_torch.py, variant_backward_vs_torch.py).

Import it before numpy or torch: it pins OpenBLAS, OpenMP and MKL to one
thread before their pools start. Then:

  * build(target) builds a //bench binary with --config=bench and returns its path;
  * dumped(binary) runs `binary --dump DIR` and returns the raw float32 files
    it wrote ({"dx_64": flat array, ...});
  * time_alternating(...) alternates rounds of the C++ binary and of the
    PyTorch layers, so that machine noise hits both alike, and returns the
    median wall and CPU microseconds of each.

Needs Debian's python3-torch and python3-numpy (tools/setup.sh --dev).
"""
import json
import os
import statistics
import subprocess
import tempfile
import time

# One thread everywhere, set before torch or OpenBLAS start their pools.
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

import numpy as np  # noqa: E402
import torch  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def bazel(args, output_base=None):
    cmd = ["bazel"] + (["--output_base=" + output_base] if output_base else []) + args
    return subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True).stdout


def build(target, output_base=None):
    """Builds //bench:<name> optimised against the solutions; returns the binary's path."""
    bazel(["build", "--config=bench", target], output_base)
    bin_dir = bazel(["info", "--config=bench", "bazel-bin"], output_base).strip()
    return os.path.join(bin_dir, "bench", target.split(":")[-1])


def add_timing_args(ap):
    """The options every such script takes."""
    ap.add_argument("--rounds", type=int, default=5, help="C++ / PyTorch alternations")
    ap.add_argument("--min_time", type=float, default=0.5, help="Google Benchmark seconds per row")
    ap.add_argument("--reps", type=int, default=30, help="timed PyTorch steps per round")
    ap.add_argument("--binary", help="use this benchmark binary instead of building it")


def numpy_rng_draws(shapes):
    """NumpyRng(0).normal_matrix draws in order: (rows, cols, fan_in) each, float32."""
    rng = np.random.default_rng(0)
    return [rng.standard_normal((r, c)).astype(np.float32) * np.float32(1 / np.sqrt(f))
            for r, c, f in shapes]


def causal(n):
    """(n, n) additive causal mask, float32 torch."""
    return torch.triu(torch.full((n, n), float("-inf")), diagonal=1)


def split_heads(m, n_heads):
    """(T, n_heads*d_head) -> (n_heads, T, d_head), a view."""
    T, d = m.shape
    return m.view(T, n_heads, d // n_heads).transpose(0, 1)


def attention(q, k, v, mask):
    """softmax(q k^T / sqrt(d_head) + mask) v, (H, T, d_head)."""
    p = torch.softmax(q @ k.transpose(-1, -2) / np.sqrt(q.shape[-1]) + mask, dim=-1)
    return p @ v


class OpsLayer:
    """A layer written in plain torch ops, float32, weights (in, out) drawn as
    NumpyRng(0) draws them (shapes: (rows, cols, fan_in) in draw order) with
    their gradients' names. A subclass defines forward(x, *W) -> y (T, d) and
    uses self.mask, the (T, T) causal mask."""

    names = ()

    def __init__(self, T, shapes):
        self.W = [torch.from_numpy(w).requires_grad_() for w in numpy_rng_draws(shapes)]
        self.mask = causal(T)

    def step(self, x, d_y):
        """Forward and backward; x (T, d) requires grad. Returns nothing."""
        for w in self.W:
            w.grad = None
        x.grad = None
        self.forward(x, *self.W).backward(d_y)

    def grads(self, x):
        """{dx, dW_...} after step."""
        return {"dx": x.grad.numpy(), **{n: w.grad.numpy() for n, w in zip(self.names, self.W)}}


def dumped(binary):
    """{file stem: flat float32 array} of what `binary --dump DIR` writes."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([binary, "--dump", tmp], check=True)
        return {os.path.splitext(f)[0]: np.fromfile(os.path.join(tmp, f), np.float32)
                for f in os.listdir(tmp) if f.endswith(".f32")}


def relative_diff(ours, ref):
    """max |ours - ref| / max |ref|."""
    return float(np.max(np.abs(ours.reshape(ref.shape) - ref)) / max(1e-12, np.max(np.abs(ref))))


def time_torch(layer, x, d_y, reps):
    """Wall and CPU microseconds of `reps` layer.step(x, d_y), after two warm-up steps."""
    layer.step(x, d_y)
    layer.step(x, d_y)
    wall, cpu = [], []
    for _ in range(reps):
        t0, c0 = time.perf_counter(), time.process_time()
        layer.step(x, d_y)
        cpu.append((time.process_time() - c0) * 1e6)
        wall.append((time.perf_counter() - t0) * 1e6)
    return wall, cpu


def run_cpp(binary, min_time, names):
    """{(names[benchmark], d_model): (real us, cpu us)} from one run of the binary
    (its rows are BM_Name/d_model:D, in microseconds)."""
    p = subprocess.run([binary, "--benchmark_format=json", "--benchmark_min_time=%g" % min_time],
                       check=True, capture_output=True, text=True)
    out = {}
    for b in json.loads(p.stdout)["benchmarks"]:
        name, arg = b["name"].split("/")
        out[(names[name], int(arg.split(":")[1]))] = (b["real_time"], b["cpu_time"])
    return out


def time_alternating(binary, args, cpp_names, torch_layers, inputs):
    """args.rounds rounds of: the C++ binary once (its rows keyed as run_cpp
    keys them), then each PyTorch layer of torch_layers ({key: (layer, d)})
    args.reps steps on inputs[d] = (x, d_y). Returns the medians (wall, cpu),
    {key: microseconds}."""
    wall, cpu = {}, {}
    for _ in range(args.rounds):
        for key, (real, c) in run_cpp(binary, args.min_time, cpp_names).items():
            wall.setdefault(key, []).append(real)
            cpu.setdefault(key, []).append(c)
        for key, (layer, d) in torch_layers.items():
            x, d_y = inputs[d]
            xt = torch.from_numpy(x.copy()).requires_grad_()
            wl, cp = time_torch(layer, xt, torch.from_numpy(d_y), args.reps)
            wall.setdefault(key, []).extend(wl)
            cpu.setdefault(key, []).extend(cp)
    return ({k: statistics.median(v) for k, v in wall.items()},
            {k: statistics.median(v) for k, v in cpu.items()})


def write_json(path, result):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(result, f, indent=1)
