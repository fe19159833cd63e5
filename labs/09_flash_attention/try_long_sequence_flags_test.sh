#!/usr/bin/env bash
# try_long_sequence on the command line: a bad flag is named on stderr with
# exit status 1, before any attention runs; --help lists the flags.
# Usage (from Bazel): try_long_sequence_flags_test.sh PATH_TO_PROGRAM
set -u
program="$1"
fail=0

expect_error() {  # expect_error "text in the message" flags...
  local want="$1"; shift
  local err rc
  err=$("$program" "$@" 2>&1 >/dev/null); rc=$?
  if [[ $rc -ne 1 ]]; then
    echo "FAIL: try_long_sequence $* exited $rc, expected 1 and a message naming \"$want\""
    fail=1
  elif [[ "$err" != *"$want"* ]]; then
    echo "FAIL: try_long_sequence $* said \"$err\", expected it to name \"$want\""; fail=1
  else
    echo "ok: try_long_sequence $* -> exit 1, \"${err%%$'\n'*}\""
  fi
}

expect_error "--block_q 0: expected" --block_q 0
expect_error "--block_k abc: expected" --block_k abc
expect_error "--only both: expected tiled or causal" --only both
expect_error "unknown flag --blocks" --blocks 64

if ! "$program" --help | grep -q -- "--block_k"; then
  echo "FAIL: --help does not list the flags"; fail=1
fi
exit $fail
