#!/usr/bin/env bash
# PostgreSQL CPU per batch-1 pop+ack, measured without the broker or HTTP: pgbench calls queen.log_pop_many (one
# message, queue mode, under a lease) and then queen.log_ack for it, each its own transaction as the broker sends
# them, on one connection, N times. The figure is the CPU the database spent (the pgbench backend's, read from the
# postmaster's children's CPU once the backend has exited), divided by N. It moves far less than msg/s when other
# work shares the machine, so two schema versions (two databases, each migrated by its node) can be compared on a
# busy machine: run each a few times, alternating, and compare the minima. Not part of the test suite.
#
# Needs: a PostgreSQL on this machine with the queen schema (start a node against it once), psql and pgbench
# (Debian's postgresql-client), and read access to the data directory's postmaster.pid (run as root or postgres).
# Usage: PGHOST=127.0.0.1 PGPORT=5432 PGUSER=postgres PGPASSWORD=... PGDATABASE=postgres deploy/bench/sql-cost.sh [N]
# Knobs: N (2000, pops+acks), ROUNDS (3), FRAMES (30 frames per pushed segment, as a batch-100 push over 10
# partitions writes them), PARTITIONS (10), ACK_FN (queen.log_ack: another function of its signature, to compare a
# variant created by hand in the same database), POP_FN (queen.log_pop_many: the same for the pop). The queue it
# fills (sqlcost-<pid>) is deleted at the end.
set -euo pipefail

N=${1:-2000}
ROUNDS=${ROUNDS:-3}
FRAMES=${FRAMES:-30}
PARTITIONS=${PARTITIONS:-10}
QUEUE="sqlcost-$$"
ACK_FN=${ACK_FN:-queen.log_ack}
POP_FN=${POP_FN:-queen.log_pop_many}
# shellcheck source=pg-cpu.sh
. "$(dirname "$0")/pg-cpu.sh"

# The backlog: every partition gets enough segments of FRAMES one-byte frames for all rounds (never decoded here).
segments=$(( (N * ROUNDS) / (PARTITIONS * FRAMES) + 2 ))
psql_q "SELECT count(queen.log_push(NULL, '$QUEUE', 'p-' || p, $FRAMES,
          (SELECT decode(string_agg(md5(p || '/' || s || '/' || f), ''), 'hex')
           FROM generate_series(1, $FRAMES) f),
          '\\x00'::bytea))
        FROM generate_series(1, $PARTITIONS) p, generate_series(1, $segments) s" > /dev/null
trap 'psql_q "SELECT queen.delete_queue(NULL, '"'"'$QUEUE'"'"')" > /dev/null 2>&1 || true; rm -f "$pgbench_out"' EXIT

script=$(mktemp)
cat > "$script" <<EOF
SELECT partition_id AS pid, base_offset + start_idx AS off
  FROM $POP_FN(NULL, '$QUEUE', NULL, NULL, 1, 1, 60, ARRAY['sqlcost'], false, 'all', NULL, NULL, NULL) \gset
SELECT CASE WHEN ($ACK_FN(NULL, :pid::uuid, NULL, 'sqlcost',
         ARRAY[(SELECT substring(t.hashes FROM (:off - t.base_offset)::int * 16 + 1 FOR 16) FROM queen.log_txns t
                WHERE t.partition_id = :pid::uuid AND t.base_offset <= :off ORDER BY t.base_offset DESC LIMIT 1)],
         ARRAY['completed'])->>'ok')::boolean THEN 1
            ELSE (SELECT 1 / count(*)::int FROM pg_class WHERE false) END AS acked \gset
EOF

for r in $(seq "$ROUNDS"); do
  ticks=$(pgbench_cpu "$N" "$script")
  lat=$(awk '/latency average/ {print $4}' "$pgbench_out")
  awk -v t="$ticks" -v n="$N" -v hz="$hz" -v lat="$lat" -v r="$r" 'BEGIN {
    printf "round %d: %.3f ms of PostgreSQL CPU per pop+ack (pgbench latency %s ms per pair)\n",
           r, t * 1000 / hz / n, lat }'
done
rm -f "$script" "$pgbench_out"
