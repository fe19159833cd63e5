"""A stand-in for lab 15's playground program in the reader's unit tests
(test_playground.py): the same protocol (labs/15_mini_gpt/playground.cc) with
made-up numbers, so that the server, the checks of a request and the process
handling are tested without building lab 15. The real program is tested by
its own cc_test and by ./lab test's browser check.

    fake_playground.py [--crash-on WORD] --checkpoint FILE

FILE holds "ok" (ready), anything else (refused, as a checkpoint of another
size). A request whose tokens hold WORD makes it exit, as a crash would.
"""
import json
import sys

VOCAB = ("<bos> <eos> , / I you he she yo tú él ella will s ed o as a é aste ó aré arás ará "
         "work trabaj walk camin talk habl listen escuch look mir help ayud call llam jump salt "
         "paint pint clean limpi cook cocin buy bought compr sing sang cant go goes went voy vas "
         "va fui fuiste fue iré irás irá").split()


def main(argv):
    crash = argv[argv.index("--crash-on") + 1] if "--crash-on" in argv else None
    with open(argv[argv.index("--checkpoint") + 1]) as f:
        if f.read().strip() != "ok":
            print(json.dumps({"error": "checkpoint", "detail": "config is vocab 50, expected 64"}),
                  flush=True)
            return 1
    print(json.dumps({"vocab": VOCAB, "params": 103680, "seed": 0, "file": "fake",
                      "config": {"vocab": 64, "max_len": 32, "d_model": 64, "n_heads": 4,
                                 "n_layers": 2},
                      "examples": [{"prompt": "<bos> I walk , you walk , he walk".split(),
                                    "answer": "s", "category": "english_agreement"}]}),
          flush=True)
    for line in sys.stdin:
        op, *fields = line.rstrip("\n").split("\t")
        f = dict(x.split("=", 1) for x in fields)
        tokens = f["tokens"].split()
        if crash and crash in tokens:
            return 3
        off = [tuple(map(int, p.split("."))) for p in f["off"].split(",") if p]
        p_s = 0.05 if (1, 2) in off else 0.9
        last = [(1 - p_s) / 63] * 64
        last[VOCAB.index("s")] = p_s
        n = len(tokens)
        weights = [[[[1.0 / (i + 1) if j <= i else 0.0 for j in range(n)] for i in range(n)]
                    for _h in range(4)] for _b in range(2)]
        print(json.dumps({"tokens": tokens, "seed": int(f["seed"]), "last": last,
                          "positions": [{"top": [["s", p_s], [",", 0.01]]} for _ in tokens],
                          "attention": weights,
                          "labels": [["previous-token", "local", "diffuse", "self"]] * 2,
                          "continuation": ["s", ","] if f["mode"] == "greedy" else [","]}),
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
