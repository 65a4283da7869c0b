#!/usr/bin/env bash
# Installs the Debian packages keel's tests need (PostgreSQL 15) when they are missing. Safe to run again.
set -euo pipefail
if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  echo "install-services: PostgreSQL present: $(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install-services: PostgreSQL is missing and this is not root; install postgresql-15 (apt-get install postgresql)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends postgresql >/dev/null
echo "install-services: installed $(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
