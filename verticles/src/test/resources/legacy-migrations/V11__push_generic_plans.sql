-- Push: plan the statements of a push once per connection, not on every call.
--
-- PL/pgSQL caches each statement's plan, but a statement whose parameters are arrays (every statement of
-- log_push_multi_v2 unnests its argument arrays) looks cheaper with a custom plan that knows the array sizes, so the
-- plan cache keeps choosing custom plans and re-plans every statement on every call. That planning was most of
-- PostgreSQL's CPU on the push path (about 2 ms per call with one segment). Every statement of these two functions
-- is a unique-key probe, a LATERAL ... LIMIT 1 probe or an index range over (partition_id, base_offset) whatever the
-- values, so the generic plan is the same plan, made once.
ALTER FUNCTION queen.log_push_multi_v2(uuid[], text[], text[], integer[], bytea[], bytea[], bigint[], uuid[])
    SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION queen._log_push_into(uuid, integer, bytea, bytea, bigint)
    SET plan_cache_mode = force_generic_plan;
