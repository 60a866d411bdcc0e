#!/usr/bin/env bash
# A/B of two broker jars on one machine, interleaved: both nodes (each with its own embedded PostgreSQL) stay up, and
# each row runs against A, then B (the order flips every repetition), so a change in the machine's load hits both
# sides alike. One JSON line per row and side goes to RESULTS, labelled "<row> <side>"; table.py --median summarises.
#
#   JAR_A=/tmp/base.jar JAR_B=verticles/target/queen-vertx.jar ROWS="popack1 drain100" REPS=3 deploy/bench/ab.sh
#
# Knobs: DURATION=12 WARMUP=8 (seconds per row), REPS=3, WARM_REPS=1 (repetitions first run and not recorded, so the
# recorded ones read a JVM that has compiled the row's path), IDLE=0, LOCK=/work/bench.lock (every row runs under
# flock LOCK, released between rows, so other benchmarks on the machine never run alongside), POPACK1_PREFILL=60000,
# DRAIN_PREFILL=2000000 (a quiet machine drains 75,000 a second), RESULTS=deploy/bench/results-ab.jsonl, BROKER_JAVA_OPTS, BENCH_JAVA_OPTS, ENV_A / ENV_B
# (extra VAR=value words for one side's broker).
# Rows: push1, push100, popack1, drain100, part1000, part10000 (the same arguments as run-all.sh).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
JAR_A=${JAR_A:?JAR_A: the first broker jar}
JAR_B=${JAR_B:?JAR_B: the second broker jar}
ROWS=${ROWS:-"popack1 drain100 push1 push100"}
REPS=${REPS:-3}
WARM_REPS=${WARM_REPS:-1}
DURATION=${DURATION:-12}
WARMUP=${WARMUP:-8}
IDLE=${IDLE:-0}
LOCK=${LOCK:-/work/bench.lock}
POPACK1_PREFILL=${POPACK1_PREFILL:-60000}
DRAIN_PREFILL=${DRAIN_PREFILL:-2000000}
RESULTS=${RESULTS:-$here/results-ab.jsonl}
BENCH_JAR=$here/target/queen-bench.jar
BROKER_JAVA_OPTS=${BROKER_JAVA_OPTS:-}
BENCH_JAVA_OPTS=${BENCH_JAVA_OPTS:--Xmx1g}
ENV_A=${ENV_A:-}
ENV_B=${ENV_B:-}

log() { echo "[ab $(date +%H:%M:%S)] $*" >&2; }
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
free_port() { local p=$1; while port_in_use "$p"; do p=$((p + 1)); done; echo "$p"; }

work=$(mktemp -d "${TMPDIR:-/tmp}/queen-ab.XXXXXX")
declare -A pids=() ports=() pgports=()

# shellcheck source=nodes.sh
. "$here/nodes.sh"
cleanup() {
  local rc=$?
  for s in A B; do stop_node "$s"; done
  log "logs kept in $work"
  exit $rc
}
trap cleanup EXIT INT TERM

start_node() { # side jar port pgport extra-env
  local side=$1 jar=$2 port=$3 pgport=$4 extra=$5
  mkdir -p "$work/$side"
  # shellcheck disable=SC2086
  env PORT="$port" QUEEN_BIND_ADDR=127.0.0.1 QUEEN_DATA_DIR="$work/$side" FILE_BUFFER_DIR="$work/$side/buffers" \
    QUEEN_SERVER_ID="ab-$side" QUEEN_EMBEDDED_PG_PORT="$pgport" QUEEN_CLUSTER=false $extra \
    java $BROKER_JAVA_OPTS -jar "$jar" >> "$work/$side.log" 2>&1 &
  pids[$side]=$!
  ports[$side]=$port
  pgports[$side]=$pgport
  for _ in $(seq 240); do
    if curl -fs "http://127.0.0.1:$port/health" > /dev/null 2>&1; then
      log "$side up on :$port (pid ${pids[$side]}, PostgreSQL :$pgport, $jar)"
      return 0
    fi
    kill -0 "${pids[$side]}" 2>/dev/null || { tail -50 "$work/$side.log" >&2; exit 1; }
    sleep 0.5
  done
  echo "$side did not answer /health" >&2
  exit 1
}

row_args() { # row -> bench arguments
  case "$1" in
    push1)    echo "--mode push --clients 32 --batch 1 --partitions 10" ;;
    push100)  echo "--mode push --clients 8 --batch 100 --partitions 10" ;;
    popack1)  echo "--mode popack --clients 8 --producers 0 --batch 1 --partitions 10 --prefill $POPACK1_PREFILL" ;;
    drain100) echo "--mode popack --clients 8 --producers 0 --batch 100 --partitions 10 --prefill $DRAIN_PREFILL" ;;
    part1000) echo "--mode push --clients 8 --batch 100 --partitions 1000" ;;
    part10000) echo "--mode push --clients 8 --batch 100 --partitions 10000" ;;
    *) echo "unknown row $1" >&2; exit 2 ;;
  esac
}

bench() { # side row record(0/1)
  local side=$1 row=$2 rec=$3 line
  # shellcheck disable=SC2046,SC2086
  line=$(flock "$LOCK" java $BENCH_JAVA_OPTS -jar "$BENCH_JAR" --label "$row $side" \
    --pg "jdbc:postgresql://127.0.0.1:${pgports[$side]}/postgres" --pg-user postgres \
    --pg-password "$(cat "$work/$side/pg-password")" --broker-pid "${pids[$side]}" --idle "$IDLE" \
    --url "http://127.0.0.1:${ports[$side]}" --duration "$DURATION" --warmup "$WARMUP" --payload-bytes 200 \
    $(row_args "$row"))
  if [ "$rec" = 1 ]; then echo "$line" >> "$RESULTS"; fi
  python3 -c 'import json,sys; j=json.loads(sys.argv[1]); c=j.get("cpu_us_per_msg") or {}; print(j["label"], "msg/s", j.get("messages_per_s"), "us/msg broker", c.get("broker"), "pg", c.get("pg"), "total", c.get("total"))' "$line" >&2
}

pa=$(free_port 16710); pb=$(free_port $((pa + 1)))
ga=$(free_port 26710); gb=$(free_port $((ga + 1)))
start_node A "$JAR_A" "$pa" "$ga" "$ENV_A"
start_node B "$JAR_B" "$pb" "$gb" "$ENV_B"
for rep in $(seq $((WARM_REPS + REPS))); do
  rec=$([ "$rep" -gt "$WARM_REPS" ] && echo 1 || echo 0)
  if [ $((rep % 2)) = 1 ]; then order="A B"; else order="B A"; fi
  for row in $ROWS; do
    for side in $order; do
      log "rep $rep (recorded: $rec) row $row side $side"
      bench "$side" "$row" "$rec"
    done
  done
done
log "results appended to $RESULTS"
