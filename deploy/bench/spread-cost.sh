#!/usr/bin/env bash
# PostgreSQL CPU per element of a push whose items are spread over many partitions (run-all.sh's part10000 row: every
# item lands in a partition of its own, so every item is its own element of queen.log_push_multi), measured without
# the broker or HTTP. pgbench sends, on one connection, N calls of K elements over K distinct partitions (a random
# chunk of the queue's PARTITIONS partitions), each call its own transaction, in three variants:
#   call    the call's own cost: fetch a chunk of partition ids and names, make K fresh 16-byte hashes
#   update  that, plus the per-partition counter update alone (last_offset + 1 for each of the K partitions): the
#           floor of any storage layout that allocates each partition's offsets in a row of PostgreSQL
#   push    that, plus queen.log_push_multi with K hinted elements on its fast path (today's write: lock and check the
#           partitions, update them, one log_segments and one log_txns row per element)
# The figure is the CPU the database spent (the pgbench backend's, read from the postmaster's children's CPU once the
# backend has exited), divided by N x K. Run the variants a few times and compare the minima; the machine's noise
# moves them less than it moves msg/s. Not part of the test suite.
#
# Needs: a PostgreSQL on this machine with the queen schema (start a node against it once), psql and pgbench
# (Debian's postgresql-client), and read access to the data directory's postmaster.pid (run as root or postgres).
# Usage: PGHOST=127.0.0.1 PGPORT=5432 PGUSER=postgres PGPASSWORD=... PGDATABASE=postgres deploy/bench/spread-cost.sh [N]
# Knobs: N (500 calls per variant and round), ROUNDS (3), PARTITIONS (10000), K (100 elements per call, the batch of one
# part10000 request). The queue it fills (spreadcost-<pid>) and its chunk table are deleted at the end.
set -euo pipefail

N=${1:-500}
ROUNDS=${ROUNDS:-3}
PARTITIONS=${PARTITIONS:-10000}
K=${K:-100}
QUEUE="spreadcost-$$"
CHUNKS="public.spreadcost_$$"
[ "$PARTITIONS" -ge "$K" ] || { echo "PARTITIONS ($PARTITIONS) must be at least K ($K)" >&2; exit 2; }
# shellcheck source=pg-cpu.sh
. "$(dirname "$0")/pg-cpu.sh"

cleanup() {
  psql_q "DROP TABLE IF EXISTS $CHUNKS" > /dev/null 2>&1 || true
  psql_q "SELECT queen.delete_queue(NULL, '$QUEUE')" > /dev/null 2>&1 || true
  rm -f "${scripts[@]}" "$pgbench_out" 2>/dev/null || true
}
scripts=()
trap cleanup EXIT

# The queue's partitions, each with one segment, and the chunks: PARTITIONS / K disjoint sets of K partitions each.
seed_chunks
pgbench_script script_call "SELECT cardinality(c.ids) + cardinality(c.names) + cardinality($hashes) FROM $CHUNKS c WHERE c.k = :r;"
pgbench_script script_update "UPDATE queen.log_partitions p SET last_offset = p.last_offset + 1
  FROM (SELECT unnest(c.ids) AS id, cardinality($hashes) AS h FROM $CHUNKS c WHERE c.k = :r) u WHERE p.id = u.id;"
# A 110-byte blob per element stands for one compressed 200-byte frame (the SQL stores it, never decodes it); the
# promise p_verified = max bigint about the hinted partition keeps every call on the fast path (no dedup probe).
pgbench_script script_push "SELECT count(*) FROM $CHUNKS c, queen.log_push_multi(
  array_fill(NULL::uuid, ARRAY[$K]), array_fill('$QUEUE'::text, ARRAY[$K]), c.names, array_fill(1, ARRAY[$K]),
  $hashes, array_fill(decode(repeat('a5', 110), 'hex'), ARRAY[$K]),
  array_fill(9223372036854775807::bigint, ARRAY[$K]), c.ids, c.ids, NULL) x WHERE c.k = :r;"

run() { # script -> microseconds of PostgreSQL CPU per element
  local ticks
  ticks=$(pgbench_cpu "$N" "$1")
  awk -v t="$ticks" -v n="$N" -v k="$K" -v hz="$hz" 'BEGIN { printf "%.1f", t * 1e6 / hz / n / k }'
}

echo "PostgreSQL CPU per element, $K elements per call over $K of $PARTITIONS partitions, $N calls per variant:"
for r in $(seq "$ROUNDS"); do
  c=$(run "$script_call")
  u=$(run "$script_update")
  p=$(run "$script_push")
  awk -v r="$r" -v c="$c" -v u="$u" -v p="$p" 'BEGIN {
    printf "round %d: call %s us, call+update %s us, call+push %s us  (update alone %.1f us, push alone %.1f us)\n",
           r, c, u, p, u - c, p - c }'
done
