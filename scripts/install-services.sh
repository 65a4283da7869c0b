#!/usr/bin/env bash
# Installs the Debian packages keel's tests need when they are missing: PostgreSQL 15 (the run store for fleets) and
# Chromium (the dashboard's browser tests, driven by playwright-core). Safe to run again.
set -euo pipefail
missing=()
if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  echo "install-services: PostgreSQL present: $(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
else
  missing+=(postgresql)
fi
if [ -x /usr/bin/chromium ]; then
  echo "install-services: Chromium present: /usr/bin/chromium"
else
  missing+=(chromium)
fi
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install-services: missing ${missing[*]} and this is not root; install them (apt-get install ${missing[*]})" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-services: installed ${missing[*]}"
