#!/bin/bash
# Checks the rule at the top of common/core/vector_math_kernels.inc on the
# compiled objects: the per-instruction-set objects (AVX2, AVX-512) define
# one external symbol each, their table getter, and no weak function (an
# inline or template function the linker could share with code that runs on
# a CPU without that instruction set).
#
#   $1: `nm -A --defined-only` of the objects' archives (a genrule in
#       common/core/BUILD writes it when they are built)
set -euo pipefail

listing="$1"
objects=$(awk -F: '{print $2}' "$listing" | sort -u | grep -c . || true)
if [[ "$objects" -lt 2 ]]; then
  echo "FAIL: expected the symbols of 2 objects (AVX2, AVX-512) in $listing, found $objects"
  exit 1
fi
# "archive:object:address type name". Lower-case types are local symbols,
# invisible to other objects. DW.ref.__gxx_personality_v0 is the pointer to
# C++'s exception-handling routine, data every C++ object shares harmlessly.
# LC_ALL=C: [A-Z] is the ASCII capitals whatever the test's locale.
shared=$(LC_ALL=C awk '$2 ~ /^[A-Zu]$/ && $3 != "DW.ref.__gxx_personality_v0" {print $1, $2, $3}' "$listing")
echo "external and weak symbols of the per-instruction-set objects:"
echo "$shared"
extra=$(echo "$shared" |
        grep -v -E ' T _ZN3mha18vector_math_detail[0-9]+(avx2|avx512)_kernelsEv$' || true)
if [[ -n "$extra" ]]; then
  echo "FAIL: these could be bound to by code that runs on another instruction set:"
  echo "$extra" | c++filt
  exit 1
fi
echo "ok: each object exports only its table getter"
