#!/usr/bin/env bash
# Installs the Debian packages keel's tests need when they are missing: PostgreSQL 15 and Redis 7 (private instances
# started by the tests), Prometheus (scrapes keel's /metrics in the observability tests), Chromium (driven headless by
# playwright-core in the browser tests), tmux (drives `keel chat` in a real terminal) and prlimit (resource limits of
# command tools). Safe to run again: it installs nothing when everything is there.
set -euo pipefail

missing=()
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v prometheus >/dev/null 2>&1 || missing+=(prometheus)
command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v tmux >/dev/null 2>&1 || missing+=(tmux)
command -v prlimit >/dev/null 2>&1 || missing+=(util-linux)

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-services: all present (PostgreSQL $(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1 | cut -d/ -f5), redis-server, prometheus, chromium, tmux, prlimit)"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install-services: missing ${missing[*]} and this is not root; install them with apt-get" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
mapfile -t packages < <(printf '%s\n' "${missing[@]}" | sort -u)
echo "install-services: installing ${packages[*]}"
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
echo "install-services: installed ${packages[*]}"
