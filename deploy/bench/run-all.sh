#!/usr/bin/env bash
# Reproduces every row of BENCHMARKS.md on a fresh machine (Java 17, Maven, network access to Maven Central):
#
#   DURATION=60 deploy/bench/run-all.sh
#
# Builds the broker and the bench jar, starts one broker node with its embedded PostgreSQL in a temporary folder,
# runs the rows of issues 8 and 23 one after the other, appends one JSON line per row to deploy/bench/results.jsonl,
# then restarts that node clustered, adds a second node sharing its PostgreSQL, measures cross-node wake-up, and
# stops everything it started.
#
# Environment knobs (all optional):
#   DURATION=60          measured seconds per row          WARMUP=10  unmeasured seconds before each row
#   TRIALS=200           wake-up trials                    BUILD=1    0 = use the jars already built
#   IDLE=5               seconds of the broker's and PostgreSQL's idle CPU measured before each throughput row
#                        (cpu_us_per_msg_net leaves it out); 0 = not measured
#   ROWS="push100 push1 drain100 popack popack1 fanout part10 part1000 part10000 part10000req redrive msgpage wakeup"
#                        subset/order of rows to run (see the case below for what each row is)
#   DRAIN_PREFILL        drain100 backlog (default 80000 x (DURATION+WARMUP))
#   POPACK1_PREFILL      popack1 backlog (default 4000 x (DURATION+WARMUP))
#   DEAD_LETTERS=100000  redrive: dead letters made, then moved by one bulk redrive task (maxPerSecond unset)
#   REDRIVE_TIMEOUT=300  redrive: seconds before the task is cancelled and the partial rate reported
#   MSGPAGE_ROWS=10000000  msgpage: messages in the queue before paging (the fill time is in the JSON line)
#   MSGPAGE_CLIENTS=1    msgpage: page loops at once (1: an operator paging; the latency target is per page)
#   RESULTS=deploy/bench/results.jsonl                     BROKER_JAR=verticles/target/queen-vertx.jar
#   PORT_A / PORT_B / PG_PORT_BENCH / CLUSTER_PORT         fixed ports (default: free ones picked here)
#   BROKER_JAVA_OPTS / BENCH_JAVA_OPTS                     extra JVM flags
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
DURATION=${DURATION:-60}
WARMUP=${WARMUP:-10}
TRIALS=${TRIALS:-200}
IDLE=${IDLE:-5}
BUILD=${BUILD:-1}
ROWS=${ROWS:-"push100 push1 drain100 popack popack1 fanout part10 part1000 part10000 part10000req redrive msgpage wakeup"}
DRAIN_PREFILL=${DRAIN_PREFILL:-$((80000 * (DURATION + WARMUP)))}
POPACK1_PREFILL=${POPACK1_PREFILL:-$((4000 * (DURATION + WARMUP)))}
DEAD_LETTERS=${DEAD_LETTERS:-100000}
REDRIVE_TIMEOUT=${REDRIVE_TIMEOUT:-300}
MSGPAGE_ROWS=${MSGPAGE_ROWS:-10000000}
MSGPAGE_CLIENTS=${MSGPAGE_CLIENTS:-1}
RESULTS=${RESULTS:-$here/results.jsonl}
BROKER_JAR=${BROKER_JAR:-$root/verticles/target/queen-vertx.jar}
BENCH_JAR=$here/target/queen-bench.jar
BROKER_JAVA_OPTS=${BROKER_JAVA_OPTS:-}
BENCH_JAVA_OPTS=${BENCH_JAVA_OPTS:--Xmx1g}

log() { echo "[run-all $(date +%H:%M:%S)] $*" >&2; }

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
free_port() { # first port from $1 upwards that nobody listens on
  local p=$1
  while port_in_use "$p"; do p=$((p + 1)); done
  echo "$p"
}

if [ "$BUILD" = 1 ]; then
  log "building the broker"
  (cd "$root" && mvn -B -ntp -q -DskipTests package)
  log "building the bench"
  (cd "$here" && mvn -B -ntp -q package)
fi
[ -f "$BROKER_JAR" ] || { echo "no broker jar at $BROKER_JAR" >&2; exit 1; }
[ -f "$BENCH_JAR" ] || { echo "no bench jar at $BENCH_JAR" >&2; exit 1; }

PORT_A=${PORT_A:-$(free_port 16632)}
PORT_B=${PORT_B:-$(free_port $((PORT_A + 1)))}
PG_PORT_BENCH=${PG_PORT_BENCH:-$(free_port 25432)}
CLUSTER_PORT=${CLUSTER_PORT:-$(free_port 5801)}
CLUSTER_NAME=queen-bench-$$
work=$(mktemp -d "${TMPDIR:-/tmp}/queen-bench.XXXXXX")
rev=$(cd "$root" && git rev-parse --short HEAD 2>/dev/null || echo unknown)
log "work folder $work, node A :$PORT_A, node B :$PORT_B, PostgreSQL :$PG_PORT_BENCH, broker rev $rev"

declare -A pids=()

# shellcheck source=nodes.sh
. "$here/nodes.sh"

cleanup() {
  local rc=$?
  for name in node-b node-a; do stop_node "$name"; done
  log "logs kept in $work (rm -rf it when done)"
  exit $rc
}
trap cleanup EXIT INT TERM

start_node() { # name port [VAR=value ...]
  local name=$1 port=$2
  shift 2
  mkdir -p "$work/$name"
  # shellcheck disable=SC2086
  env PORT="$port" QUEEN_BIND_ADDR=127.0.0.1 QUEEN_DATA_DIR="$work/$name" FILE_BUFFER_DIR="$work/$name/buffers" \
    QUEEN_SERVER_ID="bench-$name" "$@" \
    java $BROKER_JAVA_OPTS -jar "$BROKER_JAR" >> "$work/$name.log" 2>&1 &
  pids[$name]=$!
  local i
  for i in $(seq 240); do
    if curl -fs "http://127.0.0.1:$port/health" > /dev/null 2>&1; then
      log "$name up on :$port (pid ${pids[$name]})"
      return 0
    fi
    if ! kill -0 "${pids[$name]}" 2>/dev/null; then
      tail -50 "$work/$name.log" >&2
      echo "$name died during boot" >&2
      exit 1
    fi
    sleep 0.5
  done
  tail -50 "$work/$name.log" >&2
  echo "$name did not answer /health within 120 s" >&2
  exit 1
}

PG_URL="jdbc:postgresql://127.0.0.1:$PG_PORT_BENCH/postgres"

bench() { # row-label bench-args...
  local label=$1
  shift
  log "row $label: $*"
  local line
  # shellcheck disable=SC2086
  line=$(java $BENCH_JAVA_OPTS -jar "$BENCH_JAR" --label "$label rev=$rev" --pg "$PG_URL" \
    --pg-user postgres --pg-password "$(cat "$work/node-a/pg-password")" --broker-pid "${pids[node-a]}" --idle "$IDLE" $(ref "$label") \
    "$@")
  echo "$line" >> "$RESULTS"
  echo "$line"
  sleep 3
}

common=(--url "http://127.0.0.1:$PORT_A" --duration "$DURATION" --warmup "$WARMUP" --payload-bytes 200)

# Queen 0.15 on the same machine (issue 23), msg/s: each row's JSON gets "reference" {messages_per_s, ratio}.
declare -A REF=([push100]=23700 [push1]=2400 [drain100]=11250 [popack1]=432 [part10]=24300 [part1000]=20400
                [part10000]=18600)
ref() { [ -n "${REF[$1]:-}" ] && echo "--reference ${REF[$1]}" || true; }

need_single=0
for r in $ROWS; do [ "$r" != wakeup ] && [ "$r" != wakeup-local ] && need_single=1; done

if [ "$need_single" = 1 ]; then
  start_node node-a "$PORT_A" QUEEN_EMBEDDED_PG_PORT="$PG_PORT_BENCH" QUEEN_CLUSTER=false
  for r in $ROWS; do
    case "$r" in
      push100)   bench push100   --mode push "${common[@]}" --clients 8 --batch 100 --partitions 10 ;;
      push1)     bench push1     --mode push "${common[@]}" --clients 32 --batch 1 --partitions 10 ;;
      drain100)  bench drain100  --mode popack "${common[@]}" --clients 8 --producers 0 --batch 100 --partitions 10 \
                                 --prefill "$DRAIN_PREFILL" ;;
      popack)    bench popack    --mode popack "${common[@]}" --clients 8 --producers 8 --batch 100 --partitions 10 ;;
      popack1)   bench popack1   --mode popack "${common[@]}" --clients 8 --producers 0 --batch 1 --partitions 10 \
                                 --prefill "$POPACK1_PREFILL" ;;
      fanout)    bench fanout    --mode fanout "${common[@]}" --groups 10 --consumers-per-group 1 --producers 8 \
                                 --batch 100 --partitions 10 ;;
      part10)    bench part10    --mode push "${common[@]}" --clients 8 --batch 100 --partitions 10 ;;
      part1000)  bench part1000  --mode push "${common[@]}" --clients 8 --batch 100 --partitions 1000 ;;
      part10000) bench part10000 --mode push "${common[@]}" --clients 8 --batch 100 --partitions 10000 ;;
      part10000req) bench part10000req --mode push "${common[@]}" --clients 8 --batch 100 --partitions 10000 \
                                 --partition-pick request ;;
      redrive)   bench redrive   --mode redrive "${common[@]}" --clients 8 --batch 1000 --partitions 10 \
                                 --dead-letters "$DEAD_LETTERS" --redrive-timeout "$REDRIVE_TIMEOUT" ;;
      msgpage)   bench msgpage   --mode msgpage "${common[@]}" --clients "$MSGPAGE_CLIENTS" --partitions 10 --fill "$MSGPAGE_ROWS" \
                                 --fill-clients 16 ;;
      wakeup|wakeup-local) ;;
      *) echo "unknown row $r" >&2; exit 2 ;;
    esac
  done
  stop_node node-a
fi

if [[ " $ROWS " == *" wakeup "* || " $ROWS " == *" wakeup-local "* ]]; then
  cluster=(QUEEN_CLUSTER=true QUEEN_CLUSTER_MEMBERS=127.0.0.1 QUEEN_CLUSTER_NAME="$CLUSTER_NAME"
           QUEEN_CLUSTER_PORT="$CLUSTER_PORT" QUEEN_CLUSTER_INTERFACE=127.0.0.1)
  start_node node-a "$PORT_A" QUEEN_EMBEDDED_PG_PORT="$PG_PORT_BENCH" "${cluster[@]}"
  start_node node-b "$PORT_B" PG_HOST=127.0.0.1 PG_PORT="$PG_PORT_BENCH" PG_USER=postgres PG_PASSWORD="$(cat "$work/node-a/pg-password")" \
    "${cluster[@]}"
  # wait for the Hazelcast members to connect (an established TCP connection on the cluster port range)
  hz_linked() {
    local p
    for p in $(seq "$CLUSTER_PORT" $((CLUSTER_PORT + 2))); do
      awk -v p="$(printf '%04X' "$p")" '$4 == "01" && ($2 ~ (":" p "$") || $3 ~ (":" p "$")) { f = 1 } END { exit !f }' \
        /proc/net/tcp && return 0
    done
    return 1
  }
  for _ in $(seq 60); do hz_linked && break; sleep 0.5; done
  hz_linked || log "warning: no Hazelcast connection between the nodes yet"
  sleep 2
  # A broker answers wake-ups as fast as its JIT-compiled code lets it: a fresh JVM runs the pop, push and event-bus
  # paths interpreted for its first thousands of requests. Warm both nodes with WARMUP seconds of push+pop+ack each
  # (not recorded) before the trials, as the throughput rows are warmed.
  for u in "$PORT_A" "$PORT_B"; do
    log "warming node :$u for ${WARMUP}s"
    # shellcheck disable=SC2086
    java $BENCH_JAVA_OPTS -jar "$BENCH_JAR" --mode popack --url "http://127.0.0.1:$u" --clients 4 --producers 4 \
      --batch 10 --partitions 4 --payload-bytes 200 --duration "$WARMUP" --warmup 0 > /dev/null 2>&1 || true
  done
  for r in $ROWS; do
    case "$r" in
      wakeup) bench wakeup --mode wakeup --url "http://127.0.0.1:$PORT_A" --url2 "http://127.0.0.1:$PORT_B" \
                --trials "$TRIALS" ;;
      wakeup-local) bench wakeup-local --mode wakeup --url "http://127.0.0.1:$PORT_A" --url2 "http://127.0.0.1:$PORT_A" \
                --trials "$TRIALS" ;;
    esac
  done
fi
log "results appended to $RESULTS"
