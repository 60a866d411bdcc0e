#!/usr/bin/env bash
# Starts N clustered nodes on loopback against one PostgreSQL, for development.
#   deploy/local-cluster.sh 3            # nodes on 6632, 6633, 6634
# Ports come from the environment:
#   QUEEN_BASE_PORT         HTTP port of node 1; node i listens on QUEEN_BASE_PORT + i - 1   (default 6632)
#   QUEEN_EMBEDDED_PG_PORT  port of node 1's embedded PostgreSQL when PG_HOST is unset        (default 55432)
#   QUEEN_CLUSTER_PORT      first Hazelcast port; each node takes the next free one from it  (default 5701)
#   QUEEN_CLUSTER_BUS_PORT  if set, event-bus port of node 1; node i uses it + i - 1         (default: random)
#   QUEEN_WAIT_SECONDS      how long each node may take to answer /health                    (default 120)
#   QUEEN_BIND_ADDR         address the HTTP servers listen on                               (default 127.0.0.1)
# With PG_HOST unset, the first node's embedded PostgreSQL (under ./data/node-1) is shared by the others.
# Logs go to ./data/node-<i>.log. A node that dies (while starting or later) is reported with the tail of its log and
# the script stops the others and exits non-zero; a node not ready within QUEEN_WAIT_SECONDS likewise. Ctrl-C stops
# everything.
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-3}"
base="${QUEEN_BASE_PORT:-6632}"
pg_port="${QUEEN_EMBEDDED_PG_PORT:-55432}"
wait_s="${QUEEN_WAIT_SECONDS:-120}"
bus_base="${QUEEN_CLUSTER_BUS_PORT:-}"
for v in n base pg_port wait_s${bus_base:+ bus_base}; do
  [[ "${!v}" =~ ^[0-9]+$ ]] || { echo "local-cluster.sh: $v must be a number, got '${!v}'" >&2; exit 2; }
done
jar=verticles/target/queen-vertx.jar
[ -f "$jar" ] || mvn -B -ntp -q -DskipTests package
mkdir -p data
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; wait' EXIT
trap 'exit 130' INT TERM

export QUEEN_CLUSTER=true QUEEN_CLUSTER_MEMBERS=127.0.0.1 QUEEN_CLUSTER_NAME="${QUEEN_CLUSTER_NAME:-queen-local}"
export QUEEN_BIND_ADDR="${QUEEN_BIND_ADDR:-127.0.0.1}"
export QUEEN_CLUSTER_PORT="${QUEEN_CLUSTER_PORT:-5701}" QUEEN_CLUSTER_INTERFACE="${QUEEN_CLUSTER_INTERFACE:-127.0.0.1}"

# Starts node $1 in the background with the extra environment "${@:2}"; its pid goes into pids.
start_node() {
  local i="$1"; shift
  local bus=()
  if [ -n "$bus_base" ]; then bus=("QUEEN_CLUSTER_BUS_PORT=$((bus_base + i - 1))"); fi
  env "${bus[@]}" "$@" PORT=$((base + i - 1)) java -jar "$jar" > "data/node-$i.log" 2>&1 &
  pids+=($!)
}

# Waits until node $1 (pid $2) answers /health; fails with its log tail if it dies or the wait runs out.
await_node() {
  local i="$1" pid="$2" port=$((base + $1 - 1)) deadline=$((SECONDS + wait_s))
  until curl -fs --max-time 2 "http://127.0.0.1:$port/health" > /dev/null; do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "node $i (pid $pid) died before it was ready; last lines of data/node-$i.log:" >&2
      tail -n 30 "data/node-$i.log" >&2
      exit 1
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "node $i not ready on port $port after ${wait_s}s; last lines of data/node-$i.log:" >&2
      tail -n 30 "data/node-$i.log" >&2
      exit 1
    fi
    sleep 0.5
  done
  echo "node $i ready on http://127.0.0.1:$port"
}

if [ -z "${PG_HOST:-}" ]; then
  start_node 1 QUEEN_EMBEDDED_PG_PORT="$pg_port" QUEEN_DATA_DIR=data/node-1
  await_node 1 "${pids[0]}"
  # the embedded server accepts only its generated SCRAM password (written by node 1 under its data folder)
  export PG_HOST=127.0.0.1 PG_PORT="$pg_port" PG_USER=postgres PG_PASSWORD="$(cat data/node-1/pg-password)"
  first=2
else
  first=1
fi
for i in $(seq "$first" "$n"); do
  start_node "$i" FILE_BUFFER_DIR="data/node-$i/buffers"
done
for i in $(seq "$first" "$n"); do
  await_node "$i" "${pids[$((i - 1))]}"
done
echo "all $n nodes ready; Ctrl-C stops them"
# exits (and stops the others through the trap) as soon as any node exits
set +e
wait -n "${pids[@]}"
rc=$?
for i in $(seq 1 "$n"); do
  if ! kill -0 "${pids[$((i - 1))]}" 2>/dev/null; then
    echo "node $i exited (status $rc); last lines of data/node-$i.log:" >&2
    tail -n 30 "data/node-$i.log" >&2
  fi
done
echo "stopping the others" >&2
exit "$rc"
