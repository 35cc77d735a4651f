#!/usr/bin/env bash
# Runs a command beside a throwaway PostgreSQL cluster on loopback (Debian's server binaries,
# initdb into a temporary directory, stopped and removed afterwards). The command finds the
# cluster in PONDER_BENCH_PG (postgres://ponder@127.0.0.1:PORT) and makes its databases with
# createdb. Durability settings are PostgreSQL's defaults: the figures are for a real set-up.
set -euo pipefail
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$bin/initdb" ] || { echo "with-postgres: no PostgreSQL server (make tools-db installs it)" >&2; exit 1; }
dir=$(mktemp -d /tmp/ponder-bench-pg.XXXXXX)
as=()
if [ "$(id -u)" = 0 ]; then chown postgres:postgres "$dir"; as=(runuser -u postgres --); fi
"${as[@]}" "$bin/initdb" -D "$dir/data" -U ponder --auth=trust -E UTF8 --no-instructions >/dev/null
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"${as[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w \
  -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$dir -c max_connections=300" start >/dev/null
trap '"${as[@]}" "$bin/pg_ctl" -D "$dir/data" -m fast stop >/dev/null || true; rm -rf "$dir"' EXIT
export PONDER_BENCH_PG="postgres://ponder@127.0.0.1:$port"
export PATH="$bin:$PATH"
"$@"
