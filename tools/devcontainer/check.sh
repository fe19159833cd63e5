#!/usr/bin/env bash
# Builds the dev container and works in it as a learner, with nothing pulled
# from a container registry:
#
#   1. a debian:bookworm base made here, by Debian's debootstrap into a
#      directory, then `podman import`ed under that name;
#   2. the image, from .devcontainer/Dockerfile (which runs tools/setup.sh);
#   3. in a container of it: export the learner kit, run lab 1's public tests
#      (they must fail, saying "not implemented"), then the kit's ./lab status
#      and ./lab grade.
#
# It prints the time of each step and the image's size. Needs root, podman and
# debootstrap (apt-get install podman runc debootstrap); the Debian archive is the
# only network it uses. Not part of ./lab test (it takes several minutes and
# downloads the packages twice); ./lab test checks the Dockerfile's package
# list instead. Usage: tools/devcontainer/check.sh [WORK_DIR]
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=${1:-/var/tmp/mha-devcontainer-check}
mirror=${MHA_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# cgroupfs and a file event log: no systemd needed. runc where it exists:
# crun refuses a host with cgroup v1 controllers mounted ("hybrid mode").
podman=(podman --cgroup-manager=cgroupfs --events-backend=file)
if command -v runc >/dev/null 2>&1; then podman+=(--runtime "$(command -v runc)"); fi

for tool in podman debootstrap git; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "check: $tool is missing: apt-get install -y podman runc debootstrap git" >&2
    exit 1
  fi
done
if [[ $(id -u) -ne 0 ]]; then
  echo "check: run as root (debootstrap and podman import need it)" >&2
  exit 1
fi

step() {  # step NAME COMMAND...: runs it, prints its wall time
  local name=$1 t0 t1
  shift
  echo "== $name"
  t0=$(date +%s.%N)
  "$@"
  t1=$(date +%s.%N)
  timings+=("$(printf '%-46s %7.1f s' "$name" "$(awk "BEGIN{print $t1 - $t0}")")")
}
timings=()
mkdir -p "$work"

base() {
  if [[ ! -x "$work/rootfs/usr/bin/apt-get" ]]; then
    rm -rf "$work/rootfs"
    debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 ||
      { tail -n 20 "$work/debootstrap.log" >&2; exit 1; }
  fi
  tar -C "$work/rootfs" -c . | "${podman[@]}" import - debian:bookworm >/dev/null
}

source_tree() {  # the committed tree, as a clean clone would have it
  rm -rf "$work/src"
  mkdir -p "$work/src"
  git -C "$repo" archive HEAD | tar -x -C "$work/src"
}

image() {
  "${podman[@]}" build --pull=never --network=host -t mha-labs \
    -f "$work/src/.devcontainer/Dockerfile" "$work/src"
}

# What a learner does in the container: the kit, one lab's tests, status, grade.
learner() {
  # Limits at or below this shell's: a host without CAP_SYS_RESOURCE (as
  # here) refuses podman's defaults, and runc refused nproc above 32768 here.
  local limits=() n
  n=$(ulimit -n); [[ $n =~ ^[0-9]+$ ]] && limits+=(--ulimit "nofile=$n:$n")
  n=$(ulimit -u); [[ $n =~ ^[0-9]+$ ]] || n=65536
  n=$(( n / 2 < 32768 ? n / 2 : 32768 )); limits+=(--ulimit "nproc=$n:$n")
  "${podman[@]}" run --rm --network=none "${limits[@]}" \
    -v "$work/src:/src:ro" mha-labs bash -c '
    set -u
    cp -a /src /tmp/repo && cd /tmp/repo
    git init -q && git add -A && git -c user.name=c -c user.email=c@c commit -qm tree
    ./lab export-kit /workspaces/kit >/dev/null || exit 1
    cd /workspaces/kit
    echo "-- bazel test //labs/01_split_heads/... (a stub: must fail)"
    if bazel test //labs/01_split_heads/... >/tmp/t.log 2>&1; then
      echo "check: the stub passed its tests" >&2; exit 1
    fi
    grep -m1 "not implemented yet" /tmp/t.log || { tail -n 30 /tmp/t.log; exit 1; }
    echo "-- ./lab status"
    ./lab status || exit 1
    echo "-- ./lab grade"
    ./lab grade; echo "(./lab grade exit status $?: the stubs fail, as they should)"
    bazel shutdown >/dev/null 2>&1
  '
}

step "debootstrap bookworm, podman import" base
step "source tree (git archive HEAD)" source_tree
step "podman build (runs tools/setup.sh)" image
step "in the container: kit, tests, status, grade" learner

size=$("${podman[@]}" image inspect mha-labs --format '{{.Size}}')
echo
printf '%s\n' "${timings[@]}"
printf '%-46s %7.0f MiB\n' "image size (mha-labs)" "$(awk "BEGIN{print $size / 1048576}")"
