"""The reader's Mini-GPT playground: lab 15's model, the learner's own, as a
process that the page's requests reach through ./lab read's server.

The model is computed by a small C++ program of lab 15
(//labs/15_mini_gpt:playground, labs/15_mini_gpt/playground.cc), built from
the learner's own code and run on the checkpoint train_mini_gpt saved. It
opens no socket: ./lab read starts it with pipes, writes one request per
line and reads one JSON answer per line (the protocol is at the top of
playground.cc). Everything a request carries is checked here first (the
program checks again), so the page gets a clear error naming the value, and
the program never sees a malformed line.

Before the model can answer, the page is told where the learner stands, with
the command to run: lab 15 not written yet, failing its public tests at the
last ./lab status / watch, not building, no checkpoint yet, a checkpoint the
program refuses; then ready. A checkpoint saved again while ./lab read runs
is loaded again at the next request.
"""
import json
import os
import select
import subprocess
import threading
import time

from labs import ROOT, load_labs
from learner import files, i18n
from learner.bazel import Bazel
from reports import messages

LAB_DIR = "15_mini_gpt"
TARGET = "//labs/15_mini_gpt:playground"
# Where train_mini_gpt saves the trained model (its output folder).
CHECKPOINT = os.path.join("out", "train_mini_gpt", "checkpoint.npz")
TRAIN = "bazel run //labs/15_mini_gpt:train_mini_gpt"
WATCH = "./lab watch 15"
# Seconds the program may take: to load a checkpoint, to answer a request.
START_SECONDS, ANSWER_SECONDS = 30, 20
MAX_BYTES = 1 << 20   # an answer longer than this is the program's fault

# What a run request may hold: (type, lowest, highest) of each number.
LIMITS = {"temperature": (float, 0.05, 5.0), "top_k": (int, 0, 64), "seed": (int, 0, 2**31 - 1),
          "max_new": (int, 0, 32)}


class RequestError(ValueError):
    """A request the page should not have sent: {"error": code, ...fields}."""

    def __init__(self, code, **fields):
        super().__init__(code)
        self.answer = dict(error=code, **fields)


def lab_of(root=ROOT):
    return next((lab for lab in load_labs(root) if lab.dir == LAB_DIR), None)


def split_suggestion(word, vocab):
    """"walks" -> "walk s", "walk," -> "walk ,": the word as two tokens, or None."""
    for i in range(len(word) - 1, 0, -1):
        if word[:i] in vocab and word[i:] in vocab:
            return word[:i] + " " + word[i:]
    return None


def parse_request(data, info):
    """The program's request line for a run request (a JSON object from the
    page), after checking every field; RequestError names what is wrong."""
    if not isinstance(data, dict):
        raise RequestError("bad_request", detail="expected a JSON object")
    known = {"tokens", "off", "mode", "temperature", "top_k", "seed", "max_new"}
    extra = sorted(set(data) - known)
    if extra:
        raise RequestError("bad_request", detail="unknown field %s" % extra[0])
    vocab, config = info["vocab"], info["config"]
    tokens = data.get("tokens", "")
    if isinstance(tokens, str):
        tokens = tokens.split()
    if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
        raise RequestError("bad_request", detail="tokens must be text")
    if tokens and tokens[0] != "<bos>":
        tokens = ["<bos>"] + tokens
    if len(tokens) <= 1:
        raise RequestError("empty")
    for i, t in enumerate(tokens):
        if t not in vocab:
            raise RequestError("unknown_token", token=t[:40], position=i,
                               suggestion=split_suggestion(t, vocab))
    if len(tokens) > config["max_len"]:
        raise RequestError("too_long", length=len(tokens), max=config["max_len"])
    off = data.get("off", [])
    if not isinstance(off, list) or not all(
            isinstance(p, list) and len(p) == 2 and all(type(x) is int for x in p) and
            0 <= p[0] < config["n_layers"] and 0 <= p[1] < config["n_heads"] for p in off):
        raise RequestError("bad_head", blocks=config["n_layers"], heads=config["n_heads"])
    mode = data.get("mode", "greedy")
    if mode not in ("greedy", "sample"):
        raise RequestError("bad_request", detail="mode must be greedy or sample")
    fields = {"tokens": " ".join(tokens), "off": ",".join("%d.%d" % tuple(p) for p in off),
              "mode": mode}
    for name, (kind, low, high) in LIMITS.items():
        value = data.get(name, {"temperature": 1.0, "top_k": 0, "seed": 0, "max_new": 12}[name])
        if type(value) not in (kind, int) or isinstance(value, bool) or not low <= value <= high:
            raise RequestError("bad_value", field=name, value=str(value)[:20], low=low, high=high)
        fields[name] = repr(kind(value))
    return "run\t" + "\t".join("%s=%s" % kv for kv in fields.items())


class ModelProcess:
    """The program, started with pipes: one request line in, one JSON line out."""

    def __init__(self, command, cwd=ROOT):
        self.proc = subprocess.Popen(command, cwd=cwd, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     start_new_session=True)
        self.err = []
        threading.Thread(target=self._drain, daemon=True).start()
        self.buffer = b""

    def _drain(self):
        for line in self.proc.stderr:
            self.err = (self.err + [line.decode("utf-8", "replace").rstrip()])[-20:]

    def read_line(self, seconds):
        """The next line the program writes, as JSON; None on a timeout, an
        exit or an answer that is not JSON."""
        deadline = time.time() + seconds
        while b"\n" not in self.buffer:
            left = deadline - time.time()
            if left <= 0 or len(self.buffer) > MAX_BYTES:
                return None
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            if not ready:
                return None
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                return None
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        try:
            answer = json.loads(line.decode("utf-8"))
        except ValueError:
            return None
        return answer if isinstance(answer, dict) else None

    def ask(self, line, seconds=ANSWER_SECONDS):
        try:
            self.proc.stdin.write(line.encode("utf-8") + b"\n")
            self.proc.stdin.flush()
        except OSError:
            return None
        return self.read_line(seconds)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


class Playground:
    """What the page is told (status()) and what it asks (run()).

    command: the program to start (a test's), instead of building TARGET;
    solutions: build it with --config=solutions (the instructors' repository)."""

    def __init__(self, root=ROOT, solutions=False, command=None, checkpoint=None):
        self.root, self.solutions, self.command = root, solutions, command
        self.checkpoint = checkpoint or os.path.join(root, CHECKPOINT)
        self.lock = threading.Lock()
        self.state = {"state": "idle"}
        self.process = None
        self.loaded = None   # the checkpoint's modification time when loaded

    # -------------------------------------------------------------- the start
    def start(self):
        """Checks, builds and starts, in a thread: the page polls status().
        The first status() calls it: nothing is built until the page is open."""
        self.state = {"state": "starting"}
        threading.Thread(target=self._start, daemon=True).start()

    def _start(self):
        # The checks and the build run without the lock: status() answers
        # "building" meanwhile.
        state = self._prepare()
        with self.lock:
            self.state = self._launch() if state["state"] == "ready" else state

    def _prepare(self):
        if self.command is None:
            lab = lab_of(self.root)
            if lab is None:
                return {"state": "no_lab"}
            if not self.solutions and not files.is_started(lab):
                return {"state": "not_started", "file": lab.learner_file, "command": WATCH}
            run = files.load_json(os.path.join(self.root, ".cache", "last_run.json"))
            last = (run.get("labs") or {}).get(str(lab.number)) if isinstance(run, dict) else None
            if not self.solutions and isinstance(last, dict) and last.get("state") == "failing":
                return {"state": "failing", "detail": last.get("detail") or "",
                        "command": WATCH}
            self.state = {"state": "building", "command": "bazel build " + TARGET}
            built = self._build(lab)
            if isinstance(built, dict):
                return built
            self.command = [built]
        if not os.path.isfile(self.checkpoint):
            return {"state": "no_checkpoint", "file": os.path.relpath(self.checkpoint, self.root),
                    "command": TRAIN}
        return {"state": "ready"}

    def _build(self, lab):
        """The built program's path, or the state that says why there is none."""
        # solutions: ./lab read --solutions.
        flags = ["--config=solutions"] if self.solutions else []  # instructors' repository only
        with Bazel() as bz:
            rc, out = bz.run(["build", "--color=no", "--curses=no"] + flags + [TARGET])
            if rc != 0:
                err = messages.first_error(out, lab.learner_file) or \
                    (out.strip().splitlines() or ["bazel build failed"])[-1]
                return {"state": "build_failed", "detail": err, "command": WATCH}
            brc, bin_dir = bz.run(["info", "--color=no"] + flags + ["bazel-bin"], stdout_only=True)
        path = os.path.join(bin_dir.strip().splitlines()[-1] if brc == 0 and bin_dir.strip()
                            else os.path.join(self.root, "bazel-bin"),
                            "labs", LAB_DIR, "playground")
        if not os.path.isfile(path):
            return {"state": "build_failed", "detail": "%s was not built" % path,
                    "command": WATCH}
        return os.path.realpath(path)

    def _launch(self):
        if self.process is not None:
            self.process.stop()
        try:
            self.loaded = os.path.getmtime(self.checkpoint)
            self.process = ModelProcess(self.command + ["--checkpoint", self.checkpoint],
                                        self.root)
        except OSError as e:
            return {"state": "crashed", "detail": str(e), "command": WATCH}
        hello = self.process.read_line(START_SECONDS)
        if hello is None or "error" in hello or not isinstance(hello.get("vocab"), list):
            detail = (hello or {}).get("detail") or " ".join(self.process.err[-3:])
            self.process.stop()
            self.process = None
            return {"state": "bad_checkpoint" if hello else "crashed", "detail": detail,
                    "file": os.path.relpath(self.checkpoint, self.root),
                    "command": TRAIN if hello else WATCH}
        return dict(hello, state="ready", file=os.path.relpath(self.checkpoint, self.root))

    # ---------------------------------------------------------------- the page
    def status(self):
        with self.lock:
            if self.state["state"] == "idle":
                self.start()
            self._reload_if_saved_again()
            return dict(self.state)

    def _reload_if_saved_again(self):
        if self.state.get("state") not in ("ready", "no_checkpoint", "bad_checkpoint"):
            return
        try:
            mtime = os.path.getmtime(self.checkpoint)
        except OSError:
            return
        if mtime != self.loaded and self.command is not None:
            self.state = self._launch()

    def run(self, data):
        """(HTTP status, answer) of a run request."""
        with self.lock:
            self._reload_if_saved_again()
            if self.state.get("state") != "ready":
                return 409, {"error": "not_ready", "state": self.state.get("state")}
            try:
                line = parse_request(data, self.state)
            except RequestError as e:
                return 400, e.answer
            answer = self.process.ask(line)
            if answer is None:
                detail = " ".join(self.process.err[-3:])
                self.state = self._launch()   # a fresh process for the next request
                return 500, {"error": "crashed", "detail": detail}
            return (400 if "error" in answer else 200), answer

    def stop(self):
        with self.lock:
            if self.process is not None:
                self.process.stop()
                self.process = None


def failure_text(detail, root=ROOT):
    """A failure ./lab recorded, in the current language (as ./lab printed it)."""
    return i18n.test_text(detail, root) if detail else ""
