#!/usr/bin/env bash
# PostgreSQL CPU per element of a push whose items are spread over many partitions (run-all.sh's part10000 row: every
# item lands in a partition of its own, so every item is its own element of queen.log_push_multi), measured without
# the broker or HTTP. pgbench sends, on one connection, N calls of K elements over K distinct partitions (a chunk of
# the queue's PARTITIONS partitions), each call its own transaction, in these variants (VARIANTS picks and orders them):
#   call    the call's own cost: fetch a chunk of partition ids and names, make K fresh 16-byte hashes
#   update  that, plus the per-partition counter update alone (last_offset + 1 for each of the K partitions): the
#           floor of any storage layout that allocates each partition's offsets in a row of PostgreSQL
#   push    that, plus queen.log_push_multi with K hinted elements on its fast path (today's write: the partitions'
#           push locks, check, update them, one log_segments and one log_txns row per element)
# and the partition-owner prototype (docs/design/partition-owners.md: offsets allocated by the slot's owner, writes
# that only insert, an epoch per slot checked under a shared advisory lock). Its functions and tables live in a
# scratch schema this script creates and drops (nothing of sql/src/main); they write a second queue's partitions:
#   owned               per call one pg_advisory_xact_lock_shared per slot touched (a partition hashes into one of
#                       SLOTS slots), one read of the slot table (slot -> epoch, owner) checked against the epochs the
#                       call passes, then one queen.log_segments and one queen.log_txns row per element at the offsets
#                       the call passes (the real tables and their primary keys); no update of log_partitions
#   owned-check         owned plus the design's contiguity check (each partition's last segment must end at base - 1:
#                       one backward probe of the segments' primary key per element) before the inserts
#   owned-onerow        owned with the hashes inside the segment row: one row per element in a scratch copy of
#                       log_segments with a `hashes` column and the same primary key (one heap row and one index
#                       entry per element instead of two)
#   owned-onerow-check  owned-onerow plus the contiguity check on that table
# and two writes without owners, on the same one-row table (each on a queue of its own, so nobody else's offsets are in
# its partitions):
#   tail-onerow         per call today's push locks (pg_advisory_xact_lock(20821, hashtext(partition id)), each key once,
#                       ascending), then ONE statement: per element the partition's tail by one backward probe of the
#                       primary key (ORDER BY base_offset DESC LIMIT 1 -> end_offset; with no segment the partition's
#                       log_start - 1, read only then) and one row inserted at tail + 1. No update of log_partitions:
#                       the lock serialises the writers of a partition, the statement started after it reads the last
#                       holder's row (offsets stay dense on any number of connections)
#   tail-onerow-read    tail-onerow plus what the real write must read per call: each element's partition row and its
#                       queue row (the partition still exists: QSTALE; the queue's encryption flag: QCRYPT), the floor
#                       taken from that row
#   locked-onerow       owned-onerow's insert at the caller's offsets (on owned's partitions) under today's push
#                       locks instead of the slot locks and the epoch read: what tail-onerow costs without its probe
#   onerow              today's write with the hashes inside the segment row: the push locks, then one statement that
#                       reads the partitions and their queues, checks (log_push_multi's fast-path test), updates
#                       log_partitions (last_offset + n, last_write_at, the watermarks) and inserts one row per element
# The owned variants take their chunks round-robin and pass dense offsets (call n writes chunk n mod chunks at offset
# n div chunks + 1, the counter kept by the script across runs), so no per-partition counter is read or written.
# The figure is the CPU the database spent (the pgbench backend's, read from the postmaster's children's CPU once the
# backend has exited), divided by N x K; with it the WAL the run wrote (pg_stat_wal: bytes and full-page images per
# element). After seeding it vacuums the queen tables the variants touch; before each run it issues a CHECKPOINT
# (CHECKPOINT=0 turns it off), so every run pays the full-page images of the pages it is first to touch alike,
# wherever the checkpointer happens to be. Background work (WAL writer, checkpointer, autovacuum) is not in the
# figure. Run the variants a few times and compare minima and medians; the machine's noise moves them less than it
# moves msg/s. With CLIENTS > 1 (say 8, the part rows' clients) each variant runs DURATION seconds on CLIENTS
# connections instead, and the figure is the CPU of ALL of PostgreSQL's processes (backends, WAL writer, checkpointer,
# autovacuum: the scope of run-all.sh's PostgreSQL figure) over the elements written, so the background work is in it;
# the -check variants need one writer per partition in offset order and are refused then. At the end the script checks
# that the owned variants' (and locked-onerow's) segments tile each partition from offset 0 with no gap or overlap
# (and, for owned and owned-check, one log_txns row per segment; with CLIENTS > 1 their offsets are not dense and are
# not checked), and in both modes that push's, tail-onerow's, tail-onerow-read's and onerow's segments tile each of
# their partitions from 0 (push's and onerow's up to the partition's last_offset). Not part of the test suite.
#
# Needs: a PostgreSQL on this machine with the queen schema (start a node against it once), psql and pgbench
# (Debian's postgresql-client), and read access to the data directory's postmaster.pid (run as root or postgres).
# A single node's embedded PostgreSQL will do: start the broker jar with QUEEN_DATA_DIR=<a temp dir>,
# QUEEN_CLUSTER=false, PORT and QUEEN_EMBEDDED_PG_PORT free ports; its password is in $QUEEN_DATA_DIR/pg-password.
# Usage: PGHOST=127.0.0.1 PGPORT=5432 PGUSER=postgres PGPASSWORD=... PGDATABASE=postgres deploy/bench/spread-cost.sh [N]
# Knobs: N (500 calls per variant and round), ROUNDS (3), PARTITIONS (10000), K (100 elements per call, the batch of
# one part10000 request), SLOTS (256), CHECKPOINT (1), CLIENTS (1), DURATION (15 s, with CLIENTS > 1), VARIANTS ("call
# update push owned owned-check owned-onerow owned-onerow-check"; without the -check ones when CLIENTS > 1; the
# tail-onerow, tail-onerow-read, locked-onerow and onerow variants only when named).
# Everything it creates (the queues spreadcost-<pid>, spreadcost-<pid>-owned, -tail, -tailread and -onerow, the chunk
# table public.spreadcost_<pid>, the schema spreadcost_<pid>) is deleted at the end.
set -euo pipefail

N=${1:-500}
ROUNDS=${ROUNDS:-3}
PARTITIONS=${PARTITIONS:-10000}
K=${K:-100}
SLOTS=${SLOTS:-256}
CHECKPOINT=${CHECKPOINT:-1}
CLIENTS=${CLIENTS:-1}
DURATION=${DURATION:-15}
if [ "$CLIENTS" -gt 1 ]; then
  VARIANTS=${VARIANTS:-call update push owned owned-onerow}
else
  VARIANTS=${VARIANTS:-call update push owned owned-check owned-onerow owned-onerow-check}
fi
QUEUE="spreadcost-$$"
CHUNKS="public.spreadcost_$$"
OQUEUE="spreadcost-$$-owned"
TQUEUE="spreadcost-$$-tail"       # tail-onerow's partitions
TRQUEUE="spreadcost-$$-tailread"  # tail-onerow-read's
RQUEUE="spreadcost-$$-onerow"     # onerow's
S="spreadcost_$$"   # the prototype's scratch schema
[ "$PARTITIONS" -ge "$K" ] || { echo "PARTITIONS ($PARTITIONS) must be at least K ($K)" >&2; exit 2; }
for v in $VARIANTS; do
  case $v in call|update|push|owned|owned-check|owned-onerow|owned-onerow-check|tail-onerow|tail-onerow-read|locked-onerow|onerow) ;;
    *) echo "unknown variant $v" >&2; exit 2 ;; esac
  if [ "$CLIENTS" -gt 1 ] && [[ $v == *-check ]]; then
    echo "$v needs one writer per partition in offset order: CLIENTS=1 only" >&2; exit 2
  fi
done
# shellcheck source=pg-cpu.sh
. "$(dirname "$0")/pg-cpu.sh"

cleanup() {
  psql_q "DROP TABLE IF EXISTS $CHUNKS" > /dev/null 2>&1 || true
  psql_q "DROP SCHEMA IF EXISTS $S CASCADE" > /dev/null 2>&1 || true
  psql_q "SELECT queen.delete_queue(NULL, '$QUEUE')" > /dev/null 2>&1 || true
  for q in "$OQUEUE" "$TQUEUE" "$TRQUEUE" "$RQUEUE"; do
    psql_q "SELECT queen.delete_queue(NULL, '$q')" > /dev/null 2>&1 || true
  done
  rm -f "${scripts[@]}" "$pgbench_out" 2>/dev/null || true
}
scripts=()
trap cleanup EXIT

# The queue's partitions, each with one segment, and the chunks: PARTITIONS / K disjoint sets of K partitions each.
seed_chunks
blobs="array_fill(decode(repeat('a5', 110), 'hex'), ARRAY[$K])"
pgbench_script script_call "SELECT cardinality(c.ids) + cardinality(c.names) + cardinality($hashes) FROM $CHUNKS c WHERE c.k = :r;"
pgbench_script script_update "UPDATE queen.log_partitions p SET last_offset = p.last_offset + 1
  FROM (SELECT unnest(c.ids) AS id, cardinality($hashes) AS h FROM $CHUNKS c WHERE c.k = :r) u WHERE p.id = u.id;"
# A 110-byte blob per element stands for one compressed 200-byte frame (the SQL stores it, never decodes it); the
# promise p_verified = max bigint about the hinted partition keeps every call on the fast path (no dedup probe).
pgbench_script script_push "SELECT count(*) FROM $CHUNKS c, queen.log_push_multi(
  array_fill(NULL::uuid, ARRAY[$K]), array_fill('$QUEUE'::text, ARRAY[$K]), c.names, array_fill(1, ARRAY[$K]),
  $hashes, $blobs, array_fill(9223372036854775807::bigint, ARRAY[$K]), c.ids, c.ids, NULL) x WHERE c.k = :r;"

# The prototype: a second queue (its own partitions, each with its segment 0, so the offsets the owned variants pass
# never meet log_push_multi's), its chunks with each element's slot and epoch, the slot table, the one-row copy of
# log_segments (seeded with the same segment 0 of each partition, its hashes inside) and one function per variant.
scratch=0
case " $VARIANTS " in *" owned"*|*" tail-onerow"*|*" onerow "*|*" locked-onerow "*) scratch=1 ;; esac
if [ "$scratch" = 1 ]; then
  psql_q "CREATE SCHEMA $S"
  pq=$QUEUE pc=$CHUNKS
  QUEUE=$OQUEUE CHUNKS="$S.chunks";     seed_chunks
  # tail-onerow, tail-onerow-read and onerow: a queue each, seeded like the others (a segment 0 per partition)
  QUEUE=$TQUEUE CHUNKS="$S.tchunks";    seed_chunks
  QUEUE=$TRQUEUE CHUNKS="$S.trchunks";  seed_chunks
  QUEUE=$RQUEUE CHUNKS="$S.rchunks";    seed_chunks
  QUEUE=$pq CHUNKS=$pc
  psql -X -q -v ON_ERROR_STOP=1 <<SQL
ALTER TABLE $S.chunks ADD COLUMN slots integer[], ADD COLUMN epochs bigint[];
UPDATE $S.chunks SET slots = ARRAY(SELECT (hashtext(x::text) & 2147483647) % $SLOTS FROM unnest(ids) WITH ORDINALITY u(x, o) ORDER BY o),
                     epochs = array_fill(1::bigint, ARRAY[$K]);
CREATE TABLE $S.slot_owners (slot integer PRIMARY KEY, epoch bigint NOT NULL, node text NOT NULL,
                             since timestamptz NOT NULL DEFAULT now());
INSERT INTO $S.slot_owners (slot, epoch, node) SELECT s, 1, 'spread-cost' FROM generate_series(0, $SLOTS - 1) s;
CREATE TABLE $S.log_segments (LIKE queen.log_segments INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES INCLUDING STORAGE);
ALTER TABLE $S.log_segments ADD COLUMN hashes bytea NOT NULL;
ALTER TABLE $S.log_segments ALTER COLUMN hashes SET STORAGE EXTERNAL;
INSERT INTO $S.log_segments (partition_id, base_offset, end_offset, created_at, blob, hashes)
SELECT s.partition_id, s.base_offset, s.end_offset, s.created_at, s.blob, t.hashes
FROM queen.log_segments s JOIN queen.log_txns t ON t.partition_id = s.partition_id AND t.base_offset = s.base_offset
WHERE s.partition_id IN (SELECT unnest(ids) FROM $S.chunks UNION ALL SELECT unnest(ids) FROM $S.tchunks
                         UNION ALL SELECT unnest(ids) FROM $S.trchunks UNION ALL SELECT unnest(ids) FROM $S.rchunks);
ANALYZE $S.chunks; ANALYZE $S.tchunks; ANALYZE $S.trchunks; ANALYZE $S.rchunks; ANALYZE $S.slot_owners;
ANALYZE $S.log_segments;
SQL
fi
# Earlier runs leave dead rows and index entries behind (deleted queues, the update variant's row versions): vacuum
# what the variants read and write, so every run of the script starts from the same clean tables.
psql_q "VACUUM (ANALYZE) queen.log_partitions, queen.queues, queen.log_segments, queen.log_txns" > /dev/null

# owned_fn NAME ONEROW CHECK: the prototype's write. One row back (elements written, their created_at): the owner
# allocated the offsets, so it needs nothing per element from PostgreSQL.
owned_fn() {
  local name=$1 onerow=$2 check=$3 seg=queen.log_segments contig="" insert
  [ "$onerow" = 1 ] && seg=$S.log_segments
  if [ "$check" = 1 ]; then
    contig="
    -- No fork and no gap whatever the epochs say: each partition's last segment ends right before the new one.
    SELECT count(*) INTO v_bad
    FROM unnest(p_pids, p_bases) u(pid, base)
    LEFT JOIN LATERAL (SELECT s.end_offset FROM $seg s WHERE s.partition_id = u.pid
                       ORDER BY s.base_offset DESC LIMIT 1) t ON true
    WHERE t.end_offset IS DISTINCT FROM u.base - 1;
    IF v_bad > 0 THEN
        RAISE EXCEPTION 'not contiguous: % of % elements', v_bad, cardinality(p_pids);
    END IF;"
  fi
  if [ "$onerow" = 1 ]; then
    insert="INSERT INTO $seg (partition_id, base_offset, end_offset, created_at, blob, hashes)
    SELECT u.pid, u.base, u.base + u.c - 1, v_now, u.b, u.h
    FROM unnest(p_pids, p_bases, p_counts, p_hashes, p_blobs) u(pid, base, c, h, b);"
  else
    insert="WITH x AS (SELECT * FROM unnest(p_pids, p_bases, p_counts, p_hashes, p_blobs) u(pid, base, c, h, b)),
    seg AS (INSERT INTO queen.log_segments (partition_id, base_offset, end_offset, created_at, blob)
            SELECT x.pid, x.base, x.base + x.c - 1, v_now, x.b FROM x)
    INSERT INTO queen.log_txns (partition_id, base_offset, end_offset, created_at, hashes)
    SELECT x.pid, x.base, x.base + x.c - 1, v_now, x.h FROM x;"
  fi
  psql -X -q -v ON_ERROR_STOP=1 <<SQL
CREATE FUNCTION $S.$name(p_pids uuid[], p_bases bigint[], p_counts integer[], p_hashes bytea[], p_blobs bytea[],
                         p_slots integer[], p_epochs bigint[])
RETURNS TABLE (written integer, created_at timestamptz)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS \$\$
#variable_conflict use_column
DECLARE
    v_now timestamptz := clock_timestamp();
    v_bad integer;
    v_n   integer;
BEGIN
    -- The fence: a shared advisory lock per slot touched, in slot order (memory only: no WAL, no row version). A
    -- takeover takes it exclusively, so it waits for this write and this write sees its epoch.
    PERFORM pg_advisory_xact_lock_shared(20822, l.s) FROM (SELECT DISTINCT s FROM unnest(p_slots) s ORDER BY 1) l;
    -- The epoch check: one primary-key read per slot touched.
    SELECT count(*) INTO v_bad
    FROM (SELECT DISTINCT s, e FROM unnest(p_slots, p_epochs) u(s, e)) u
    LEFT JOIN $S.slot_owners o ON o.slot = u.s
    WHERE o.epoch IS DISTINCT FROM u.e;
    IF v_bad > 0 THEN
        RAISE EXCEPTION 'not the owner: % slot(s) of this call have another epoch', v_bad;
    END IF;$contig
    $insert
    GET DIAGNOSTICS v_n = ROW_COUNT;
    written := v_n;
    created_at := v_now;
    RETURN NEXT;
END;
\$\$;
SQL
}

# locked_fn: owned-onerow's insert at the caller's offsets under today's push locks (exclusive, one per partition,
# ascending) instead of the slot locks and the epoch read; owned_fn's signature, slots and epochs unused.
locked_fn() {
  psql -X -q -v ON_ERROR_STOP=1 <<SQL
CREATE FUNCTION $S.push_locked(p_pids uuid[], p_bases bigint[], p_counts integer[], p_hashes bytea[], p_blobs bytea[],
                               p_slots integer[], p_epochs bigint[])
RETURNS TABLE (written integer, created_at timestamptz)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS \$\$
#variable_conflict use_column
DECLARE
    v_now timestamptz;
    v_n   integer;
BEGIN
    PERFORM pg_advisory_xact_lock(20821, l.k)
    FROM (SELECT DISTINCT hashtext(x::text) AS k FROM unnest(p_pids) x ORDER BY 1) l;
    v_now := clock_timestamp();
    INSERT INTO $S.log_segments (partition_id, base_offset, end_offset, created_at, blob, hashes)
    SELECT u.pid, u.base, u.base + u.c - 1, v_now, u.b, u.h
    FROM unnest(p_pids, p_bases, p_counts, p_hashes, p_blobs) u(pid, base, c, h, b);
    GET DIAGNOSTICS v_n = ROW_COUNT;
    written := v_n;
    created_at := v_now;
    RETURN NEXT;
END;
\$\$;
SQL
}

# owned_script VAR FUNCTION: the pgbench script of an owned variant; :n (given with -D) counts the calls written to
# the variant's table so far.
# With CLIENTS > 1, client c's call n is the run's call g = n x CLIENTS + c, at offset :base + g div chunks (each run
# its own range of offsets: unique, not dense, so no -check variant and no tiling check then).
owned_script() {
  local f head
  f=$(mktemp)
  scripts+=("$f")
  if [ "$CLIENTS" -gt 1 ]; then
    head=$(printf '\\set g :n * %d + :client_id\n\\set r :g %% %d\n\\set o :base + :g / %d\n\\set n :n + 1' \
           "$CLIENTS" "$chunks" "$chunks")
  else
    head=$(printf '\\set r :n %% %d\n\\set o :n / %d + 1\n\\set n :n + 1' "$chunks" "$chunks")
  fi
  printf '%s\n%s\n' "$head" \
    "SELECT x.written FROM $S.chunks c, $S.$2(c.ids, array_fill(:o::bigint, ARRAY[$K]), array_fill(1, ARRAY[$K]),
  $hashes, $blobs, c.slots, c.epochs) x WHERE c.k = :r;" > "$f"
  eval "$1=$f"
}
case " $VARIANTS " in *" owned"*|*" locked-onerow "*)
  owned_fn push_owned 0 0;        owned_script script_owned push_owned
  owned_fn push_owned_check 0 1;  owned_script script_owned_check push_owned_check
  owned_fn push_onerow 1 0;       owned_script script_owned_onerow push_onerow
  owned_fn push_onerow_check 1 1; owned_script script_owned_onerow_check push_onerow_check
  locked_fn;                      owned_script script_locked_onerow push_locked
  ;;
esac
# tail_fn NAME READ: the write without owners. The push locks first (their own statement: a statement started after
# them sees the last holder's committed row), then ONE statement per call: the tail of each element's partition by a
# backward probe of the primary key (the partition's log_start - 1 when it has no segment: retention deletes segments
# and moves log_start in one transaction) and the insert at tail + 1. READ=1 also reads each element's partition and
# queue rows (what the real write must check: the partition still exists, the queue's encryption flag) and takes the
# floor from that row. Elements of a call are distinct partitions here (the real write would add a running sum per
# partition). Raises when fewer rows than elements were written (a partition gone, a plaintext frame refused).
tail_fn() {
  local name=$1 read=$2 from tail
  if [ "$read" = 1 ]; then
    from="FROM unnest(p_pids, p_counts, p_hashes, p_blobs) u(pid, c, h, b)
    JOIN queen.log_partitions p ON p.id = u.pid
    JOIN queen.queues q ON q.id = p.queue_id
    CROSS JOIN LATERAL (SELECT COALESCE((SELECT s.end_offset FROM $S.log_segments s WHERE s.partition_id = u.pid
                                         ORDER BY s.base_offset DESC LIMIT 1), p.log_start - 1) AS tail) t
    WHERE NOT q.encryption_enabled"
  else
    from="FROM unnest(p_pids, p_counts, p_hashes, p_blobs) u(pid, c, h, b)
    CROSS JOIN LATERAL (SELECT COALESCE((SELECT s.end_offset FROM $S.log_segments s WHERE s.partition_id = u.pid
                                         ORDER BY s.base_offset DESC LIMIT 1),
                                        (SELECT p.log_start - 1 FROM queen.log_partitions p WHERE p.id = u.pid)) AS tail) t"
  fi
  psql -X -q -v ON_ERROR_STOP=1 <<SQL
CREATE FUNCTION $S.$name(p_pids uuid[], p_counts integer[], p_hashes bytea[], p_blobs bytea[])
RETURNS TABLE (written integer, created_at timestamptz)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS \$\$
#variable_conflict use_column
DECLARE
    v_now timestamptz;
    v_n   integer;
BEGIN
    -- Today's push locks, each key once, ascending: every writer of these partitions holds them.
    PERFORM pg_advisory_xact_lock(20821, l.k)
    FROM (SELECT DISTINCT hashtext(x::text) AS k FROM unnest(p_pids) x ORDER BY 1) l;
    v_now := clock_timestamp();
    INSERT INTO $S.log_segments (partition_id, base_offset, end_offset, created_at, blob, hashes)
    SELECT u.pid, t.tail + 1, t.tail + u.c, v_now, u.b, u.h
    $from;
    GET DIAGNOSTICS v_n = ROW_COUNT;
    IF v_n <> cardinality(p_pids) THEN
        RAISE EXCEPTION 'QSTALE % of % elements written', v_n, cardinality(p_pids);
    END IF;
    written := v_n;
    created_at := v_now;
    RETURN NEXT;
END;
\$\$;
SQL
}

# onerow_fn: today's fast path (log_push_multi's one statement after the push locks: read the partitions and their
# queues, check, update log_partitions, insert) with the hashes inside the segment row instead of a log_txns row.
onerow_fn() {
  psql -X -q -v ON_ERROR_STOP=1 <<SQL
CREATE FUNCTION $S.push_onerow_counter(p_pids uuid[], p_counts integer[], p_hashes bytea[], p_blobs bytea[],
                                       p_verified bigint[])
RETURNS TABLE (written integer, created_at timestamptz)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS \$\$
#variable_conflict use_column
DECLARE
    v_n   integer := cardinality(p_pids);
    v_now timestamptz;
    v_w   integer;
BEGIN
    PERFORM pg_advisory_xact_lock(20821, l.k)
    FROM (SELECT DISTINCT hashtext(x::text) AS k FROM unnest(p_pids) x ORDER BY 1) l;
    v_now := clock_timestamp();
    WITH u AS (
        SELECT * FROM unnest(p_pids, p_counts, p_hashes, p_blobs, p_verified) WITH ORDINALITY AS u(pid, c, h, b, ver, ord)
    ), v AS (
        SELECT u.*, k.id, k.lo, k.ts, k.win, k.enc
        FROM u
        LEFT JOIN (SELECT p.id, p.last_offset AS lo, p.txns_start AS ts, q.dedup_window_seconds AS win,
                          q.encryption_enabled AS enc
                   FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
                   WHERE p.id = ANY (p_pids)) k ON k.id = u.pid
    ), chk AS MATERIALIZED (
        SELECT count(DISTINCT v.pid) = v_n
               AND bool_and(COALESCE(v.id IS NOT NULL AND NOT v.enc
                                     AND v.c >= 1 AND v.h IS NOT NULL AND octet_length(v.h) = 16 * v.c
                                     AND v.b IS NOT NULL
                                     AND (COALESCE(v.win, 0) <= 0 OR v.lo <= GREATEST(v.ver, v.ts - 1)),
                                     false)) AS ok
        FROM v
    ), upd AS (
        UPDATE queen.log_partitions p SET
            last_offset    = p.last_offset + v.c,
            last_write_at  = CASE WHEN p.last_write_at < v_now - interval '10 seconds' THEN v_now ELSE p.last_write_at END,
            oldest_live_at = COALESCE(p.oldest_live_at, v_now),
            oldest_txn_at  = COALESCE(p.oldest_txn_at, v_now)
        FROM v, chk
        WHERE chk.ok AND p.id = v.pid
        RETURNING p.id, p.last_offset AS end_off
    ), x AS (
        SELECT v.pid, v.c, v.h, v.b, upd.end_off - v.c + 1 AS base, upd.end_off
        FROM v JOIN upd ON upd.id = v.pid
    )
    INSERT INTO $S.log_segments (partition_id, base_offset, end_offset, created_at, blob, hashes)
    SELECT x.pid, x.base, x.end_off, v_now, x.b, x.h FROM x;
    GET DIAGNOSTICS v_w = ROW_COUNT;
    IF v_w <> v_n THEN
        RAISE EXCEPTION 'check failed or partitions gone: % of % elements written', v_w, v_n;
    END IF;
    written := v_w;
    created_at := v_now;
    RETURN NEXT;
END;
\$\$;
SQL
}
case " $VARIANTS " in *" tail-onerow"*|*" onerow "*)
  tail_fn push_tail 0
  tail_fn push_tail_read 1
  onerow_fn
  # A random chunk per call, like push: two connections that draw the same chunk serialise on its push locks.
  chunks_main=$chunks
  chunks=$(psql_q "SELECT count(*) FROM $S.tchunks")
  pgbench_script script_tail "SELECT x.written FROM $S.tchunks c, $S.push_tail(c.ids, array_fill(1, ARRAY[$K]),
  $hashes, $blobs) x WHERE c.k = :r;"
  pgbench_script script_tail_read "SELECT x.written FROM $S.trchunks c, $S.push_tail_read(c.ids, array_fill(1, ARRAY[$K]),
  $hashes, $blobs) x WHERE c.k = :r;"
  pgbench_script script_onerow "SELECT x.written FROM $S.rchunks c, $S.push_onerow_counter(c.ids, array_fill(1, ARRAY[$K]),
  $hashes, $blobs, array_fill(9223372036854775807::bigint, ARRAY[$K])) x WHERE c.k = :r;"
  chunks=$chunks_main
  ;;
esac
calls_two=0   # calls written so far by the owned variants to queen.log_segments/log_txns
calls_one=0   # ... and to the one-row table

wal() { psql_q "SELECT wal_bytes::bigint || ' ' || wal_fpi FROM pg_stat_wal"; }
# tree_cpu: clock ticks of the whole PostgreSQL (the postmaster, its live children: backends, WAL writer, checkpointer,
# autovacuum..., and its reaped children), for CLIENTS > 1.
tree_cpu() {
  local total=0 p s
  for p in $postmaster $(pgrep -P "$postmaster"); do
    s=$(cat "/proc/$p/stat" 2>/dev/null) || continue
    s=${s##*) }
    # shellcheck disable=SC2086
    set -- $s   # $1 is field 3 (state): utime ${12}, stime ${13}, cutime ${14}, cstime ${15}
    if [ "$p" = "$postmaster" ]; then total=$((total + ${12} + ${13} + ${14} + ${15})); else total=$((total + ${12} + ${13})); fi
  done
  echo "$total"
}

run() { # variant -> "us_per_element wal_bytes_per_element fpi_per_1000_elements"
  local v=$1 script args=() ticks w0 w1
  case $v in
    call) script=$script_call ;;
    update) script=$script_update ;;
    push) script=$script_push ;;
    owned) script=$script_owned; args=(-D "n=$calls_two") ;;
    owned-check) script=$script_owned_check; args=(-D "n=$calls_two") ;;
    owned-onerow) script=$script_owned_onerow; args=(-D "n=$calls_one") ;;
    owned-onerow-check) script=$script_owned_onerow_check; args=(-D "n=$calls_one") ;;
    tail-onerow) script=$script_tail ;;
    tail-onerow-read) script=$script_tail_read ;;
    onerow) script=$script_onerow ;;
    locked-onerow) script=$script_locked_onerow; args=(-D "n=$calls_one") ;;
  esac
  [ "$CHECKPOINT" = 1 ] && psql_q "CHECKPOINT" > /dev/null
  w0=$(wal)
  sleep 0.3   # the backends of those psql calls exit before the measured window starts
  if [ "$CLIENTS" -gt 1 ]; then
    local c0 c1 n
    c0=$(tree_cpu)
    "$pgbench" -n -M prepared -c "$CLIENTS" -j 2 -T "$DURATION" -f "$script" -D n=0 -D "base=$2" > "$pgbench_out" 2>&1 \
      || { cat "$pgbench_out" >&2; exit 1; }
    sleep 0.3
    c1=$(tree_cpu)
    n=$(awk '/number of transactions actually processed/ { print $NF }' "$pgbench_out")
    ticks=$((c1 - c0))
  else
    local n=$N
    ticks=$(pgbench_cpu "$N" "$script" "${args[@]}")
  fi
  w1=$(wal)
  awk -v t="$ticks" -v n="$n" -v k="$K" -v hz="$hz" -v w0="$w0" -v w1="$w1" 'BEGIN {
    split(w0, a, " "); split(w1, b, " ")
    printf "%.1f %.0f %.1f", t * 1e6 / hz / n / k, (b[1] - a[1]) / n / k, (b[2] - a[2]) * 1000 / n / k }'
}

if [ "$CLIENTS" -gt 1 ]; then
  echo "PostgreSQL CPU per element (all of PostgreSQL's processes), $K elements per call over $K of $PARTITIONS partitions"
  echo "($SLOTS slots), $CLIENTS connections for $DURATION s per variant and round, CHECKPOINT=$CHECKPOINT,"
else
  echo "PostgreSQL CPU per element, $K elements per call over $K of $PARTITIONS partitions ($SLOTS slots), $N calls per"
  echo -n "variant and round, CHECKPOINT=$CHECKPOINT, "
fi
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg):"
results=$(mktemp)
scripts+=("$results")
for r in $(seq "$ROUNDS"); do
  line="round $r:"
  for v in $VARIANTS; do
    base=$((r * 1000000000)); [ "$v" = locked-onerow ] && base=$((base + 500000000))
    read -r us wb fpi <<< "$(run "$v" "$base")"
    case $v in owned|owned-check) calls_two=$((calls_two + N)) ;; owned-onerow*|locked-onerow) calls_one=$((calls_one + N)) ;; esac
    echo "$r $v $us $wb $fpi" >> "$results"
    line="$line $v $us us ($wb B WAL, $fpi FPI/1000);"
  done
  echo "$line load $(cut -d' ' -f1 /proc/loadavg)"
done
# Summary: per variant, min and median over the rounds of the total and of the variant alone (minus call's median).
echo "summary over $ROUNDS rounds (us per element; alone = minus the median of call; WAL bytes and FPIs per 1000 elements, medians):"
awk -v variants="$VARIANTS" '
  { us[$2] = us[$2] " " $3; wb[$2] = wb[$2] " " $4; fp[$2] = fp[$2] " " $5 }
  function med(list,   a, n, i, j, t) {
    n = split(list, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  function mn(list,   a, n, i, m) { n = split(list, a, " "); m = a[1]; for (i = 2; i <= n; i++) if (a[i] + 0 < m + 0) m = a[i]; return m }
  END {
    c = ("call" in us) ? med(us["call"]) : 0
    printf "%-20s %8s %8s %8s %8s %10s %10s   rounds\n", "variant", "min", "median", "alone", "alone", "WAL B", "FPI/1000"
    printf "%-20s %8s %8s %8s %8s %10s %10s\n", "", "", "", "min", "median", "", ""
    nv = split(variants, vs, " ")
    for (i = 1; i <= nv; i++) { v = vs[i]
      printf "%-20s %8.1f %8.1f %8.1f %8.1f %10.0f %10.1f  %s\n", v, mn(us[v]), med(us[v]), mn(us[v]) - c, med(us[v]) - c,
             med(wb[v]), med(fp[v]), us[v] }
  }' "$results"

# What the variants wrote: per partition, segments from offset 0 with no gap and no overlap.
tiles() { # table chunk-table -> "segments partitions_not_tiled": segments past each partition's seeded segment 0, and
          # partitions with a segment out of place (a gap or an overlap before it)
  psql_q "SELECT (count(*) - count(DISTINCT partition_id))::text || ' ' || count(DISTINCT partition_id) FILTER (WHERE NOT ok)
          FROM (SELECT partition_id, (base_offset = COALESCE(lag(end_offset) OVER w + 1, 0)) AS ok FROM $1
                WHERE partition_id IN (SELECT unnest(ids) FROM $2)
                WINDOW w AS (PARTITION BY partition_id ORDER BY base_offset)) s"
}
counter_off() { # table chunk-table -> partitions whose last_offset is not their last segment's end
  psql_q "SELECT count(*) FROM queen.log_partitions p WHERE p.id IN (SELECT unnest(ids) FROM $2)
            AND p.last_offset IS DISTINCT FROM (SELECT max(s.end_offset) FROM $1 s WHERE s.partition_id = p.id)"
}
failed=0
case " $VARIANTS " in *" push "*)
  read -r segs bad <<< "$(tiles queen.log_segments "$CHUNKS")"
  off=$(counter_off queen.log_segments "$CHUNKS")
  echo "check: push wrote $segs segments; partitions out of place: $bad; last_offset not at the tail: $off"
  [ "$bad" = 0 ] && [ "$off" = 0 ] || failed=1
  ;;
esac
for t in "tail-onerow tchunks" "tail-onerow-read trchunks" "onerow rchunks"; do
  read -r v c <<< "$t"
  case " $VARIANTS " in *" $v "*) ;; *) continue ;; esac
  read -r segs bad <<< "$(tiles "$S.log_segments" "$S.$c")"
  line="check: $v wrote $segs segments; partitions out of place: $bad"
  if [ "$v" = onerow ]; then
    off=$(counter_off "$S.log_segments" "$S.$c")
    line="$line; last_offset not at the tail: $off"
    [ "$off" = 0 ] || failed=1
  fi
  echo "$line"
  [ "$bad" = 0 ] || failed=1
done
[ "$failed" = 0 ] || { echo "a variant wrote a gap or an overlap" >&2; exit 1; }

# The owned variants (and locked-onerow, on the same partitions): dense offsets with one connection only.
[ "$CLIENTS" -gt 1 ] && exit 0
case " $VARIANTS " in *" owned"*|*" locked-onerow "*)
  ownedtiles() { # table -> "segments partitions_not_tiled"
    psql_q "SELECT count(*)::text || ' ' || count(*) FILTER (WHERE NOT ok)
            FROM (SELECT (base_offset = COALESCE(lag(end_offset) OVER w + 1, 0)) AS ok FROM $1
                  WHERE partition_id IN (SELECT unnest(ids) FROM $S.chunks)
                  WINDOW w AS (PARTITION BY partition_id ORDER BY base_offset)) s"
  }
  read -r segs bad <<< "$(ownedtiles queen.log_segments)"
  txns=$(psql_q "SELECT count(*) FROM queen.log_txns WHERE partition_id IN (SELECT unnest(ids) FROM $S.chunks)")
  read -r segs1 bad1 <<< "$(ownedtiles "$S.log_segments")"
  echo "check: owned/owned-check wrote $((segs - PARTITIONS)) segments ($((txns - PARTITIONS)) log_txns rows), segments out of place: $bad;" \
       "owned-onerow*/locked-onerow: $((segs1 - PARTITIONS)) segments, out of place: $bad1"
  [ "$bad" = 0 ] && [ "$bad1" = 0 ] && [ "$segs" = "$txns" ] || { echo "the owned variants wrote a gap or an overlap" >&2; exit 1; }
  ;;
esac
