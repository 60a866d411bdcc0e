package io.queenvertx.db;

import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.Tuple;
import java.time.OffsetDateTime;
import java.util.UUID;

/**
 * The one owner of {@code queen.dlq_redrive_tasks} (issue #10): what the redrive routes read and write (scoped to a
 * tenant), and what {@link RedriveVerticle} does to the task it holds (scoped to its owner token). Claiming, the next
 * row and the progress record are the {@code queen.dlq_redrive_*} procedures of R__70_dlq.sql.
 */
public final class RedriveTasks {
  /** The columns every task row is returned with (the routes render them). */
  private static final String COLUMNS = "id, queue, consumer_group, partition, dest_queue, dest_partition, "
      + "max_per_second, max_rows, status, moved, duplicate, gone, failed, last_error, owner, created_at, updated_at, "
      + "finished_at";

  private final Pool pool;

  public RedriveTasks(Pool pool) {
    this.pool = pool;
  }

  /** A new task's settings; {@code maxRows} null is no limit, the names null are "any"/"same as the source". */
  public record NewTask(UUID tenant, String queue, String consumerGroup, String partition, String destQueue,
      String destPartition, int maxPerSecond, Long maxRows) {}

  /** The tenant's 50 newest tasks, newest first. */
  public Future<RowSet<Row>> list(UUID tenant) {
    return pool.preparedQuery("SELECT " + COLUMNS + " FROM queen.dlq_redrive_tasks WHERE tenant_id = $1 "
        + "ORDER BY created_at DESC LIMIT 50").execute(Tuple.of(tenant));
  }

  /** Inserts a running task; fails with SQLSTATE 23505 when one already runs for the queue. */
  public Future<Row> create(NewTask t) {
    return pool.preparedQuery("INSERT INTO queen.dlq_redrive_tasks(tenant_id, queue, consumer_group, partition, "
            + "dest_queue, dest_partition, max_per_second, max_rows) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) "
            + "RETURNING " + COLUMNS)
        .execute(Tuple.from(new Object[] {t.tenant(), t.queue(), t.consumerGroup(), t.partition(), t.destQueue(),
            t.destPartition(), t.maxPerSecond(), t.maxRows()}))
        .map(rows -> rows.iterator().next());
  }

  /** The id of the task running for the queue, or null. */
  public Future<UUID> running(UUID tenant, String queue) {
    return pool.preparedQuery("SELECT id FROM queen.dlq_redrive_tasks WHERE tenant_id = $1 AND queue = $2 "
            + "AND status = 'running'").execute(Tuple.of(tenant, queue))
        .map(rows -> rows.size() > 0 ? rows.iterator().next().getUUID(0) : null);
  }

  /** One task of the tenant, or null. */
  public Future<Row> get(UUID tenant, UUID id) {
    return one(pool.preparedQuery("SELECT " + COLUMNS + " FROM queen.dlq_redrive_tasks WHERE id = $1 AND tenant_id = $2")
        .execute(Tuple.of(id, tenant)));
  }

  /** Cancels the tenant's task if it is running (a finished one is left as it is) and returns it, or null. */
  public Future<Row> cancel(UUID tenant, UUID id) {
    return one(pool.preparedQuery("UPDATE queen.dlq_redrive_tasks SET status = CASE WHEN status = 'running' "
            + "THEN 'cancelled' ELSE status END, finished_at = COALESCE(finished_at, now()), updated_at = now() "
            + "WHERE id = $1 AND tenant_id = $2 RETURNING " + COLUMNS)
        .execute(Tuple.of(id, tenant)));
  }

  private static Future<Row> one(Future<RowSet<Row>> rows) {
    return rows.map(r -> r.size() == 0 ? null : r.iterator().next());
  }

  /** Takes a running task nobody holds, or whose holder stopped heart-beating for {@code staleMs}; null if none. */
  public Future<Row> claim(String owner, long staleMs) {
    return one(pool.preparedQuery("SELECT * FROM queen.dlq_redrive_claim($1, $2)").execute(Tuple.of(owner, staleMs)));
  }

  /** The task's next dead-letter row ({@code id, failed_at}) past its keyset position, or null when done. */
  public Future<Row> next(UUID task) {
    return one(pool.preparedQuery("SELECT id, failed_at FROM queen.dlq_redrive_next($1)").execute(Tuple.of(task)));
  }

  /** Records one row's verdict and moves the position; false when {@code owner} no longer holds the running task. */
  public Future<Boolean> record(UUID task, String owner, String verdict, UUID row, OffsetDateTime failedAt, String error) {
    return pool.preparedQuery("SELECT queen.dlq_redrive_record($1, $2, $3, $4, $5, $6)")
        .execute(Tuple.of(task, owner, verdict, row, failedAt, error))
        .map(rows -> Boolean.TRUE.equals(rows.iterator().next().getBoolean(0)));
  }

  /** Keeps the holder's claim alive; false when {@code owner} no longer holds the running task. */
  public Future<Boolean> heartbeat(UUID task, String owner) {
    return pool.preparedQuery("UPDATE queen.dlq_redrive_tasks SET heartbeat_at = now() "
            + "WHERE id = $1 AND owner = $2 AND status = 'running'")
        .execute(Tuple.of(task, owner)).map(r -> r.rowCount() > 0);
  }

  /** Ends the held task with {@code status}; false when {@code owner} no longer held it running. */
  public Future<Boolean> finish(UUID task, String owner, String status) {
    return pool.preparedQuery("UPDATE queen.dlq_redrive_tasks SET status = $3, finished_at = now(), "
            + "updated_at = now(), owner = NULL WHERE id = $1 AND owner = $2 AND status = 'running'")
        .execute(Tuple.of(task, owner, status)).map(r -> r.rowCount() > 0);
  }
}
