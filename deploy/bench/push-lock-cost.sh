#!/usr/bin/env bash
# What the one-statement push under advisory push locks (issue 39, R__20_push.sql "Push lock") saves against the
# function it replaced: PostgreSQL CPU per element of a K-element hinted push call (the broker's steady state), today's
# queen.log_push_multi against public.log_push_multi_before, the function as it was at OLD_REV (lock-and-check
# statement FOR NO KEY UPDATE in id order, then the write), created here from git and dropped at the end. Same
# method as fold-cost.sh: pgbench, one connection, N calls per variant, each its own transaction; the backend's CPU
# (read once it has exited) divided by N x K; the variants alternate, ROUNDS times. Not part of the test suite.
#
# Needs what spread-cost.sh needs (a PostgreSQL on this machine with today's queen schema, psql, pgbench, read
# access to postmaster.pid, git). Usage: PGHOST=127.0.0.1 PGPORT=... PGUSER=postgres PGPASSWORD=... PGDATABASE=postgres \
#   deploy/bench/push-lock-cost.sh [N]        knobs: N (1500), ROUNDS (4), PARTITIONS (80), K (8), OLD_REV (f15ba84)
set -euo pipefail
N=${1:-1500}; ROUNDS=${ROUNDS:-4}; PARTITIONS=${PARTITIONS:-80}; K=${K:-8}; OLD_REV=${OLD_REV:-f15ba84}
QUEUE="lockcost-$$"; CHUNKS="public.lockcost_$$"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=pg-cpu.sh
. "$here/pg-cpu.sh"
scripts=()
cleanup() {
  psql_q "DROP TABLE IF EXISTS $CHUNKS" > /dev/null 2>&1 || true
  psql_q "SELECT queen.delete_queue(NULL, '$QUEUE')" > /dev/null 2>&1 || true
  psql_q "DROP FUNCTION IF EXISTS public.log_push_multi_before(uuid[], text[], text[], integer[], bytea[], bytea[],
          bigint[], uuid[], uuid[], boolean[])" > /dev/null 2>&1 || true
  rm -f "${scripts[@]}" "$pgbench_out" 2>/dev/null || true
}
trap cleanup EXIT

# the old function, renamed: from its CREATE to the end of its body
git -C "$here" show "$OLD_REV:sql/src/main/resources/db/migration/R__20_push.sql" \
  | awk '/^CREATE OR REPLACE FUNCTION queen.log_push_multi\(/ { on = 1 } on { print } on && /^\$\$;/ { exit }' \
  | sed 's/^CREATE OR REPLACE FUNCTION queen.log_push_multi(/CREATE OR REPLACE FUNCTION public.log_push_multi_before(/' \
  | psql -X -q -v ON_ERROR_STOP=1

seed_chunks
blobs="array_fill(decode(repeat('a5', 110), 'hex'), ARRAY[$K])"
promises="array_fill(9223372036854775807::bigint, ARRAY[$K])"
args="array_fill(NULL::uuid, ARRAY[$K]), array_fill('$QUEUE'::text, ARRAY[$K]), c.names, array_fill(1, ARRAY[$K]),
  $hashes, $blobs, $promises, c.ids, c.ids, NULL"
pgbench_script s_call "SELECT cardinality(c.ids) + cardinality(c.names) + cardinality($hashes) FROM $CHUNKS c WHERE c.k = :r;"
pgbench_script s_new "SELECT count(*) FROM $CHUNKS c, queen.log_push_multi($args) x WHERE c.k = :r AND x.status = 'queued';"
pgbench_script s_old "SELECT count(*) FROM $CHUNKS c, public.log_push_multi_before($args) x WHERE c.k = :r AND x.status = 'queued';"
run() { local t; t=$(pgbench_cpu "$N" "$1"); awk -v t="$t" -v n="$N" -v k="$K" -v hz="$hz" 'BEGIN { printf "%.1f", t * 1e6 / hz / n / k }'; }

echo "PostgreSQL CPU per element, $K hinted elements per call over $K of $PARTITIONS partitions, $N calls per variant:"
for r in $(seq "$ROUNDS"); do
  c=$(run "$s_call"); o=$(run "$s_old"); w=$(run "$s_new")
  awk -v r="$r" -v c="$c" -v o="$o" -v w="$w" -v rev="$OLD_REV" 'BEGIN {
    printf "round %d: call %s us, call+old (%s) %s us, call+today %s us  (old alone %.1f us, today alone %.1f us, %+.0f %%)\n",
           r, c, rev, o, w, o - c, w - c, 100 * ((w - c) / (o - c) - 1) }'
done
