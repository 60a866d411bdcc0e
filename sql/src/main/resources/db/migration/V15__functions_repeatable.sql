-- V15: functions move to the repeatable migrations R__*.sql (issue 19).
--
-- Up to V14 every function was created or replaced by a versioned migration, several of them under a versioned name
-- (log_push_multi_v4, log_pop_v2, ..._v1). The repeatable migrations now create each current function once, under
-- its plain name, after every versioned migration. On a database that V1-V14 built, this drops the functions whose
-- name or signature no longer exists (the versioned names, and log_push_multi_v1/_v2/_v3, log_pop_v1 and
-- queue_settings_v1 that had no caller), before the repeatables run. Functions that keep their name and signature
-- (_log_push_into, _log_pop_claim, the helpers, the webhook trigger function) are replaced in place by the
-- repeatables. On a fresh database there is nothing to drop. Tables, rows, cursors and leases are untouched.

DROP FUNCTION IF EXISTS queen.log_push_v1(uuid,text,text,integer,bytea,bytea,bigint);
DROP FUNCTION IF EXISTS queen.log_push_multi_v1(uuid[],text[],text[],integer[],bytea[],bytea[],bigint[]);
DROP FUNCTION IF EXISTS queen.log_segment_at_v1(uuid,bigint);
DROP FUNCTION IF EXISTS queen.log_pop_v1(
    uuid,text,text,text,integer,integer,integer,text,boolean,text,timestamp with time zone,text,text);
DROP FUNCTION IF EXISTS queen.log_ack_v1(uuid,uuid,text,text,bytea[],text[]);
DROP FUNCTION IF EXISTS queen.log_dlq_head_v1(uuid,text,text,bigint,uuid,text,jsonb,text);
DROP FUNCTION IF EXISTS queen.log_renew_lease_v1(uuid,text,integer);
DROP FUNCTION IF EXISTS queen.configure_queue_v1(uuid,text,jsonb,text);
DROP FUNCTION IF EXISTS queen.delete_queue_v1(uuid,text);
DROP FUNCTION IF EXISTS queen.get_queues_v1(uuid);
DROP FUNCTION IF EXISTS queen.get_queue_v1(uuid,text);
DROP FUNCTION IF EXISTS queen.queue_settings_v1(uuid,text);
DROP FUNCTION IF EXISTS queen.list_messages_v1(uuid,jsonb);
DROP FUNCTION IF EXISTS queen.message_detail_v1(uuid,uuid,bytea,bigint);
DROP FUNCTION IF EXISTS queen.log_segments_newest_v1(uuid,bigint,integer);
DROP FUNCTION IF EXISTS queen.delete_message_v1(uuid,uuid,text);
DROP FUNCTION IF EXISTS queen.get_dlq_messages_v1(uuid,jsonb);
DROP FUNCTION IF EXISTS queen.purge_dlq_v1(uuid,text,text);
DROP FUNCTION IF EXISTS queen.dlq_row_v1(uuid,text);
DROP FUNCTION IF EXISTS queen.dlq_newest_for_address_v1(uuid,uuid,text);
DROP FUNCTION IF EXISTS queen.log_dlq_move_v1(uuid,uuid,text,text,bytea,bytea);
DROP FUNCTION IF EXISTS queen.retention_candidates_v1(integer);
DROP FUNCTION IF EXISTS queen.log_retention_step_v1(uuid,integer);
DROP FUNCTION IF EXISTS queen.maintenance_claim_v1(text,text,bigint);
DROP FUNCTION IF EXISTS queen.maintenance_release_v1(text,bigint,boolean);
DROP FUNCTION IF EXISTS queen.resources_overview_v1(uuid);
DROP FUNCTION IF EXISTS queen.resources_namespaces_v1(uuid);
DROP FUNCTION IF EXISTS queen.resources_tasks_v1(uuid);
DROP FUNCTION IF EXISTS queen.consumer_groups_v1(uuid);
DROP FUNCTION IF EXISTS queen.consumer_groups_lagging_v1(uuid,bigint);
DROP FUNCTION IF EXISTS queen.consumer_group_v1(uuid,text);
DROP FUNCTION IF EXISTS queen.status_v1(uuid,text,text,text);
DROP FUNCTION IF EXISTS queen.status_queues_v1(uuid,text,text,text,integer,integer);
DROP FUNCTION IF EXISTS queen.status_queue_v1(uuid,text);
DROP FUNCTION IF EXISTS queen.dlq_redrive_next_v1(uuid);
DROP FUNCTION IF EXISTS queen.dlq_redrive_claim_v1(text,bigint);
DROP FUNCTION IF EXISTS queen.dlq_redrive_record_v1(uuid,text,text,uuid,timestamp with time zone,text);
DROP FUNCTION IF EXISTS queen.log_push_multi_v2(uuid[],text[],text[],integer[],bytea[],bytea[],bigint[],uuid[]);
DROP FUNCTION IF EXISTS queen.log_push_multi_v3(uuid[],text[],text[],integer[],bytea[],bytea[],bigint[],uuid[],uuid[]);
DROP FUNCTION IF EXISTS queen.log_pop_v2(
    uuid,text,text,text,integer,integer,integer,text,boolean,text,timestamp with time zone,text,text);
DROP FUNCTION IF EXISTS queen.log_push_multi_v4(
    uuid[],text[],text[],integer[],bytea[],bytea[],bigint[],uuid[],uuid[],boolean[]);
DROP FUNCTION IF EXISTS queen.queue_encryption_v1(uuid,text);
