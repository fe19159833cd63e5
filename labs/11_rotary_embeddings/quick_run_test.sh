#!/bin/bash
# Runs score_by_distance in its small configuration (--quick), as part of
# `bazel test //labs/11_rotary_embeddings/...`, and checks what it wrote:
#
#   quick_run_test.sh PROGRAM
#
# The program must exit 0 and write score_by_distance.png (a PNG) and
# score_by_distance.csv under --out; run twice, it must write the same CSV
# byte for byte. It uses your lab 11: while apply_rope is a stub, this fails
# with its "not implemented yet" message.
set -u
program="$1"
out="${TEST_TMPDIR:-$(mktemp -d)}"

for run in 1 2; do
  if ! "$program" --quick --out "$out/run$run"; then
    echo "FAILED: $(basename "$program") --quick exited with an error (above)" >&2
    exit 1
  fi
done
png="$out/run1/score_by_distance.png"
if [ "$(head -c 8 "$png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" != "89504e470d0a1a0a" ]; then
  echo "FAILED: $png is missing or not a PNG" >&2
  exit 1
fi
if ! cmp -s "$out/run1/score_by_distance.csv" "$out/run2/score_by_distance.csv"; then
  echo "FAILED: two runs wrote different score_by_distance.csv: the run is not deterministic" >&2
  exit 1
fi
echo "PASSED: $(basename "$program") --quick wrote the PNG and the CSV, the same numbers twice"
