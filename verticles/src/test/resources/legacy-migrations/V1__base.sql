-- queen-vertx base schema: the schema itself (Flyway creates it), extensions and the cluster-wide system tables.
-- SQL in this project never hashes and never decodes a segment blob (shared/spec/ARCHITECTURE.md).

CREATE EXTENSION IF NOT EXISTS pgcrypto;

-- Cluster-wide switches shared by every node (maintenance_mode, pop_maintenance_mode), values {"enabled":bool}.
CREATE TABLE IF NOT EXISTS queen.system_state (
  key        text PRIMARY KEY,
  value      jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

INSERT INTO queen.system_state(key, value) VALUES
  ('maintenance_mode', '{"enabled":false}'),
  ('pop_maintenance_mode', '{"enabled":false}')
ON CONFLICT (key) DO NOTHING;

-- Cluster singletons (ENGINE.md §9.3): one node at a time runs a task, elected by a fenced lease row.
CREATE TABLE IF NOT EXISTS queen.maintenance_leases (
  task             text PRIMARY KEY,
  period_ms        bigint NOT NULL,
  next_due_at      timestamptz NOT NULL DEFAULT now(),
  lease_until      timestamptz,
  holder           text,
  fence            bigint NOT NULL DEFAULT 0,
  last_start_at    timestamptz,
  last_end_at      timestamptz,
  last_duration_ms bigint,
  runs             bigint NOT NULL DEFAULT 0,
  enabled          boolean NOT NULL DEFAULT true
);
