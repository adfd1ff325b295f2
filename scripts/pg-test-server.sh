#!/usr/bin/env bash
# A private PostgreSQL server for the tests: its own data directory, port and socket directory, trust
# authentication on the socket and loopback only. Never touches a system cluster.
#
#   scripts/pg-test-server.sh start DIR [PORT]   initdb DIR (once) and start; prints the URL to use
#   scripts/pg-test-server.sh stop DIR           stop it (fast shutdown)
#   scripts/pg-test-server.sh run -- CMD…        initdb a temporary directory, start on a free port,
#                                                run CMD with PUSHGATE_TEST_PG_URL set, stop, remove
#
# `run` with PUSHGATE_TEST_PG_URL already set just runs CMD against that server.
#
# PostgreSQL's binaries refuse to run as root; as root the server runs as the `postgres` user that
# Debian's package creates (DIR must then be somewhere that user can write; it is chowned).
set -euo pipefail

bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$bindir/initdb" ] || { echo "pg-test-server: no PostgreSQL server binaries (apt-get install postgresql)" >&2; exit 1; }

as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# The first port from 55432 on that nothing listens on (several worktrees may test at once).
free_port() {
  local port
  for port in $(seq 55432 55631); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || { echo "$port"; return; }
  done
  echo "pg-test-server: no free port in 55432-55631" >&2; exit 1
}

start() {
  local dir=$1 port=${2:-$(free_port)}
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
    shift
    [ "${1:-}" = "--" ] && shift
    if [ -n "${PUSHGATE_TEST_PG_URL:-}" ]; then exec "$@"; fi
    dir=$(mktemp -d /tmp/pushgate-pg.XXXXXX)
    chmod 755 "$dir"
    cleanup() { stop "$dir" || true; rm -rf "$dir"; }
    trap cleanup EXIT
    url=$(start "$dir")
    echo "pg-test-server: PostgreSQL for the tests at $url (data in $dir)" >&2
    status=0
    PUSHGATE_TEST_PG_URL=$url "$@" || status=$?
    exit $status
    ;;
  *) echo "usage: $0 start DIR [PORT] | stop DIR | run -- CMD..." >&2; exit 2 ;;
esac
