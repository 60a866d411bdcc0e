-- =====================================================================================================================
-- V21: key-value state, timers and locks (issue 36), in the database of the log, so a transaction can commit a push,
-- an ack, a counter and a timer together. Tables, a sequence and indexes only; the functions are in R__96_kv.sql,
-- R__97_timers.sql and R__98_locks.sql; the wire contract is docs/design/queen2-contract.md.
--
-- Every table is keyed by NAMES (tenant, namespace, key / tenant, queue, timer key / tenant, lock name) and names no
-- partition id: a timer's queue and partition are created when it fires, as a push creates them, and deleting a queue
-- or a partition never has to look at these tables.
--
-- Name columns carry COLLATE "C": every function that takes several rows of one of these tables takes them in
-- ascending byte order (the lock order), and a listing's keyset cursor means the same thing on every machine whatever
-- the operating system's locale. Listings therefore come back in byte order.
--
-- Lock order, extending ENGINE §1.4 (R__10_common.sql): kv_lock_fences -> kv_entries -> timers -> queues ->
-- log_partitions -> log_consumers -> insert-only tables. A transaction with riders runs its kv operations, then its
-- timer operations, and only then its pushes and acks.
-- =====================================================================================================================

-- Versions of key-value entries and the fencing tokens of locks. CACHE 1 (the default) on purpose: values are then
-- handed out in increasing order across every session, which is what makes a version written under a row lock higher
-- than every version written before that lock was granted (R__96_kv.sql, R__98_locks.sql). Gaps are expected.
CREATE SEQUENCE queen.kv_version_seq AS bigint START 1;

-- One row per (tenant, namespace, key). value is the JSON text as the broker received it, like log_dlq.payload (V19):
-- jsonb refuses some JSON the log accepts ("\u0000", 1e1000000). expires_at NULL = forever; an entry whose expires_at
-- is at or before now() is gone for every reader even before the sweep deletes it.
CREATE TABLE queen.kv_entries (
    tenant_id  uuid NOT NULL,
    namespace  text COLLATE "C" NOT NULL,
    key        text COLLATE "C" NOT NULL,
    value      text NOT NULL,
    version    bigint NOT NULL,
    expires_at timestamptz,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, namespace, key)
) WITH (fillfactor = 70, autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 500,
        vacuum_truncate = off);

-- The expiry sweep's only index. Partial: a forever key costs nothing here. value, version and updated_at are not
-- indexed, so a counter's update (incr keeps expires_at) stays heap-only.
CREATE INDEX kv_entries_expiry ON queen.kv_entries (expires_at) WHERE expires_at IS NOT NULL;

-- Scheduled messages: one row per (tenant, queue, timer key) until its message is pushed, then none. due_at is the
-- time the client asked for (deliverAt); visible_at is when the sweep may take it, due_at unless a failed fire pushed
-- it back. payload is the message's JSON as bytes, encrypted (envelope) when encrypted is set.
CREATE TABLE queen.timers (
    tenant_id      uuid NOT NULL,
    queue          text COLLATE "C" NOT NULL,
    timer_key      text COLLATE "C" NOT NULL,
    partition      text NOT NULL,
    due_at         timestamptz NOT NULL,
    visible_at     timestamptz NOT NULL,
    transaction_id text NOT NULL,
    message_id     uuid NOT NULL,
    payload        bytea NOT NULL,
    encrypted      boolean NOT NULL DEFAULT false,
    producer_sub   text,
    attempts       integer NOT NULL DEFAULT 0,
    last_error     text,
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, queue, timer_key)
) WITH (fillfactor = 90, autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 500,
        vacuum_truncate = off);

-- The claim: due rows in due order, one range scan that stops at the batch size.
CREATE INDEX timers_visible ON queen.timers (visible_at);

-- One row per (tenant, lock name): the lock's fencing counter. Every acquire and renew of the lock locks this row
-- first and draws its token while holding it, so a later holder always has a higher token, across a release, an
-- expiry and the sweep of the permit rows. The permits themselves are kv_entries rows of the namespace 'queen-locks'
-- (key '<name>#<slot>', version = token). expires_at is the latest expiry of any permit granted; a row past it by an
-- hour holds nothing and is swept (tokens come from kv_version_seq, so a re-created row keeps growing them).
CREATE TABLE queen.kv_lock_fences (
    tenant_id  uuid NOT NULL,
    name       text COLLATE "C" NOT NULL,
    last_token bigint NOT NULL DEFAULT 0,
    expires_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, name)
) WITH (fillfactor = 70);

CREATE INDEX kv_lock_fences_expiry ON queen.kv_lock_fences (expires_at);
