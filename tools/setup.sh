#!/usr/bin/env bash
# Installs the Debian packages the suite needs, only those that are missing.
#
#   tools/setup.sh            build, test and grade (Bazel, compilers' libraries),
#                             inotify-tools for ./lab watch, similarity-tester
#                             (sim_c++) for the class report of a roster,
#                             python3-matplotlib, which draws every chart (the
#                             lab programs' through tools/plot/draw_chart.py,
#                             the benchmarks' and the class report's),
#                             python3-markdown and python3-pygments, with which
#                             ./lab read renders the lessons, fonts-noto-cjk,
#                             with which the reader and the charts show Chinese,
#                             python3-pytest and git for ./lab test (mutants are
#                             applied with git apply; export-kit reads committed stubs).
#                             The learner kit runs this same list.
#                             In the instructors' repository (not the kit) also
#                             po4a, gettext and python3-polib: ./lab translate
#                             and ./lab test's translations check, and export-kit
#                             compiles the terminal's catalogues (the kit ships the
#                             translated pages and compiled catalogues: a learner
#                             needs none of them).
#   tools/setup.sh --dev      also what regenerates goldens (Debian's python3-numpy
#                             and python3-torch), and chromium, in which a
#                             test opens the class report, with chromium-driver
#                             and python3-selenium, which drive it through the
#                             course reader (./lab test's reader check)
#   tools/setup.sh --slurm    also Slurm and munge (slurm-wlm, munge): grading a
#                             roster on a cluster (./lab grade --roster DIR --slurm;
#                             a login node needs slurm-client only) and the
#                             one-node test cluster of tools/slurm/cluster.sh
#   tools/setup.sh --test     what ./lab test needs besides: --slurm's packages and
#                             the browser of the reader check (chromium, its driver
#                             and python3-selenium)
#
# Idempotent: when everything is present it prints nothing and exits 0.
set -euo pipefail

packages=(
  bazel-bootstrap bazel-rules-cc bazel-rules-java bazel-platforms bazel-skylib
  g++ python3
  libgtest-dev libgmock-dev libbenchmark-dev
  libxtensor-dev xtl-dev libxsimd-dev libxtensor-blas-dev libopenblas-dev
  util-linux coreutils
  inotify-tools
  similarity-tester python3-pytest git
  python3-matplotlib
  python3-markdown python3-pygments
  fonts-noto-cjk
)
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ -d "$repo/solutions" && -d "$repo/tests" ]]; then
  packages+=(po4a gettext python3-polib)
fi
for flag in "$@"; do
  case $flag in
    --dev) packages+=(python3-numpy python3-torch chromium chromium-driver python3-selenium) ;;
    --slurm) packages+=(slurm-wlm munge) ;;
    --test) packages+=(slurm-wlm munge chromium chromium-driver python3-selenium) ;;
    *) echo "setup: unknown option $flag (expected --dev, --slurm or --test)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0   # everything is installed: say nothing
fi

container_help() {
  # The same advice wherever this machine cannot install the packages itself.
  echo "setup: or work in the dev container, which has everything installed:" >&2
  echo "setup:   with VS Code: install Docker (or Podman) and the Dev Containers extension, open" >&2
  echo "setup:   this folder and choose \"Reopen in Container\" (GitHub Codespaces works the same);" >&2
  echo "setup:   without VS Code, from this folder:" >&2
  echo "setup:     docker build -t mha-labs -f .devcontainer/Dockerfile ." >&2
  echo "setup:     docker run --rm -it -v \"\$PWD\":/workspaces/mha -w /workspaces/mha mha-labs" >&2
  echo "setup:   (README.md, \"On macOS, Windows, or Linux without root\")." >&2
}

if ! command -v apt-get >/dev/null 2>&1; then
  echo "setup: error: apt-get not found: this suite installs its tools from Debian 12 (bookworm)" >&2
  echo "setup: packages, and this machine is not Debian. Missing: ${missing[*]}" >&2
  container_help
  exit 1
fi
sudo=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo=(sudo -n)
  else
    echo "setup: error: installing packages needs root, and you are ${USER:-uid $(id -u)} without passwordless sudo." >&2
    echo "setup: nothing was installed. Ask an administrator to run exactly:" >&2
    echo "setup:   apt-get install -y --no-install-recommends ${missing[*]}" >&2
    container_help
    exit 1
  fi
fi
echo "setup: installing ${missing[*]}"
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
