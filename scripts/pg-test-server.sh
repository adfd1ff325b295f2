#!/usr/bin/env bash
# A private PostgreSQL server for the tests: its own data directory, port and socket directory, trust
# authentication on the socket and loopback only. Never touches a system cluster.
#
#   scripts/pg-test-server.sh start DIR [PORT]   initdb DIR (once) and start; prints the URL to use
#   scripts/pg-test-server.sh stop DIR           stop it (fast shutdown)
#   scripts/pg-test-server.sh run DIR -- CMD…    start, run CMD with PUSHGATE_TEST_PG_URL set, stop
#
# PostgreSQL's binaries refuse to run as root; as root the server runs as the `postgres` user that
# Debian's package creates (DIR must then be somewhere that user can write; it is chowned).
set -euo pipefail

bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$bindir/initdb" ] || { echo "pg-test-server: no PostgreSQL server binaries (apt-get install postgresql)" >&2; exit 1; }

as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

start() {
  local dir=$1 port=${2:-55432}
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  [ "$(id -u)" -eq 0 ] && chown postgres: "$dir"
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    as_owner "$bindir/initdb" -D "$dir/data" -U pushgate -A trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
      || { cat "$dir/initdb.log" >&2; exit 1; }
  fi
  as_owner mkdir -p "$dir/socket"
  # Small and quick: tests create and drop many databases. fsync stays on: durability is under test.
  as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-p $port -k $dir/socket -c listen_addresses=127.0.0.1 -c max_connections=200 -c shared_buffers=128MB" \
    start >/dev/null || { tail -20 "$dir/server.log" >&2; exit 1; }
  echo "postgres://pushgate@127.0.0.1:$port/postgres"
}

stop() {
  local dir=$1
  [ -f "$dir/data/postmaster.pid" ] || return 0
  as_owner "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
}

case "${1:-}" in
  start) start "$2" "${3:-}" ;;
  stop) stop "$2" ;;
  run)
    dir=$2; shift 2
    [ "${1:-}" = "--" ] && shift
    port=${PG_TEST_PORT:-55432}
    url=$(start "$dir" "$port")
    trap 'stop "$dir"' EXIT
    PUSHGATE_TEST_PG_URL=$url "$@"
    ;;
  *) echo "usage: $0 start DIR [PORT] | stop DIR | run DIR -- CMD..." >&2; exit 2 ;;
esac
