#!/usr/bin/env bash
# Starts N clustered nodes on loopback against one PostgreSQL, for development.
#   deploy/local-cluster.sh 3            # nodes on 6632, 6633, 6634
# With PG_HOST unset, the first node's embedded PostgreSQL (under ./data/node-1) is shared by the others.
# Logs go to ./data/node-<i>.log; Ctrl-C stops everything.
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-3}"
jar=verticles/target/queen-vertx.jar
[ -f "$jar" ] || mvn -B -ntp -q -DskipTests package
mkdir -p data
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; wait' EXIT INT TERM

export QUEEN_CLUSTER=true QUEEN_CLUSTER_MEMBERS=127.0.0.1 QUEEN_CLUSTER_NAME="${QUEEN_CLUSTER_NAME:-queen-local}"
if [ -z "${PG_HOST:-}" ]; then
  QUEEN_EMBEDDED_PG_PORT="${QUEEN_EMBEDDED_PG_PORT:-55432}" QUEEN_DATA_DIR=data/node-1 PORT=6632 \
    java -jar "$jar" > data/node-1.log 2>&1 &
  pids+=($!)
  until curl -fs http://127.0.0.1:6632/health > /dev/null; do sleep 0.5; done
  export PG_HOST=127.0.0.1 PG_PORT="${QUEEN_EMBEDDED_PG_PORT:-55432}"
  first=2
else
  first=1
fi
for i in $(seq "$first" "$n"); do
  FILE_BUFFER_DIR="data/node-$i/buffers" PORT=$((6631 + i)) java -jar "$jar" > "data/node-$i.log" 2>&1 &
  pids+=($!)
done
for i in $(seq 1 "$n"); do
  until curl -fs "http://127.0.0.1:$((6631 + i))/health" > /dev/null; do sleep 0.5; done
  echo "node $i ready on http://127.0.0.1:$((6631 + i))"
done
wait
