#!/usr/bin/env bash
# What a reader of log_partitions.last_offset would pay if the counter went (docs/design/partition-owners.md, "Without
# owners: the tail probe"): the partition's tail read by one backward probe of log_segments' primary key instead of a
# column of the partition row it already reads. Measured on pop's candidate scan, the reader that visits the most
# partitions per call: _log_pop_candidates over a queue of PARTITIONS partitions, each with SEGMENTS segments and a
# queue-mode cursor at its tail (everything consumed: the empty scan visits every partition and finds nothing, the
# worst case), counted in one statement per call, N calls per variant and round on one connection:
#   counter   today's test, p.last_offset > c.committed
#   tail      the same test against COALESCE(the last segment's end_offset, p.log_start - 1)
# The figure is the pgbench backend's CPU (pg-cpu.sh) per partition visited. Not part of the test suite.
# Needs what spread-cost.sh needs (psql, pgbench, a PostgreSQL with the queen schema, read access to postmaster.pid).
# Usage: PG*=... deploy/bench/tail-readers.sh [N]; knobs ROUNDS (3), PARTITIONS (10000), SEGMENTS (10).
# Everything it creates (the queue tailreaders-<pid>) is deleted at the end.
set -euo pipefail

N=${1:-20}
ROUNDS=${ROUNDS:-3}
PARTITIONS=${PARTITIONS:-10000}
SEGMENTS=${SEGMENTS:-10}
QUEUE="tailreaders-$$"
# shellcheck source=pg-cpu.sh
. "$(dirname "$0")/pg-cpu.sh"
scripts=()
cleanup() {
  psql_q "SELECT queen.delete_queue(NULL, '$QUEUE')" > /dev/null 2>&1 || true
  rm -f "${scripts[@]}" "$pgbench_out" 2>/dev/null || true
}
trap cleanup EXIT

# The queue: PARTITIONS partitions with segments 0 .. SEGMENTS - 1 (one message each) and a cursor at the tail.
psql_q "SELECT count(queen.log_push(NULL, '$QUEUE', 'p-' || p, 1, decode(md5(p::text), 'hex'), '\\x00'::bytea))
        FROM generate_series(1, $PARTITIONS) p" > /dev/null
psql -X -q -v ON_ERROR_STOP=1 <<SQL
INSERT INTO queen.log_segments (partition_id, base_offset, end_offset, created_at, blob)
SELECT p.id, o, o, now(), '\\x00'::bytea
FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id, generate_series(1, $SEGMENTS - 1) o
WHERE q.name = '$QUEUE';
UPDATE queen.log_partitions p SET last_offset = $SEGMENTS - 1
FROM queen.queues q WHERE q.id = p.queue_id AND q.name = '$QUEUE';
INSERT INTO queen.log_consumers (partition_id, consumer_group, committed)
SELECT p.id, '__QUEUE_MODE__', $SEGMENTS - 1
FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = '$QUEUE';
VACUUM (ANALYZE) queen.log_partitions, queen.log_segments, queen.log_consumers;
SQL
qid=$(psql_q "SELECT id FROM queen.queues WHERE name = '$QUEUE'")

script() { # VAR TEST: the candidate scan of _log_pop_candidates with TEST as its "something past the cursor" test
  local f
  f=$(mktemp)
  scripts+=("$f")
  cat > "$f" <<SQL
SELECT count(*) FROM queen.log_partitions p
LEFT JOIN LATERAL (SELECT c0.partition_id, c0.committed, c0.worker_id, c0.lease_expires_at
                   FROM queen.log_consumers c0
                   WHERE c0.partition_id = p.id AND c0.consumer_group = '__QUEUE_MODE__' LIMIT 1) c ON true
WHERE p.queue_id = '$qid'
  AND (c.partition_id IS NULL OR $2)
  AND (c.worker_id IS NULL OR c.lease_expires_at IS NULL OR c.lease_expires_at < now());
SQL
  eval "$1=$f"
}
script s_counter "p.last_offset > c.committed"
script s_tail "COALESCE((SELECT s.end_offset FROM queen.log_segments s WHERE s.partition_id = p.id
                         ORDER BY s.base_offset DESC LIMIT 1), p.log_start - 1) > c.committed"

found=$(psql -X -qAt -f "$s_counter"); found2=$(psql -X -qAt -f "$s_tail")
[ "$found" = 0 ] && [ "$found2" = 0 ] || { echo "candidates found: $found / $found2 (expected none)" >&2; exit 1; }
echo "PostgreSQL CPU per partition visited by pop's empty candidate scan, $PARTITIONS partitions of $SEGMENTS segments,"
echo "$N scans per variant and round, $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg):"
for r in $(seq "$ROUNDS"); do
  line="round $r:"
  for v in counter tail; do
    s=s_$v
    ticks=$(pgbench_cpu "$N" "${!s}")
    line="$line $v $(awk -v t="$ticks" -v n="$N" -v p="$PARTITIONS" -v hz="$hz" 'BEGIN { printf "%.2f", t * 1e6 / hz / n / p }') us;"
  done
  echo "$line load $(cut -d' ' -f1 /proc/loadavg)"
done
echo "plan of the tail variant:"
psql -X -qAt -c "EXPLAIN (COSTS OFF) $(cat "$s_tail")"
