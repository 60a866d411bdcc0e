#!/usr/bin/env bash
# A replicated PostgreSQL on loopback for trying (and testing) queen-vertx through a failover: one etcd and three
# PostgreSQL 15 servers under Patroni, with synchronous replication (synchronous_mode: true).
#
#   deploy/ha/local-ha.sh up            start (installs patroni, etcd-server, postgresql-15 when missing), wait for a
#                                       primary and a synchronous standby, print PG_HOST= / PG_PORT= / PG_PASSWORD=
#                                       (generated; the user is the broker's default, postgres) for the broker
#   deploy/ha/local-ha.sh status        the members, their roles and lag (patronictl list)
#   deploy/ha/local-ha.sh env           the PG_* lines again
#   deploy/ha/local-ha.sh switchover    planned switchover to a standby (patronictl switchover), waits for the new pair
#   deploy/ha/local-ha.sh kill-primary  kill -9 of the current primary's postmaster (prints its member name)
#   deploy/ha/local-ha.sh down          stop everything and delete the cluster's folder
#
# Environment:
#   HA_DIR        the cluster's folder (default ./data/ha); user postgres must be able to reach it when run as root
#   HA_BASE_PORT  PostgreSQL listens on HA_BASE_PORT, +1, +2; Patroni's REST API on +10, +11, +12; etcd on +20 (client)
#                 and +21 (peer)                                                               (default 25432)
#   HA_TTL        Patroni's leader key TTL in seconds: a lost primary is replaced within about this long  (default 10)
#   HA_LOOP_WAIT  seconds between Patroni's HA loops                                           (default 2)
#   HA_WAIT_SECONDS  how long up and switchover wait for a primary and a synchronous standby   (default 120)
#
# Running `up` twice, or `down` without `up`, is harmless. As root, PostgreSQL, Patroni and etcd run as user postgres.
set -euo pipefail

HA_DIR="${HA_DIR:-./data/ha}"
base="${HA_BASE_PORT:-25432}"
ttl="${HA_TTL:-10}"
loop_wait="${HA_LOOP_WAIT:-2}"
wait_s="${HA_WAIT_SECONDS:-120}"
for v in base ttl loop_wait wait_s; do
  [[ "${!v}" =~ ^[0-9]+$ ]] || { echo "local-ha.sh: $v must be a number, got '${!v}'" >&2; exit 2; }
done
retry_timeout=$(( (ttl - loop_wait) / 2 ))
[ "$retry_timeout" -ge 1 ] || { echo "local-ha.sh: HA_TTL must exceed HA_LOOP_WAIT by 2 or more" >&2; exit 2; }
etcd_client=$((base + 20))
etcd_peer=$((base + 21))
members=(pg1 pg2 pg3)
scope=queen-ha

pg_port() { echo $((base + $1)); }
rest_port() { echo $((base + 10 + $1)); }

# As root, everything runs as the unprivileged user postgres (PostgreSQL refuses root).
if [ "$(id -u)" -eq 0 ]; then
  as_db() { runuser -u postgres -- "$@"; }
else
  as_db() { "$@"; }
fi

pg_bin() {
  local d
  for d in /usr/lib/postgresql/15/bin; do [ -x "$d/postgres" ] && { echo "$d"; return; }; done
  return 1
}

install_missing() {
  local need=()
  command -v patroni >/dev/null 2>&1 || need+=(patroni)
  command -v etcd >/dev/null 2>&1 || need+=(etcd-server)
  pg_bin >/dev/null || need+=(postgresql-15)
  [ ${#need[@]} -eq 0 ] && return
  if [ "$(id -u)" -ne 0 ]; then
    echo "local-ha.sh: missing ${need[*]}; install them (apt-get install ${need[*]}) or run this as root" >&2
    exit 1
  fi
  # Debian's postgresql package would create (and, with systemd, start) a default cluster on 5432: not wanted here
  if [ ! -e /etc/postgresql-common/createcluster.conf ]; then
    mkdir -p /etc/postgresql-common
    echo "create_main_cluster = false" > /etc/postgresql-common/createcluster.conf
  fi
  echo "local-ha.sh: installing ${need[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >&2
  apt-get install -y -q -o Dpkg::Options::=--force-confold "${need[@]}" >&2
}

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# Starts "$@" as the database user in its own session, its output in $log; the program itself writes its pid to
# $pidfile before it runs (exec). As root the user is switched with setpriv, which execs (runuser would stay as the
# program's parent and stop along with it when the program is stopped), so the pid is the program's own.
spawn() {
  local pidfile="$1" log="$2"; shift 2
  rm -f "$pidfile"
  if [ "$(id -u)" -eq 0 ]; then
    setsid env HOME=/var/lib/postgresql USER=postgres LOGNAME=postgres \
      setpriv --reuid=postgres --regid=postgres --init-groups -- \
      sh -c 'echo $$ > "$0"; exec "$@"' "$pidfile" "$@" >>"$log" 2>&1 < /dev/null &
  else
    setsid sh -c 'echo $$ > "$0"; exec "$@"' "$pidfile" "$@" >>"$log" 2>&1 < /dev/null &
  fi
  local deadline=$((SECONDS + 10))
  until [ -s "$pidfile" ]; do
    [ "$SECONDS" -lt "$deadline" ] || { echo "local-ha.sh: $1 did not start" >&2; exit 1; }
    sleep 0.05
  done
}

password() { cat "$HA_DIR/password"; }

write_config() {
  local i="$1" name="${members[$1]}" pw
  pw="$(password)"
  mkdir -p "$HA_DIR/$name"
  cat > "$HA_DIR/$name.yml" <<EOF
scope: $scope
namespace: /queen-ha/
name: $name
log:
  level: INFO
restapi:
  listen: 127.0.0.1:$(rest_port "$i")
  connect_address: 127.0.0.1:$(rest_port "$i")
# etcd's v2 API: Patroni 3.0.2 (Debian bookworm) refreshes its leader key there with a compare-and-swap; its etcd3
# code writes the key unconditionally, so a primary frozen past the ttl took the key back from the standby promoted
# meanwhile when it woke, and that standby's acknowledged commits were rewound (fixed in Patroni 3.0.3, PR 2689)
etcd:
  hosts: 127.0.0.1:$etcd_client
bootstrap:
  dcs:
    ttl: $ttl
    loop_wait: $loop_wait
    retry_timeout: $retry_timeout
    maximum_lag_on_failover: 1048576
    # a commit is acknowledged once the synchronous standby has its WAL; Patroni promotes only that standby
    synchronous_mode: true
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
        max_connections: 300
        max_wal_senders: 10
        max_replication_slots: 10
        wal_level: replica
        wal_log_hints: "on"
        hot_standby: "on"
        synchronous_commit: "on"
        wal_keep_size: 128MB
  initdb:
    - encoding: UTF8
    - data-checksums
  pg_hba:
    - local all all trust
    - host replication replicator 127.0.0.1/32 scram-sha-256
    - host all all 127.0.0.1/32 scram-sha-256
postgresql:
  listen: 127.0.0.1:$(pg_port "$i")
  connect_address: 127.0.0.1:$(pg_port "$i")
  data_dir: $HA_DIR/$name/data
  bin_dir: $(pg_bin)
  pgpass: $HA_DIR/$name/pgpass
  authentication:
    superuser:
      username: postgres
      password: "$pw"
    replication:
      username: replicator
      password: "$pw"
    rewind:
      username: postgres
      password: "$pw"
  parameters:
    unix_socket_directories: $HA_DIR/$name
    shared_buffers: 64MB
tags:
  nofailover: false
  noloadbalance: false
  clonefrom: false
  nosync: false
EOF
  chmod 600 "$HA_DIR/$name.yml"
}

# The cluster as Patroni's REST API of any member describes it: one "name role state lag" line per member.
cluster_lines() {
  local i
  for i in 0 1 2; do
    if out="$(curl -fs --max-time 2 "http://127.0.0.1:$(rest_port "$i")/cluster" 2>/dev/null)"; then
      python3 -c '
import json, sys
for m in json.load(sys.stdin).get("members", []):
    print(m["name"], m.get("role", "?"), m.get("state", "?"), m.get("lag", 0), m.get("port", 0))
' <<<"$out"
      return 0
    fi
  done
  return 1
}

# The current primary's member name (empty when none is running).
leader() { cluster_lines 2>/dev/null | awk '$2 == "leader" && $3 == "running" {print $1}'; }

# True when a running primary and a streaming synchronous standby exist.
healthy_pair() {
  local lines
  lines="$(cluster_lines 2>/dev/null)" || return 1
  grep -Eq '^[^ ]+ leader running ' <<<"$lines" \
    && grep -Eq '^[^ ]+ sync_standby (streaming|running) ' <<<"$lines"
}

await_pair() {
  local deadline=$((SECONDS + wait_s))
  until healthy_pair; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "local-ha.sh: no primary with a synchronous standby after ${wait_s}s; members:" >&2
      cluster_lines >&2 || echo "(Patroni does not answer; see $HA_DIR/*.log)" >&2
      exit 1
    fi
    sleep 0.5
  done
}

print_env() {
  local hosts=() ports=()
  for i in 0 1 2; do hosts+=(127.0.0.1); ports+=("$(pg_port "$i")"); done
  (IFS=,; echo "PG_HOST=${hosts[*]}"; echo "PG_PORT=${ports[*]}")
  # the user is the broker's default (postgres); the password is generated at the first up
  echo "PG_PASSWORD=$(password)"
}

up() {
  install_missing
  mkdir -p "$HA_DIR"
  HA_DIR="$(cd "$HA_DIR" && pwd)"
  if [ ! -f "$HA_DIR/password" ]; then
    (umask 077; head -c 18 /dev/urandom | base64 | tr -d '/+=' > "$HA_DIR/password")
  fi
  if [ "$(id -u)" -eq 0 ]; then
    chown -R postgres: "$HA_DIR"
    runuser -u postgres -- test -w "$HA_DIR" || {
      echo "local-ha.sh: user postgres cannot write $HA_DIR (a parent folder is not reachable); set HA_DIR" >&2
      exit 1
    }
  fi
  if ! alive "$HA_DIR/etcd.pid"; then
    spawn "$HA_DIR/etcd.pid" "$HA_DIR/etcd.log" etcd --name e1 --data-dir "$HA_DIR/etcd" \
      --listen-client-urls "http://127.0.0.1:$etcd_client" --advertise-client-urls "http://127.0.0.1:$etcd_client" \
      --listen-peer-urls "http://127.0.0.1:$etcd_peer" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer" \
      --initial-cluster "e1=http://127.0.0.1:$etcd_peer" --initial-cluster-state new \
      --heartbeat-interval 100 --election-timeout 1000 --enable-v2=true
    local deadline=$((SECONDS + 30))
    until curl -fs --max-time 1 "http://127.0.0.1:$etcd_client/health" >/dev/null 2>&1; do
      [ "$SECONDS" -lt "$deadline" ] || { echo "local-ha.sh: etcd did not start:" >&2; tail -n 20 "$HA_DIR/etcd.log" >&2; exit 1; }
      sleep 0.2
    done
  fi
  for i in 0 1 2; do
    local name="${members[$i]}"
    alive "$HA_DIR/$name.pid" && continue
    write_config "$i"
    [ "$(id -u)" -eq 0 ] && chown -R postgres: "$HA_DIR/$name" "$HA_DIR/$name.yml"
    spawn "$HA_DIR/$name.pid" "$HA_DIR/$name.log" patroni "$HA_DIR/$name.yml"
    # the first member bootstraps the cluster alone, so it is the one primary; the others clone it
    if [ "$i" -eq 0 ]; then
      local deadline=$((SECONDS + wait_s))
      until [ "$(leader)" != "" ]; do
        [ "$SECONDS" -lt "$deadline" ] || { echo "local-ha.sh: no primary:" >&2; tail -n 20 "$HA_DIR/$name.log" >&2; exit 1; }
        alive "$HA_DIR/$name.pid" || { echo "local-ha.sh: patroni $name exited:" >&2; tail -n 20 "$HA_DIR/$name.log" >&2; exit 1; }
        sleep 0.5
      done
    fi
  done
  await_pair
  print_env
}

status() {
  [ -f "$HA_DIR/pg1.yml" ] || { echo "local-ha.sh: no cluster in $HA_DIR" >&2; exit 1; }
  as_db patronictl -c "$HA_DIR/pg1.yml" list
}

switchover() {
  local from
  from="$(leader)"
  [ -n "$from" ] || { echo "local-ha.sh: no running primary to switch over from" >&2; exit 1; }
  await_pair
  as_db patronictl -c "$HA_DIR/pg1.yml" switchover --leader "$from" --force >&2
  local deadline=$((SECONDS + wait_s))
  until l="$(leader)" && [ -n "$l" ] && [ "$l" != "$from" ]; do
    [ "$SECONDS" -lt "$deadline" ] || { echo "local-ha.sh: $from is still the primary" >&2; exit 1; }
    sleep 0.3
  done
  await_pair
  echo "switched over from $from to $(leader)"
}

kill_primary() {
  local l pid
  l="$(leader)"
  [ -n "$l" ] || { echo "local-ha.sh: no running primary" >&2; exit 1; }
  pid="$(head -n 1 "$HA_DIR/$l/data/postmaster.pid")"
  kill -9 "$pid"
  echo "killed the postmaster of $l (pid $pid)"
}

down() {
  [ -d "$HA_DIR" ] || return 0
  local name f
  for name in "${members[@]}"; do
    alive "$HA_DIR/$name.pid" && kill "$(cat "$HA_DIR/$name.pid")" 2>/dev/null || true
  done
  local deadline=$((SECONDS + 30))
  for name in "${members[@]}"; do
    while alive "$HA_DIR/$name.pid" && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
    alive "$HA_DIR/$name.pid" && kill -9 "$(cat "$HA_DIR/$name.pid")" 2>/dev/null || true
    # a postmaster Patroni did not stop (Patroni killed, or the postmaster was orphaned by a kill)
    f="$HA_DIR/$name/data/postmaster.pid"
    if [ -f "$f" ]; then
      pid="$(head -n 1 "$f")"
      if [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = postgres ]; then
        kill -CONT "$pid" 2>/dev/null || true
        kill -QUIT "$pid" 2>/dev/null || true
      fi
    fi
  done
  alive "$HA_DIR/etcd.pid" && kill "$(cat "$HA_DIR/etcd.pid")" 2>/dev/null || true
  deadline=$((SECONDS + 15))
  while alive "$HA_DIR/etcd.pid" && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
  alive "$HA_DIR/etcd.pid" && kill -9 "$(cat "$HA_DIR/etcd.pid")" 2>/dev/null || true
  rm -rf "$HA_DIR"
  echo "local HA cluster in $HA_DIR stopped and removed"
}

case "${1:-}" in
  up) up ;;
  status) status ;;
  env) print_env ;;
  switchover) switchover ;;
  kill-primary) kill_primary ;;
  down) down ;;
  *) echo "usage: $0 up|status|env|switchover|kill-primary|down" >&2; exit 2 ;;
esac
