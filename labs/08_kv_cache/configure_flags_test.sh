#!/usr/bin/env bash
# The configure program on the command line: a bad flag is named on stderr
# with a non-zero exit; good flags print the table and exit 0.
# Usage (from Bazel): configure_flags_test.sh PATH_TO_CONFIGURE
set -u
configure="$1"
fail=0

expect_error() {  # expect_error "text in the message" flags...
  local want="$1"; shift
  local err rc
  err=$("$configure" "$@" 2>&1 >/dev/null); rc=$?
  if [[ $rc -eq 0 ]]; then
    echo "FAIL: configure $* exited 0, expected an error naming \"$want\""; fail=1
  elif [[ "$err" != *"$want"* ]]; then
    echo "FAIL: configure $* said \"$err\", expected it to name \"$want\""; fail=1
  else
    echo "ok: configure $* -> exit $rc, \"${err%%$'\n'*}\""
  fi
}

expect_error "--d_model=abc" --d_model abc --n_layers 80 --context 131072 --memory_gb 40
expect_error "--dtype=int8" --d_model 8192 --n_layers 80 --context 131072 --memory_gb 40 --dtype int8
expect_error "--n_heads=60" --d_model 8192 --n_heads 60 --n_layers 80 --context 131072 --memory_gb 40
expect_error "--memory_gb is required" --d_model 8192 --n_layers 80 --context 131072
expect_error "unknown flag --layers" --d_model 8192 --layers 80 --context 131072 --memory_gb 40

out=$("$configure" --d_model 8192 --n_layers 80 --context 131072 --batch 8 --memory_gb 40); rc=$?
if [[ $rc -ne 0 || "$out" != *"Recommended: MQA"* || "$out" != *"GQA-8"* ]]; then
  echo "FAIL: good flags gave exit $rc and:"; echo "$out"; fail=1
else
  echo "ok: good flags print the table and a recommendation"
fi
if ! "$configure" --help | grep -q -- "--memory_gb"; then
  echo "FAIL: --help does not list the flags"; fail=1
fi
exit $fail
