#!/usr/bin/env bash
# The configure program on the command line: a bad flag is named on stderr
# with exit status 2; good flags print the table and exit 0.
# Usage (from Bazel): configure_flags_test.sh PATH_TO_CONFIGURE PATH_TO_common/flag_test_lib.sh
set -u
source "$2"
program="$1" name=configure status=2

expect_error "--d_model=abc" --d_model abc --n_layers 80 --context 131072 --memory_gb 40
expect_error "--dtype=int8" --d_model 8192 --n_layers 80 --context 131072 --memory_gb 40 --dtype int8
expect_error "--n_heads=60" --d_model 8192 --n_heads 60 --n_layers 80 --context 131072 --memory_gb 40
expect_error "--memory_gb is required" --d_model 8192 --n_layers 80 --context 131072
expect_error "unknown flag --layers" --d_model 8192 --layers 80 --context 131072 --memory_gb 40
expect_output "Recommended: MQA" "GQA-8" -- \
  --d_model 8192 --n_layers 80 --context 131072 --batch 8 --memory_gb 40
expect_help "--memory_gb"
exit $fail
