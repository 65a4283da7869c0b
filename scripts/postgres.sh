#!/usr/bin/env bash
# Starts or stops a private PostgreSQL instance for keel's tests and benchmarks, on 127.0.0.1 only.
#   scripts/postgres.sh start [port]   prints the connection URL on its last line
#   scripts/postgres.sh stop [port]
# The data directory is KEEL_POSTGRES_DIR, by default /tmp/keel-postgres-<port>; `stop` leaves it in place.
set -euo pipefail
action=${1:?usage: postgres.sh start|stop [port]}
port=${2:-${KEEL_POSTGRES_PORT:-54329}}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -n "$bin" ] || { echo "postgres.sh: PostgreSQL is not installed (run scripts/install-services.sh)" >&2; exit 1; }
data=${KEEL_POSTGRES_DIR:-/tmp/keel-postgres-$port}

# PostgreSQL refuses to run as root: run its tools as the postgres user when we are root.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "$action" in
  start)
    if [ ! -f "$data/PG_VERSION" ]; then
      mkdir -p "$data"
      [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$data"
      as_owner "$bin/initdb" -D "$data" -U keel --auth=trust --encoding=UTF8 --locale=C >/dev/null
    fi
    if ! as_owner "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
      if ! as_owner "$bin/pg_ctl" -D "$data" -l "$data/server.log" -w -t 60 \
        -o "-p $port -k $data -c listen_addresses=127.0.0.1 -c max_connections=200" start >/dev/null; then
        # Most often the port is taken (a leftover instance, another suite): the log says so.
        echo "postgres.sh: PostgreSQL did not start on 127.0.0.1:$port (data $data); its log ends with:" >&2
        tail -n 20 "$data/server.log" >&2 || true
        exit 1
      fi
    fi
    as_owner "$bin/psql" -h 127.0.0.1 -p "$port" -U keel -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'keel'" \
      | grep -q 1 || as_owner "$bin/createdb" -h 127.0.0.1 -p "$port" -U keel keel
    echo "postgres://keel@127.0.0.1:$port/keel"
    ;;
  stop)
    if [ -f "$data/PG_VERSION" ]; then
      as_owner "$bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    ;;
  *) echo "usage: postgres.sh start|stop [port]" >&2; exit 2 ;;
esac
