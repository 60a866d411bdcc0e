#!/usr/bin/env bash
# What folding log_push_multi's lock-and-check statement into its write statement would save (issue 39): PostgreSQL
# CPU per element of a K-element push call, today's queen.log_push_multi (fast path: one statement locks the
# partitions FOR NO KEY UPDATE in id order and checks the bundle, a second updates them and inserts the segment and
# txns rows) against a PROTOTYPE, public.push_fold_prototype, created here and dropped at the end: the same write in
# one statement, the UPDATE taking the row locks, the encryption and dedup-promise checks read from what it returned
# (it leaves out the QSTALE/QMULTI refusals and the slow-path fallback, so it is a lower bound of a real one).
# pgbench sends, on one connection, N calls per variant (each its own transaction, synchronous_commit as configured)
# of K hinted elements over K distinct partitions of PARTITIONS; the figure is the backend's CPU (read from the
# postmaster's children's CPU once it has exited) divided by N x K. K=8 is what one fused call of the push b1 row
# carries. Not part of the test suite.
#
# Needs what spread-cost.sh needs (a PostgreSQL on this machine with the queen schema, psql, pgbench, read access to
# postmaster.pid). Usage: PGHOST=127.0.0.1 PGPORT=... PGUSER=postgres PGPASSWORD=... PGDATABASE=postgres \
#   deploy/bench/fold-cost.sh [N]        knobs: N (1500), ROUNDS (4), PARTITIONS (80), K (8)
set -euo pipefail
N=${1:-1500}; ROUNDS=${ROUNDS:-4}; PARTITIONS=${PARTITIONS:-80}; K=${K:-8}
QUEUE="foldcost-$$"; CHUNKS="public.foldcost_$$"
[ "$PARTITIONS" -ge "$K" ] || { echo "PARTITIONS ($PARTITIONS) must be at least K ($K)" >&2; exit 2; }
# shellcheck source=pg-cpu.sh
. "$(dirname "$0")/pg-cpu.sh"
scripts=()
cleanup() {
  psql_q "DROP TABLE IF EXISTS $CHUNKS" > /dev/null 2>&1 || true
  psql_q "SELECT queen.delete_queue(NULL, '$QUEUE')" > /dev/null 2>&1 || true
  psql_q "DROP FUNCTION IF EXISTS public.push_fold_prototype(uuid[], integer[], bytea[], bytea[], bigint[], boolean[])" \
    > /dev/null 2>&1 || true
  rm -f "${scripts[@]}" "$pgbench_out" 2>/dev/null || true
}
trap cleanup EXIT

psql -X -q -v ON_ERROR_STOP=1 <<'SQL'
CREATE OR REPLACE FUNCTION public.push_fold_prototype(p_pids uuid[], p_counts integer[], p_hashes bytea[], p_blobs bytea[], p_verified bigint[], p_encrypted boolean[])
 RETURNS TABLE(idx integer, status text, partition_id uuid, base_offset bigint, created_at timestamp with time zone, window_seconds integer, dups jsonb)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
#variable_conflict use_column
DECLARE v_now timestamptz := clock_timestamp();
BEGIN
    -- prototype (issue 39, fold-cost.sh only): the fast path in one statement, the update taking the row locks,
    -- the checks (encryption, dedup promise) read from what the update returned
    RETURN QUERY
    WITH u AS (
        SELECT * FROM unnest(p_pids, p_counts, p_hashes, p_blobs, p_verified, p_encrypted)
            WITH ORDINALITY AS u(pid, cnt, h, b, ver, e, ord) ORDER BY u.pid
    ), upd AS (
        UPDATE queen.log_partitions p SET
            last_offset    = p.last_offset + u.cnt,
            last_write_at  = CASE WHEN p.last_write_at < v_now - interval '10 seconds' THEN v_now ELSE p.last_write_at END,
            oldest_live_at = COALESCE(p.oldest_live_at, v_now),
            oldest_txn_at  = COALESCE(p.oldest_txn_at, v_now)
        FROM u
        WHERE p.id = u.pid
        RETURNING p.id, p.last_offset AS end_off, p.queue_id, p.txns_start
    ), x AS (
        SELECT u.pid, u.cnt, u.h, u.b, u.ord, upd.end_off - u.cnt + 1 AS base, upd.end_off,
               q.dedup_window_seconds AS win, q.encryption_enabled AS enc, u.e, u.ver, upd.txns_start
        FROM u JOIN upd ON upd.id = u.pid JOIN queen.queues q ON q.id = upd.queue_id
    ), seg AS (
        INSERT INTO queen.log_segments (partition_id, base_offset, end_offset, created_at, blob)
        SELECT x.pid, x.base, x.end_off, v_now, x.b FROM x
    ), txn AS (
        INSERT INTO queen.log_txns (partition_id, base_offset, end_offset, created_at, hashes)
        SELECT x.pid, x.base, x.end_off, v_now, x.h FROM x
    )
    SELECT (x.ord - 1)::integer,
           CASE WHEN x.enc AND x.e IS NOT TRUE THEN 'crypt'
                WHEN COALESCE(x.win, 0) > 0 AND x.base - 1 > GREATEST(x.ver, x.txns_start - 1) THEN 'probe'
                ELSE 'queued' END,
           x.pid, x.base, v_now, COALESCE(x.win, 0), NULL::jsonb
    FROM x ORDER BY x.ord;
END;
$function$
;
SQL

seed_chunks
blobs="array_fill(decode(repeat('a5', 110), 'hex'), ARRAY[$K])"
promises="array_fill(9223372036854775807::bigint, ARRAY[$K])"
pgbench_script s_call "SELECT cardinality(c.ids) + cardinality(c.names) + cardinality($hashes) FROM $CHUNKS c WHERE c.k = :r;"
pgbench_script s_push "SELECT count(*) FROM $CHUNKS c, queen.log_push_multi(array_fill(NULL::uuid, ARRAY[$K]),
  array_fill('$QUEUE'::text, ARRAY[$K]), c.names, array_fill(1, ARRAY[$K]), $hashes, $blobs, $promises, c.ids, c.ids,
  NULL) x WHERE c.k = :r;"
pgbench_script s_fold "SELECT count(*) FROM $CHUNKS c, public.push_fold_prototype(c.ids, array_fill(1, ARRAY[$K]), $hashes, $blobs,
  $promises, NULL) x WHERE c.k = :r;"
run() { local t; t=$(pgbench_cpu "$N" "$1"); awk -v t="$t" -v n="$N" -v k="$K" -v hz="$hz" 'BEGIN { printf "%.1f", t * 1e6 / hz / n / k }'; }

echo "PostgreSQL CPU per element, $K elements per call over $K of $PARTITIONS partitions, $N calls per variant:"
for r in $(seq "$ROUNDS"); do
  c=$(run "$s_call"); p=$(run "$s_push"); f=$(run "$s_fold")
  awk -v r="$r" -v c="$c" -v p="$p" -v f="$f" 'BEGIN {
    printf "round %d: call %s us, call+log_push_multi %s us, call+prototype %s us  (log_push_multi alone %.1f us, prototype alone %.1f us)\n",
           r, c, p, f, p - c, f - c }'
done
