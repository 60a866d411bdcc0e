package io.queenvertx.db;

import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.Tuple;
import java.time.OffsetDateTime;
import java.util.UUID;
import java.util.function.UnaryOperator;

/**
 * The one owner of the webhook tables, {@code queen.webhook_endpoints} and {@code queen.webhook_deliveries}: every
 * statement on them is here, for the webhook API ({@code webhook.api}) and for {@link DeliveryVerticle}. Reads that
 * the API scopes to a tenant take the tenant and answer null (or false) for another tenant's row, as for a missing
 * one. ({@code R__95_webhooks} holds the trigger that stamps {@code failed_at} on a dead letter.)
 */
public final class WebhookStore {
  /** The columns of an endpoint as the API shows it (no secret, no tenant). */
  private static final String ENDPOINT_COLUMNS = "id, queue, partition, url, timeout_ms, max_attempts, "
      + "backoff_initial_ms, backoff_max_ms, max_concurrency, enabled, created_at, updated_at";
  private static final String DLQ_SELECT = "SELECT d.id, d.message_id, e.url, d.status, d.attempt_count, d.created_at, "
      + "d.delivered_at, d.first_attempt_at, d.response_status, d.response_latency_ms, d.processing_ms, "
      + "d.total_delivery_ms, d.queue_wait_ms, d.last_error, d.deleted_at, d.failed_at "
      + "FROM queen.webhook_deliveries d JOIN queen.webhook_endpoints e ON e.id = d.endpoint_id "
      + "WHERE d.tenant_id = $1 AND d.status = 'failed_permanent' AND ($2 OR d.deleted_at IS NULL) ";
  private static final String DLQ_FIRST_PAGE = DLQ_SELECT + "ORDER BY d.failed_at, d.id LIMIT $3";
  private static final String DLQ_NEXT_PAGE = DLQ_SELECT + "AND (d.failed_at, d.id) > ($4, $5) "
      + "ORDER BY d.failed_at, d.id LIMIT $3";
  /** The row of one delivery: the endpoint, the message's partition and its transaction id. */
  private static final String DELIVERY = " WHERE endpoint_id = $1 AND partition_id = $2 AND transaction_id = $3";
  private static final String QUEUE_WAIT =
      "queue_wait_ms = (extract(epoch FROM first_attempt_at - created_at) * 1000)::int";
  private static final String TOTAL = "total_delivery_ms = (extract(epoch FROM now() - created_at) * 1000)::int";

  /** The settings of a push subscription, as stored. */
  public record EndpointSettings(String queue, String partition, String url, String secret, int timeoutMs,
                                 int maxAttempts, int backoffInitialMs, int backoffMaxMs, int maxConcurrency,
                                 boolean enabled) {}

  /** One delivery row's key: an endpoint and one message of its queue. */
  public record Delivery(UUID endpointId, UUID partitionId, String transactionId) {}

  /** What one attempt saw: the receiver's status (null when none answered), the latencies and the error text. */
  public record Outcome(Integer status, int latencyMs, int processingMs, String error) {}

  private final Pool pool;

  public WebhookStore(Pool pool) {
    this.pool = pool;
  }

  // ---- endpoints -------------------------------------------------------------------------------------------------

  /** Inserts an endpoint; answers its row ({@link #ENDPOINT_COLUMNS}). */
  public Future<Row> createEndpoint(UUID tenant, EndpointSettings s) {
    return pool.preparedQuery("INSERT INTO queen.webhook_endpoints(tenant_id, queue, partition, url, secret, "
            + "timeout_ms, max_attempts, backoff_initial_ms, backoff_max_ms, max_concurrency, enabled) "
            + "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING " + ENDPOINT_COLUMNS)
        .execute(Tuple.from(new Object[] {tenant, s.queue(), s.partition(), s.url(), s.secret(), s.timeoutMs(),
            s.maxAttempts(), s.backoffInitialMs(), s.backoffMaxMs(), s.maxConcurrency(), s.enabled()}))
        .map(rows -> rows.iterator().next());
  }

  /** The tenant's endpoints, newest first. */
  public Future<RowSet<Row>> endpoints(UUID tenant) {
    return pool.preparedQuery("SELECT " + ENDPOINT_COLUMNS + " FROM queen.webhook_endpoints "
            + "WHERE tenant_id = $1 ORDER BY created_at DESC, id DESC")
        .execute(Tuple.of(tenant));
  }

  /** One of the tenant's endpoints, or null. */
  public Future<Row> endpoint(UUID tenant, UUID id) {
    return pool.preparedQuery("SELECT " + ENDPOINT_COLUMNS + " FROM queen.webhook_endpoints "
            + "WHERE id = $1 AND tenant_id = $2")
        .execute(Tuple.of(id, tenant))
        .map(WebhookStore::first);
  }

  /**
   * Reads the endpoint FOR UPDATE, lets {@code merge} turn its settings into the new ones (it may throw to refuse),
   * and writes them back, in one transaction; answers the new row, or null when the tenant has no such endpoint.
   */
  public Future<Row> updateEndpoint(UUID tenant, UUID id, UnaryOperator<EndpointSettings> merge) {
    return pool.withTransaction(conn -> conn
        .preparedQuery("SELECT queue, partition, url, secret, timeout_ms, max_attempts, backoff_initial_ms, "
            + "backoff_max_ms, max_concurrency, enabled FROM queen.webhook_endpoints "
            + "WHERE id = $1 AND tenant_id = $2 FOR UPDATE")
        .execute(Tuple.of(id, tenant))
        .compose(rows -> {
          Row r = first(rows);
          if (r == null) return Future.succeededFuture(null);
          EndpointSettings s = merge.apply(new EndpointSettings(r.getString("queue"), r.getString("partition"),
              r.getString("url"), r.getString("secret"), r.getInteger("timeout_ms"), r.getInteger("max_attempts"),
              r.getInteger("backoff_initial_ms"), r.getInteger("backoff_max_ms"), r.getInteger("max_concurrency"),
              r.getBoolean("enabled")));
          return conn.preparedQuery("UPDATE queen.webhook_endpoints SET queue = $3, partition = $4, url = $5, "
                  + "secret = $6, timeout_ms = $7, max_attempts = $8, backoff_initial_ms = $9, "
                  + "backoff_max_ms = $10, max_concurrency = $11, enabled = $12, updated_at = now() "
                  + "WHERE id = $1 AND tenant_id = $2 RETURNING " + ENDPOINT_COLUMNS)
              .execute(Tuple.from(new Object[] {id, tenant, s.queue(), s.partition(), s.url(), s.secret(),
                  s.timeoutMs(), s.maxAttempts(), s.backoffInitialMs(), s.backoffMaxMs(), s.maxConcurrency(),
                  s.enabled()}))
              .map(WebhookStore::first);
        }));
  }

  /** Deletes one of the tenant's endpoints; false when there was none. */
  public Future<Boolean> deleteEndpoint(UUID tenant, UUID id) {
    return pool.preparedQuery("DELETE FROM queen.webhook_endpoints WHERE id = $1 AND tenant_id = $2 RETURNING id")
        .execute(Tuple.of(id, tenant))
        .map(rows -> rows.size() > 0);
  }

  /** Every enabled endpoint of every tenant, all columns (the delivery verticle's view, with secret and tenant). */
  public Future<RowSet<Row>> enabledEndpoints() {
    return pool.query("SELECT * FROM queen.webhook_endpoints WHERE enabled").execute();
  }

  // ---- the dead letters (failed_permanent deliveries) ----------------------------------------------------------

  /**
   * At most {@code limit} of the tenant's dead letters in {@code (failed_at, id)} order, after the given position
   * (both null: from the start), each with its endpoint's URL.
   */
  public Future<RowSet<Row>> deadLetters(UUID tenant, boolean includeDeleted, int limit, OffsetDateTime afterFailedAt,
                                         UUID afterId) {
    return afterId == null
        ? pool.preparedQuery(DLQ_FIRST_PAGE).execute(Tuple.of(tenant, includeDeleted, limit))
        : pool.preparedQuery(DLQ_NEXT_PAGE).execute(Tuple.of(tenant, includeDeleted, limit, afterFailedAt, afterId));
  }

  /** Soft-deletes one of the tenant's live dead letters; answers its {@code deleted_at}, or null when none. */
  public Future<OffsetDateTime> softDelete(UUID tenant, UUID id) {
    return pool.preparedQuery("UPDATE queen.webhook_deliveries SET deleted_at = now(), updated_at = now() "
            + "WHERE id = $1 AND tenant_id = $2 AND status = 'failed_permanent' AND deleted_at IS NULL "
            + "RETURNING deleted_at")
        .execute(Tuple.of(id, tenant))
        .map(rows -> rows.size() == 0 ? null : rows.iterator().next().getOffsetDateTime("deleted_at"));
  }

  /** One of the tenant's live dead letters ({@code message_id}, {@code dlq_id}), or null. */
  public Future<Row> liveDeadLetter(UUID tenant, UUID id) {
    return pool.preparedQuery("SELECT message_id, dlq_id FROM queen.webhook_deliveries "
            + "WHERE id = $1 AND tenant_id = $2 AND status = 'failed_permanent' AND deleted_at IS NULL")
        .execute(Tuple.of(id, tenant))
        .map(WebhookStore::first);
  }

  /** Drops a delivery row (a replayed dead letter: its redelivery gets a row of its own). */
  public Future<Void> dropDelivery(UUID tenant, UUID id) {
    return pool.preparedQuery("DELETE FROM queen.webhook_deliveries WHERE id = $1 AND tenant_id = $2")
        .execute(Tuple.of(id, tenant))
        .mapEmpty();
  }

  // ---- delivery telemetry (the delivery verticle) ----------------------------------------------------------------

  /** Files a message as {@code queued} for an endpoint, once: a redelivery of the same message keeps its row. */
  public Future<Void> queued(Delivery d, UUID tenant, UUID messageId, OffsetDateTime createdAt) {
    return pool.preparedQuery("INSERT INTO queen.webhook_deliveries(endpoint_id, tenant_id, partition_id, "
            + "transaction_id, message_id, status, created_at) VALUES ($1, $2, $3, $4, $5, 'queued', $6) "
            + "ON CONFLICT (endpoint_id, partition_id, transaction_id) DO NOTHING")
        .execute(Tuple.of(d.endpointId(), tenant, d.partitionId(), d.transactionId(), messageId, createdAt))
        .mapEmpty();
  }

  /** Attempt {@code n} starts: {@code delivering}; the first attempt's time is kept. */
  public Future<Void> attempting(Delivery d, int n, OffsetDateTime firstAttempt) {
    return pool.preparedQuery("UPDATE queen.webhook_deliveries SET status = 'delivering', attempt_count = $4, "
            + "first_attempt_at = COALESCE(first_attempt_at, $5), updated_at = now()" + DELIVERY)
        .execute(Tuple.of(d.endpointId(), d.partitionId(), d.transactionId(), n, firstAttempt))
        .mapEmpty();
  }

  /** The receiver answered 2xx. */
  public Future<Void> succeeded(Delivery d, Outcome o) {
    return pool.preparedQuery("UPDATE queen.webhook_deliveries SET status = 'succeeded', delivered_at = now(), "
            + "response_status = $4, response_latency_ms = $5, processing_ms = $6, last_error = NULL, "
            + "next_attempt_at = NULL, " + TOTAL + ", " + QUEUE_WAIT + ", updated_at = now()" + DELIVERY)
        .execute(Tuple.of(d.endpointId(), d.partitionId(), d.transactionId(), o.status(), o.latencyMs(),
            o.processingMs()))
        .mapEmpty();
  }

  /** The attempt failed and another follows after {@code waitMs}. */
  public Future<Void> pendingRetry(Delivery d, Outcome o, long waitMs) {
    return pool.preparedQuery("UPDATE queen.webhook_deliveries SET status = 'pending_retry', "
            + "response_status = $4, response_latency_ms = $5, processing_ms = $6, last_error = $7, "
            + "next_attempt_at = now() + make_interval(secs => $8::double precision / 1000), " + QUEUE_WAIT
            + ", updated_at = now()" + DELIVERY)
        .execute(Tuple.from(new Object[] {d.endpointId(), d.partitionId(), d.transactionId(), o.status(),
            o.latencyMs(), o.processingMs(), o.error(), (double) waitMs}))
        .mapEmpty();
  }

  /**
   * The last attempt failed and the message was dead-lettered for {@code group}: {@code failed_permanent}, linked to
   * its newest dead-letter row ({@code queen.log_dlq}, read only) so the API can replay it.
   */
  public Future<Void> failedPermanently(Delivery d, Outcome o, String group) {
    return pool.preparedQuery("UPDATE queen.webhook_deliveries d SET status = 'failed_permanent', "
            + "response_status = $4, response_latency_ms = $5, processing_ms = $6, last_error = $7, "
            + "next_attempt_at = NULL, failed_at = now(), updated_at = now(), " + QUEUE_WAIT + ", " + TOTAL + ", "
            + "dlq_id = (SELECT l.id FROM queen.log_dlq l WHERE l.partition_id = $2 AND l.consumer_group = $8 "
            + "AND l.transaction_id = $3 ORDER BY l.failed_at DESC LIMIT 1)" + DELIVERY)
        .execute(Tuple.from(new Object[] {d.endpointId(), d.partitionId(), d.transactionId(), o.status(),
            o.latencyMs(), o.processingMs(), o.error(), group}))
        .mapEmpty();
  }

  private static Row first(RowSet<Row> rows) {
    return rows.size() == 0 ? null : rows.iterator().next();
  }
}
