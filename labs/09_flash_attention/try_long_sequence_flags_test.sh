#!/usr/bin/env bash
# try_long_sequence on the command line: a bad flag is named on stderr with
# exit status 1, before any attention runs; --help lists the flags.
# Usage (from Bazel): try_long_sequence_flags_test.sh PATH_TO_PROGRAM PATH_TO_common/flag_test_lib.sh
set -u
source "$2"
program="$1" name=try_long_sequence status=1

expect_error "--block_q 0: expected" --block_q 0
expect_error "--block_k abc: expected" --block_k abc
expect_error "--only both: expected tiled or causal" --only both
expect_error "unknown flag --blocks" --blocks 64
expect_help "--block_k"
exit $fail
