#!/usr/bin/env bash
# Installs the Debian packages the suite needs, only those that are missing.
#
#   tools/setup.sh            build, test and grade (Bazel, compilers' libraries),
#                             inotify-tools for ./lab watch, similarity-tester
#                             (sim_c++) for the class report of a roster,
#                             python3-pytest and git for ./lab test (mutants are
#                             applied with git apply; export-kit reads committed stubs)
#   tools/setup.sh --dev      also what regenerates goldens and draws images
#                             (Debian's python3-numpy, python3-torch and
#                             python3-matplotlib), and chromium, in which a
#                             test opens the class report
#
# Idempotent: when everything is present it prints nothing and exits 0.
set -euo pipefail

packages=(
  bazel-bootstrap bazel-rules-cc bazel-rules-java bazel-platforms bazel-skylib
  g++ python3
  libgtest-dev libgmock-dev libbenchmark-dev
  libxtensor-dev xtl-dev libxsimd-dev libxtensor-blas-dev libopenblas-dev
  libpng-dev
  util-linux coreutils
  inotify-tools
  similarity-tester python3-pytest git
)
if [[ "${1:-}" == "--dev" ]]; then
  packages+=(python3-numpy python3-torch python3-matplotlib chromium)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0   # everything is installed: say nothing
fi

echo "setup: installing ${missing[*]}"
if ! command -v apt-get >/dev/null 2>&1; then
  echo "setup: error: apt-get not found. This suite needs a Debian 12 (bookworm) machine;" >&2
  echo "setup: install these packages by hand: ${missing[*]}" >&2
  exit 1
fi
sudo=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo=(sudo -n)
  else
    echo "setup: error: installing packages needs root, and you are $(id -un) without passwordless sudo." >&2
    echo "setup: ask an administrator to run: apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
if ! "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >/tmp/mha-setup.log 2>&1; then
  # A fresh machine may have no package lists yet.
  "${sudo[@]}" apt-get update -q >>/tmp/mha-setup.log 2>&1 || true
  if ! "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >>/tmp/mha-setup.log 2>&1; then
    echo "setup: error: apt-get could not install: ${missing[*]}" >&2
    tail -n 20 /tmp/mha-setup.log >&2
    exit 1
  fi
fi
echo "setup: installed ${#missing[@]} package(s)"
