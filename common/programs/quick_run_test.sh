#!/bin/bash
# Runs one of a lab's programs in its small configuration (--quick), as part
# of that lab's `bazel test //labs/NN_name/...`, and checks what it wrote:
#
#   quick_run_test.sh PROGRAM IMAGE CSV [FLAGS...]
#
# The program must exit 0 and write IMAGE (a PNG) and CSV under --out; run
# twice, it must write the same CSV byte for byte (a run is deterministic).
# A program runs your labs (the lab's BUILD says which): while one of them is
# a stub, this fails with its "not implemented yet" message. Labs 10-13 use it.
set -u
program="$1" image="$2" csv="$3"
shift 3
out="${TEST_TMPDIR:-$(mktemp -d)}"

for run in 1 2; do
  if ! "$program" --quick --out "$out/run$run" "$@"; then
    echo "FAILED: $(basename "$program") --quick $* exited with an error (above)" >&2
    exit 1
  fi
done
png="$out/run1/$image"
if [ "$(head -c 8 "$png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" != "89504e470d0a1a0a" ]; then
  echo "FAILED: $png is missing or not a PNG" >&2
  exit 1
fi
if ! cmp -s "$out/run1/$csv" "$out/run2/$csv"; then
  echo "FAILED: two runs with the same flags wrote different $csv: the run is not deterministic" >&2
  exit 1
fi
echo "PASSED: $(basename "$program") --quick $* wrote $image and $csv, the same numbers twice"
