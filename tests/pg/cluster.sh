#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the test suite (and the bench).
#   tests/pg/cluster.sh install        install Debian's server package if its binaries are missing
#   tests/pg/cluster.sh start DIR      initdb + pg_ctl start in DIR on a free loopback port;
#                                      prints the connection URL (also kept in DIR/url)
#   tests/pg/cluster.sh replica DIR PRIMARY_DIR
#                                      a streaming replica of the cluster in PRIMARY_DIR
#   tests/pg/cluster.sh stop DIR       stop the cluster and remove DIR
# initdb refuses to run as root, so the cluster belongs to an unprivileged
# user (postgres when the package made one, else nobody). Only 127.0.0.1.
set -euo pipefail

pg_bin() {
  local dir
  for dir in /usr/lib/postgresql/*/bin; do
    if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then
      echo "$dir"
    fi
  done | sort -V | tail -n 1
}

install() {
  if [ -n "$(pg_bin)" ]; then
    return 0
  fi
  if [ "$(id -u)" != 0 ]; then
    echo "cluster.sh: PostgreSQL server binaries are missing; install Debian's postgresql package" >&2
    exit 1
  fi
  echo "cluster.sh: installing PostgreSQL (Debian package postgresql)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq postgresql >/dev/null
  if [ -z "$(pg_bin)" ]; then
    echo "cluster.sh: postgresql installed but no initdb found" >&2
    exit 1
  fi
}

owner() {
  if id postgres >/dev/null 2>&1; then echo postgres; else echo nobody; fi
}

as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u "$(owner)" -- "$@"
  else
    "$@"
  fi
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

prepare_dir() {  # DIR: created for the owner, its parent passable (mktemp makes 0700 folders)
  local dir=$1
  mkdir -p "$dir"
  chmod 755 "$dir"
  if [ "$(id -u)" = 0 ]; then
    chown "$(owner)" "$dir"
    chmod o+x "$(dirname "$dir")"
  fi
}

launch() {  # DIR PORT
  local dir=$1 port=$2 bin
  bin=$(pg_bin)
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 60 \
    -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=300 -c shared_buffers=128MB -c max_prepared_transactions=0" \
    start >/dev/null
}

start() {
  local dir=$1 port bin
  install
  bin=$(pg_bin)
  prepare_dir "$dir"
  as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C >/dev/null
  port=$(free_port)
  echo "$port" >"$dir/port"
  launch "$dir" "$port"
  as_owner "$bin/psql" -q -h 127.0.0.1 -p "$port" -U postgres -d postgres \
    -c "CREATE ROLE partita LOGIN PASSWORD 'partita' SUPERUSER" -c "CREATE DATABASE partita OWNER partita" >/dev/null
  echo "postgresql://partita:partita@127.0.0.1:$port/partita" | tee "$dir/url"
}

replica() {
  local dir=$1 primary=$2 port bin
  bin=$(pg_bin)
  prepare_dir "$dir"
  as_owner "$bin/pg_basebackup" -h 127.0.0.1 -p "$(cat "$primary/port")" -U postgres -D "$dir/data" -R -X stream >/dev/null
  port=$(free_port)
  echo "$port" >"$dir/port"
  launch "$dir" "$port"
  echo "postgresql://partita:partita@127.0.0.1:$port/partita" | tee "$dir/url"
}

restart() {  # DIR [MODE [DOWN]]: stop (immediate by default: a crash), stay down DOWN seconds, start on the same port
  local dir=$1 mode=${2:-immediate} down=${3:-0} bin
  bin=$(pg_bin)
  as_owner "$bin/pg_ctl" -D "$dir/data" -m "$mode" -w stop >/dev/null
  sleep "$down"
  launch "$dir" "$(cat "$dir/port")"
}

stop() {
  local dir=$1 bin
  bin=$(pg_bin)
  if [ -f "$dir/data/postmaster.pid" ]; then
    as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
}

cmd=${1:-}
shift || true
case "$cmd" in
  install) install ;;
  start) start "$@" ;;
  replica) replica "$@" ;;
  restart) restart "$@" ;;
  stop) stop "$@" ;;
  *) echo "usage: cluster.sh install | start DIR | replica DIR PRIMARY_DIR | restart DIR [MODE [DOWN]] | stop DIR" >&2; exit 2 ;;
esac
