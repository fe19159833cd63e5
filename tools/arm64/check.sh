#!/usr/bin/env bash
# Does everything a learner builds compile, and pass, on arm64 (Apple silicon
# in a container, Graviton, a Raspberry Pi 5)? From an x86-64 Debian machine:
#
#   1. exports the learner kit and compiles every C++ file in it, plus the
#      reference solutions (what a finished lab looks like), with Debian's
#      aarch64 cross compiler;
#   2. with --run, links the public tests of labs 1-3 against the reference
#      solutions, and common/rng_test (NumpyRng against NumPy's draws), and
#      runs them under qemu-user-static.
#
# Set-up (root): dpkg --add-architecture arm64 && apt-get update &&
#   apt-get install g++-aarch64-linux-gnu qemu-user-static \
#     libgtest-dev:arm64 libbenchmark-dev:arm64 libopenblas-dev:arm64
# (xtensor, xtl, xsimd and xtensor-blas are headers for every architecture.)
# Usage: tools/arm64/check.sh [--run] [WORK_DIR]
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
run=0
if [[ "${1:-}" == "--run" ]]; then run=1; shift; fi
work=${1:-/var/tmp/mha-arm64-check}
cxx=aarch64-linux-gnu-g++
flags=(-std=c++17 -O1 -Wall -pthread)

tools=("$cxx")
[[ "$run" -eq 1 ]] && tools+=(qemu-aarch64-static)
for tool in "${tools[@]}"; do
  command -v "$tool" >/dev/null || { echo "arm64: $tool is missing (see the set-up above)" >&2; exit 1; }
done
[[ -d /usr/lib/aarch64-linux-gnu ]] || { echo "arm64: no arm64 libraries (see the set-up above)" >&2; exit 1; }

rm -rf "$work" && mkdir -p "$work/obj"
"$repo/lab" export-kit "$work/kit" >/dev/null
cp -r "$repo/solutions" "$work/kit/solutions"   # compiled, never shipped
cd "$work/kit"

# 1. compile every C++ file (each in its own process, two at a time).
find . -name '*.cc' | sort > "$work/files.txt"
compile_one() {  # $1: a .cc file of the kit; writes obj/<path>.o or a .err
  local out="$2/obj/${1#./}.o"
  mkdir -p "$(dirname "$out")"
  # A remote interface is compiled twice by Bazel (common/lab.bzl): as the
  # client and as the server.
  # The one file whose BUILD flags change its numbers: NumpyRng must not fuse
  # multiply-adds (aarch64 would by default), to match NumPy bit for bit.
  local extra=()
  [[ "$1" == ./common/rng.cc ]] && extra=(-ffp-contract=off)
  local sides=("")
  if grep -q "MHA_REMOTE_\(FUNCTION\|CONSTRUCTOR\|METHOD\|CONST_METHOD\)(" "$1"; then
    sides=(-DMHA_REMOTE_CLIENT -DMHA_REMOTE_SERVER)
  fi
  for side in "${sides[@]}"; do
    if ! "$3" "${@:4}" "${extra[@]}" $side -I. -c "$1" -o "$out${side:+.${side#-DMHA_REMOTE_}}" 2>"$out.err"; then
      echo "FAILED $1 $side"
      return
    fi
  done
  rm -f "$out.err"
}
export -f compile_one
t0=$(date +%s)
xargs -P 2 -I{} bash -c 'compile_one "$@"' _ {} "$work" "$cxx" "${flags[@]}" \
  < "$work/files.txt" > "$work/compile.txt"
total=$(wc -l < "$work/files.txt")
failed=$(grep -c '^FAILED' "$work/compile.txt" || true)
echo "arm64: compiled $((total - failed)) / $total C++ files of the kit and the solutions" \
     "for aarch64 in $(( $(date +%s) - t0 )) s"
if [[ "$failed" -ne 0 ]]; then
  cat "$work/compile.txt"
  for e in $(find "$work/obj" -name '*.err'); do echo "== $e"; head -n 20 "$e"; done
  exit 1
fi
file "$work/obj/labs/01_split_heads/split_heads_public_test.cc.o" | sed 's|^.*: |arm64: a sample object: |'

[[ "$run" -eq 1 ]] || exit 0

# 2. labs 1-3: public tests, reference solutions, run under qemu.
o="$work/obj"
common_objs=("$o/common/testing/testing.cc.o" "$o/common/testing/misconception.cc.o" "$o/common/rng.cc.o"
             "$o/common/core/vector_math.cc.o"
             "$o/common/core/vector_math_baseline.cc.o")
declare -A target=([01_split_heads]=split_heads [02_batched_attention]=attention
                   [03_output_projection]=multi_head_attention)
solutions=()
status=0
for lab in 01_split_heads 02_batched_attention 03_output_projection; do
  t=${target[$lab]}
  solutions+=("$o/solutions/$lab/$t.cc.o")
  bin="$work/${t}_public_test"
  "$cxx" -pthread -o "$bin" "$o/labs/$lab/${t}_public_test.cc.o" "${solutions[@]}" \
    "${common_objs[@]}" -lgtest_main -lgtest -lopenblas -lpthread
  echo "== $lab: $(file -b "$bin" | cut -d, -f1,2) under qemu-aarch64-static"
  # One OpenBLAS thread: its worker threads spin for minutes under qemu-user.
  if ! OPENBLAS_NUM_THREADS=1 timeout 600 qemu-aarch64-static -L /usr/aarch64-linux-gnu "$bin" \
      --gtest_brief=1 > "$work/$t.log" 2>&1; then
    status=1
  fi
  tail -n 3 "$work/$t.log"
done
# NumpyRng's draws bit for bit against NumPy's (every seeded weight rests on them).
"$cxx" -pthread -o "$work/rng_test" "$o/common/rng_test.cc.o" "$o/common/rng.cc.o" \
  -lgtest_main -lgtest -lpthread
echo "== common/rng_test under qemu-aarch64-static"
qemu-aarch64-static -L /usr/aarch64-linux-gnu "$work/rng_test" --gtest_brief=1 \
  > "$work/rng_test.log" 2>&1 || status=1
tail -n 2 "$work/rng_test.log"
exit $status
