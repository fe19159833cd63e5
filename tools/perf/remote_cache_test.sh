#!/usr/bin/env bash
# Tests --config=remote-cache (.bazelrc) against a real Bazel HTTP cache: an
# nginx with WebDAV PUT that this script starts on 127.0.0.1 with a private
# root, and stops again.
#
#   tools/perf/remote_cache_test.sh [TARGET...]   (default: //labs/... //tests/...)
#
# It builds a snapshot of the tree (copied under a temp directory):
# 1. a clean build (fresh output base) with the remote cache: a cache miss
#    for every action, whose outputs Bazel uploads (HTTP PUT /ac/..., /cas/...);
# 2. the same build from another fresh output base, as a second grading
#    machine would: every compile and link should now be a remote cache hit.
# Prints the hit rate of build 2 from Bazel's process summary
# ("INFO: N processes: H remote cache hit, ...") and exits 1 if it is below
# 90%. Builds with --config=solutions. Needs Debian's nginx (installed here
# with apt-get if missing and we are root). Leaves nothing running.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(//labs/... //tests/...)

if ! command -v nginx >/dev/null 2>&1 && [[ ! -x /usr/sbin/nginx ]]; then
  if [[ $(id -u) -eq 0 ]]; then
    echo "remote-cache test: installing Debian's nginx"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends nginx >/dev/null
  else
    echo "remote-cache test: needs nginx (apt-get install nginx)" >&2
    exit 2
  fi
fi
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
if ! "$nginx_bin" -V 2>&1 | grep -q -- --with-http_dav_module; then
  echo "remote-cache test: this nginx lacks http_dav_module (PUT)" >&2
  exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/mha_remote_cache.XXXXXX")
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$work/cache" "$work/tmp"
# Run the workers as ourselves (as root, nginx would drop them to nobody, who
# cannot write into our private temp directory).
user_line=""
[[ $(id -u) -eq 0 ]] && user_line="user root;"
cat >"$work/nginx.conf" <<CONF
$user_line
worker_processes 1;
daemon on;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 256; }
http {
  access_log $work/access.log;
  client_body_temp_path $work/tmp/body;
  proxy_temp_path $work/tmp/proxy;
  fastcgi_temp_path $work/tmp/fastcgi;
  uwsgi_temp_path $work/tmp/uwsgi;
  scgi_temp_path $work/tmp/scgi;
  server {
    listen 127.0.0.1:$port;
    client_max_body_size 0;           # cache entries can be large binaries
    location / {
      root $work/cache;
      dav_methods PUT;                # Bazel's HTTP cache protocol: GET and PUT
      create_full_put_path on;        # /ac/<sha256> and /cas/<sha256>
      dav_access user:rw;
    }
  }
}
CONF

# Build a snapshot of the tree, so edits made meanwhile cannot change the
# second build's inputs.
src="$work/src"
mkdir -p "$src"
(cd "$here" && tar --exclude='./bazel-*' --exclude='./.cache' --exclude='./.git' \
   --exclude='./out' -cf - .) | (cd "$src" && tar xf -)

ob1="$work/output_base_1"
ob2="$work/output_base_2"
cleanup() {
  if [[ -f "$work/nginx.pid" ]]; then kill "$(cat "$work/nginx.pid")" 2>/dev/null || true; fi
  for ob in "$ob1" "$ob2"; do
    [[ -d "$ob" ]] && (cd "$src" && bazel --output_base="$ob" shutdown >/dev/null 2>&1) || true
  done
  chmod -R u+w "$work" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
[[ -n "${KEEP_WORK:-}" ]] && trap - EXIT
"$nginx_bin" -c "$work/nginx.conf" -e "$work/error.log" 2>/dev/null || "$nginx_bin" -c "$work/nginx.conf"
sleep 0.5
url="http://127.0.0.1:$port"
echo "remote-cache test: nginx WebDAV cache at $url (root $work/cache)"
curl -fsS -X PUT --data-binary probe "$url/probe" >/dev/null 2>&1 ||
  /usr/bin/python3 - "$url" <<'PY'
import sys, urllib.request
req = urllib.request.Request(sys.argv[1] + "/probe", data=b"probe", method="PUT")
urllib.request.urlopen(req, timeout=5)
PY

build() {  # build OUTPUT_BASE LOG
  local start=$SECONDS
  (cd "$src" && bazel --output_base="$1" build --config=solutions --config=remote-cache \
     --remote_cache="$url" "${targets[@]}") >"$2" 2>&1 || { tail -20 "$2" >&2; exit 1; }
  echo $((SECONDS - start))
}
summary() { grep -E "INFO: [0-9]+ processes" "$1" | tail -1 | sed 's/^INFO: //'; }
hits() { summary "$1" | grep -oE "[0-9]+ remote cache hit" | grep -oE "^[0-9]+" || echo 0; }
total() { summary "$1" | grep -oE "^[0-9]+"; }
internal() { summary "$1" | grep -oE "[0-9]+ internal" | grep -oE "^[0-9]+" || echo 0; }

echo "remote-cache test: build 1 (clean output base, empty cache): ${targets[*]}"
s1=$(build "$ob1" "$work/build1.log")
echo "  $s1 s; $(summary "$work/build1.log")"
(cd "$src" && bazel --output_base="$ob1" shutdown >/dev/null 2>&1) || true
entries=$(find "$work/cache" -type f | wc -l)
bytes=$(du -sh "$work/cache" | cut -f1)
echo "  the cache now holds $entries entries ($bytes)"

echo "remote-cache test: build 2 (another clean output base, same cache)"
s2=$(build "$ob2" "$work/build2.log")
echo "  $s2 s; $(summary "$work/build2.log")"
h=$(hits "$work/build2.log"); t=$(total "$work/build2.log"); i=$(internal "$work/build2.log")
cacheable=$((t - i))
if [[ $cacheable -le 0 ]]; then echo "remote-cache test: nothing to build?" >&2; exit 1; fi
rate=$(/usr/bin/python3 -c "print(f'{100*$h/$cacheable:.1f}')")
gets=$(grep -c '"GET ' "$work/access.log" || true)
puts=$(grep -c '"PUT ' "$work/access.log" || true)
echo "remote-cache test: build 2 hit rate $rate% ($h of $cacheable non-internal actions); " \
     "build 1 ${s1} s, build 2 ${s2} s; server saw $puts PUT, $gets GET"
/usr/bin/python3 -c "import sys; sys.exit(0 if $h >= 0.9 * $cacheable else 1)" || {
  echo "remote-cache test: FAIL: hit rate below 90%" >&2; exit 1; }
echo "remote-cache test: PASS"
