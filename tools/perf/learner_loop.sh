#!/usr/bin/env bash
# The learner loop: a one-line edit to a lab file, then `bazel test` of that
# lab, against a bare g++ compile of the same file with the same flags.
#
#   tools/perf/learner_loop.sh [LAB_DIR=01_split_heads] [REPS=7]
#
# Works on a copy of the repository (under $TMPDIR, default /tmp) with its own
# Bazel output base, so it never disturbs the checkout or its Bazel server.
# The learner files of this lab and the earlier ones are replaced by the
# reference solutions (a learner who has written them), a warm-up build runs, then REPS times, alternating:
#   edit the file (one line changes)  +  bazel test //labs/LAB_DIR/...
#   edit the file (one line changes)  +  g++ <Bazel's compile flags> -c FILE
# and prints the medians and their ratio (the goal is <= 1.2x). `bazel test`
# runs what a learner's save runs: the unit tests (.bazelrc leaves the lab
# programs' quick runs, tagged "program", to ./lab status and grade). Set
# KEEP_COPY=1 to keep the copy and its output base afterwards, and
# LOOP_TEST_FLAGS to add flags to each `bazel test` (LOOP_TEST_FLAGS="--test_tag_filters=
# --nobuild_tests_only" measures the loop as it was when every save also ran
# the lab programs' quick runs).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
lab="${1:-01_split_heads}"
reps="${2:-7}"
tmp="${TMPDIR:-/tmp}"
copy="$tmp/mha_learner_loop_copy"
ob="$tmp/mha_learner_loop_output_base"

# The lab's target comes from the registry (lab BUILD files name no library:
# lab_library() reads it from labs/labs.json).
lib=$(/usr/bin/python3 -c '
import json, sys
labs = json.load(open(sys.argv[1]))["labs"]
print(next((l["target"] for l in labs if l["dir"] == sys.argv[2]), ""))' \
  "$here/labs/labs.json" "$lab")
[[ -n "$lib" ]] || { echo "learner_loop.sh: $lab is not a lab of labs/labs.json" >&2; exit 2; }
file="labs/$lab/$lib.cc"
[[ -f "$here/solutions/$lab/$lib.cc" ]] || { echo "no solutions/$lab/$lib.cc" >&2; exit 1; }

rm -rf "$copy"
mkdir -p "$copy"
(cd "$here" && tar --exclude='./bazel-*' --exclude='./.cache' --exclude='./.git' \
   --exclude='./out' -cf - .) | (cd "$copy" && tar xf -)
# The learner has written this lab and the ones before it.
for d in "$copy"/solutions/*/; do
  d=$(basename "$d")
  [[ "$d" > "$lab" ]] && continue
  for f in "$copy/solutions/$d"/*.cc; do cp "$f" "$copy/labs/$d/"; done
done
cd "$copy"

# A short idle timeout: the server goes away by itself after the measurement.
bz() { bazel --output_base="$ob" --max_idle_secs=120 "$@"; }
read -r -a extra <<< "${LOOP_TEST_FLAGS:-}"
echo "learner loop: $file, bazel test //labs/$lab/... vs g++ -c, $reps repetitions"
echo "warm-up build (the first build of the day, not measured)..."
bz test "${extra[@]}" "//labs/$lab/..." >/dev/null 2>&1 || true
bz test "${extra[@]}" "//labs/$lab/..." >/dev/null 2>&1 || { echo "the lab's public tests fail on the solution" >&2; exit 1; }

# The compile flags Bazel uses for the learner's file, minus its dependency
# file and sandbox-only paths; the object goes to a scratch file.
flags=(-U_FORTIFY_SOURCE -fstack-protector -Wall -Wunused-but-set-parameter
       -Wno-free-nonheap-object -fno-omit-frame-pointer -std=c++17 -fPIC -iquote .
       -Wno-builtin-macro-redefined)

now() { date +%s.%N; }
# One new line of code, never seen before: it changes the object file (a
# comment would not, and Bazel would then neither relink nor rerun a test),
# and the shared disk cache cannot answer for it.
edit() { echo "int mha_learner_loop_edit_$1_$(date +%s%N)() { return 0; }" >> "$file"; }
bazel_s=(); gcc_s=()
for i in $(seq 1 "$reps"); do
  edit "b$i"
  t0=$(now); bz test "${extra[@]}" "//labs/$lab/..." >/dev/null 2>&1; t1=$(now)
  bazel_s+=("$(echo "$t1 - $t0" | bc -l)")
  edit "g$i"
  t0=$(now); g++ "${flags[@]}" -c "$file" -o "$tmp/mha_learner_loop.o"; t1=$(now)
  gcc_s+=("$(echo "$t1 - $t0" | bc -l)")
  printf "  rep %d: bazel test %.2f s, g++ -c %.2f s\n" "$i" "${bazel_s[-1]}" "${gcc_s[-1]}"
done
median() { printf "%s\n" "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
mb=$(median "${bazel_s[@]}"); mg=$(median "${gcc_s[@]}")
ratio=$(echo "$mb / $mg" | bc -l)
printf "median: bazel test %.2f s, g++ -c %.2f s, ratio %.2fx (goal <= 1.20x)\n" "$mb" "$mg" "$ratio"
bz shutdown >/dev/null 2>&1 || true
if [[ -z "${KEEP_COPY:-}" ]]; then rm -rf "$copy" "$tmp/mha_learner_loop.o"; fi
