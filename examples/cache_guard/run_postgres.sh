#!/bin/sh
# run_postgres.sh CACHE_GUARD COMMAND [ARGS...]: runs `CACHE_GUARD COMMAND --db postgres:... --dir D
# ARGS...` against a throwaway PostgreSQL 15 server: initdb into a temporary folder, pg_ctl on
# 127.0.0.1 at a free port, stopped and deleted on exit. PostgreSQL refuses to run as root, so as
# root the server runs as the `postgres` user (Debian's package creates it). Exit 77 (a skip for
# meson) when PostgreSQL or libpq is not installed.
set -eu
guard=$1
shift
command=$1
shift
pgbin=/usr/lib/postgresql/15/bin
if [ ! -x "$pgbin/initdb" ]; then
  echo "SKIP: PostgreSQL 15 is not installed ($pgbin/initdb missing; apt-get install postgresql-15)"
  exit 77
fi
if "$guard" check --db postgres:dbname=none 2>&1 | grep -q "without libpq"; then
  echo "SKIP: cache_guard was built without libpq (apt-get install libpq-dev, then reconfigure)"
  exit 77
fi
tmp=$(mktemp -d /tmp/cache_guard_pg.XXXXXX)
as_server() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
[ "$(id -u)" = 0 ] && chown postgres "$tmp"
cleanup() {
  as_server "$pgbin/pg_ctl" -D "$tmp/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
as_server "$pgbin/initdb" -D "$tmp/data" -A trust -U postgres >"$tmp/initdb.log" 2>&1 ||
  { cat "$tmp/initdb.log"; exit 1; }
as_server "$pgbin/pg_ctl" -D "$tmp/data" -l "$tmp/server.log" -w \
  -o "-p $port -k $tmp -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null ||
  { cat "$tmp/server.log"; exit 1; }
mkdir -p "$tmp/guard"
"$guard" "$command" --db "postgres:host=127.0.0.1 port=$port user=postgres dbname=postgres" \
  --dir "$tmp/guard" "$@"
