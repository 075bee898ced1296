#!/usr/bin/env bash
# A throwaway PostgreSQL server for BlockDb's tests and benchmarks, on loopback only.
#
#   eng/postgres.sh start     install PostgreSQL from Debian's packages when missing, initdb a temporary cluster,
#                             start it on a free 127.0.0.1 port and create the database "blockdb"; prints the
#                             export lines (eval "$(eng/postgres.sh start)" sets them in the calling shell)
#   eng/postgres.sh env       prints the export lines of the running server
#   eng/postgres.sh restart   restarts the running server (fast shutdown), same port and data
#   eng/postgres.sh stop      stops the server and deletes its data folder
#
# The variables: BLOCKDB_TEST_POSTGRES (an Npgsql connection string) and BLOCKDB_TEST_POSTGRES_SCRIPT (this
# script, for the tests that restart the server). PostgreSQL refuses to run as root, so as root the cluster belongs
# to the "postgres" user (created by the Debian package). State lives in $BLOCKDB_PG_DIR (default
# /tmp/blockdb-postgres); logs in its server.log. Progress goes to stderr, the export lines to stdout.
set -euo pipefail

dir="${BLOCKDB_PG_DIR:-/tmp/blockdb-postgres}"
script="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
log() { echo "postgres.sh: $*" >&2; }

bin_dir() {
  local found
  found="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
  if [ -z "$found" ] || [ ! -x "$found/initdb" ]; then
    return 1
  fi
  echo "$found"
}

install_if_missing() {
  if bin_dir >/dev/null; then
    return
  fi
  log "PostgreSQL is not installed; installing Debian's package"
  if [ "$(id -u)" -ne 0 ]; then
    log "run as root (apt-get) or install the 'postgresql' package first"
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  # The package's own cluster is not used (and not started: no service manager in containers).
  apt-get install -y -qq postgresql >&2
}

# Runs a command as the cluster's owner: "postgres" when we are root, else ourselves.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

free_port() {
  local port
  for port in $(seq 54329 54429); do
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return
    fi
  done
  log "no free port in 54329-54429"
  exit 1
}

print_env() {
  local port
  port="$(cat "$dir/port")"
  echo "export BLOCKDB_TEST_POSTGRES='Host=127.0.0.1;Port=$port;Username=postgres;Database=blockdb;Pooling=true'"
  echo "export BLOCKDB_TEST_POSTGRES_SCRIPT='$script'"
}

running() {
  [ -f "$dir/port" ] && [ -d "$dir/data" ] && as_owner "$(bin_dir)/pg_ctl" status -D "$dir/data" >/dev/null 2>&1
}

start() {
  install_if_missing
  local bin port
  bin="$(bin_dir)"
  if running; then
    log "already running on port $(cat "$dir/port")"
    print_env
    return
  fi
  rm -rf "$dir"
  mkdir -p "$dir"
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres: "$dir"
  fi
  port="$(free_port)"
  echo "$port" >"$dir/port"
  # trust on loopback: a throwaway cluster that listens on 127.0.0.1 only. --no-sync: initdb's own files need no fsync.
  as_owner "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 --no-sync >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; exit 1; }
  # fsync stays on (figures measured here include durable commits); more connections for the many-writers study.
  as_owner "$bin/pg_ctl" start -D "$dir/data" -w -t 60 -l "$dir/server.log" \
    -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=400 -c shared_buffers=256MB" >&2 \
    || { cat "$dir/server.log" >&2; exit 1; }
  as_owner "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 -qc 'CREATE DATABASE blockdb' >&2
  log "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') running on 127.0.0.1:$port (data $dir/data)"
  print_env
}

stop() {
  if [ -d "$dir/data" ] && bin_dir >/dev/null; then
    as_owner "$(bin_dir)/pg_ctl" stop -D "$dir/data" -m fast -w >&2 || true
  fi
  rm -rf "$dir"
}

restart() {
  running || { log "not running; start it first"; exit 1; }
  # -l again: the new postmaster must not hold the caller's stdout/stderr open (a caller reading them would wait forever).
  as_owner "$(bin_dir)/pg_ctl" restart -D "$dir/data" -m fast -w -t 60 -l "$dir/server.log" >&2
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  restart) restart ;;
  env) running || { log "not running; start it with: eng/postgres.sh start"; exit 1; }; print_env ;;
  *) echo "usage: $0 start|stop|restart|env" >&2; exit 2 ;;
esac
