#!/bin/bash
# Runs one of a lab's programs in its small configuration (--quick) and checks
# what it wrote. The test is tagged "program" (common/lab.bzl): ./lab status,
# ./lab grade and ./lab watch's second step run it, a plain
# `bazel test //labs/NN_name/...` leaves it out (.bazelrc):
#
#   quick_run_test.sh PROGRAM CHART CSV [FLAGS...]
#
# The program must exit 0 and write CHART (the JSON spec that
# tools/plot/draw_chart.py draws as a PNG: an object with a "kind" and a
# "title") and CSV under --out; run twice, it must write the same CSV and the
# same chart byte for byte (a run is deterministic). Drawing the PNG from the
# chart is tools/plot/draw_chart.py's work, tested by its own pytest.
# A program runs your labs (the lab's BUILD says which): while one of them is
# a stub, this fails with its "not implemented yet" message. Labs 10-13 use it.
set -u
program="$1" chart="$2" csv="$3"
shift 3
out="${TEST_TMPDIR:-$(mktemp -d)}"

for run in 1 2; do
  if ! "$program" --quick --out "$out/run$run" "$@"; then
    echo "FAILED: $(basename "$program") --quick $* exited with an error (above)" >&2
    exit 1
  fi
done
spec="$out/run1/$chart"
# LC_ALL=C: [a-z] is the ASCII letters whatever the test's locale (a Turkish
# one orders "ı" among them).
if [ "$(head -c 1 "$spec" 2>/dev/null)" != "{" ] ||
   ! LC_ALL=C grep -q '"kind":"[a-z]*"' "$spec" || ! grep -q '"title":"' "$spec"; then
  echo "FAILED: $spec is missing or not a chart spec (a JSON object with a kind and a title)" >&2
  exit 1
fi
for file in "$csv" "$chart"; do
  if ! cmp -s "$out/run1/$file" "$out/run2/$file"; then
    echo "FAILED: two runs with the same flags wrote different $file: the run is not deterministic" >&2
    exit 1
  fi
done
echo "PASSED: $(basename "$program") --quick $* wrote $chart and $csv, the same numbers twice"
