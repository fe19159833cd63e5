# Shared checks of a lab program's command line, for the labs' *_flags_test.sh:
#
#   source "$2"                         # this file, passed as the test's 2nd argument
#   program="$1" name=configure status=2  # status: the exit status of a bad flag
#   expect_error "--d_model abc: expected" --d_model abc
#   expect_output "Recommended: MQA" --d_model 8192 ...
#   expect_help "--memory_gb"
#   exit $fail
#
# Each check prints "ok: ..." or "FAIL: ..." and a failure sets fail=1.
fail=0

# A bad flag: exit status $status and a message on stderr that names `want`.
expect_error() {  # expect_error "text in the message" flags...
  local want="$1"; shift
  local err rc
  err=$("$program" "$@" 2>&1 >/dev/null); rc=$?
  if [[ $rc -ne $status ]]; then
    echo "FAIL: $name $* exited $rc, expected $status and a message naming \"$want\""; fail=1
  elif [[ "$err" != *"$want"* ]]; then
    echo "FAIL: $name $* said \"$err\", expected it to name \"$want\""; fail=1
  else
    echo "ok: $name $* -> exit $rc, \"${err%%$'\n'*}\""
  fi
}

# Good flags: exit status 0 and every `want` (one per argument before --) in stdout.
expect_output() {  # expect_output "text" ["text"...] -- flags...
  local wants=()
  while [[ "$1" != "--" ]]; do wants+=("$1"); shift; done
  shift
  local out rc
  out=$("$program" "$@"); rc=$?
  for want in "${wants[@]}"; do
    if [[ $rc -ne 0 || "$out" != *"$want"* ]]; then
      echo "FAIL: $name $* gave exit $rc, expected 0 and \"$want\" in:"; echo "$out"; fail=1
      return
    fi
  done
  echo "ok: $name $* prints ${wants[*]}"
}

# --help: exit status 0 and `want` (a flag's name) in the usage.
expect_help() {  # expect_help --flag
  if ! "$program" --help | grep -q -- "$1"; then
    echo "FAIL: $name --help does not list $1"; fail=1
  else
    echo "ok: $name --help lists $1"
  fi
}
