package io.queenvertx.webhook.api;

import static io.queenvertx.webhook.api.WebhookApi.keyed;

import io.queenvertx.node.NodeContext;
import io.queenvertx.bus.Addresses;
import io.queenvertx.bus.DlqMoveCommand;
import io.queenvertx.bus.LocalCodec;
import io.queenvertx.bus.Verdict;
import io.queenvertx.kernel.ApiError;
import io.queenvertx.http.server.RouteTable;
import io.queenvertx.json.Timestamps;
import io.queenvertx.db.WebhookStore;
import io.queenvertx.webhook.api.WebhookApi.Reply;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import io.vertx.sqlclient.Row;
import java.time.OffsetDateTime;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The webhook DLQ: the {@code failed_permanent} deliveries. {@code GET /v1/dlq/messages} pages them by the opaque
 * {@link DlqCursor}; {@code DELETE /v1/dlq/messages/:id} is a soft delete; {@code POST /v1/dlq/replay/:id} is the
 * engine's atomic DLQ move of the delivery's dead-letter row, in place.
 */
final class DeadLetterRoutes {
  static final int DEFAULT_LIMIT = 100;
  static final int MAX_LIMIT = 1000;
  /** A DLQ move is one short transaction behind the DLQ mover's queue. */
  private static final long MOVE_TIMEOUT_MS = 120_000;
  private static final Logger log = LoggerFactory.getLogger(DeadLetterRoutes.class);

  private final WebhookStore store;
  private final NodeContext node;
  private final Vertx vertx;

  DeadLetterRoutes(WebhookStore store, NodeContext node, Vertx vertx) {
    this.store = store;
    this.node = node;
    this.vertx = vertx;
  }

  static void mount(RouteTable routes, Map<String, UUID> keys, DeadLetterRoutes r) {
    routes.get("/dlq/messages", keyed(keys, r::list));
    routes.delete("/dlq/messages/:id", keyed(keys, r::softDelete));
    routes.post("/dlq/replay/:id", keyed(keys, r::replay));
  }

  static int limit(String v) {
    if (v == null) return DEFAULT_LIMIT;
    String err = "limit must be an integer between 1 and " + MAX_LIMIT;
    int n;
    try {
      n = Integer.parseInt(v.strip());
    } catch (NumberFormatException e) {
      throw WebhookError.invalid(err);
    }
    if (n < 1 || n > MAX_LIMIT) throw WebhookError.invalid(err);
    return n;
  }

  static boolean flag(String key, String v) {
    if (v == null || v.isEmpty()) return false;
    return switch (v.strip().toLowerCase(Locale.ROOT)) {
      case "true", "1" -> true;
      case "false", "0" -> false;
      default -> throw WebhookError.invalid(key + " must be true or false");
    };
  }

  private Future<Reply> list(RoutingContext ctx, UUID tenant) {
    int limit = limit(ctx.request().getParam("limit"));
    boolean includeDeleted = flag("include_deleted", ctx.request().getParam("include_deleted"));
    String c = ctx.request().getParam("cursor");
    DlqCursor after = c == null || c.isEmpty() ? null : DlqCursor.decode(c);
    // one row more than the page says whether another page follows
    return store.deadLetters(tenant, includeDeleted, limit + 1, after == null ? null : after.failedAt(),
            after == null ? null : after.id())
        .map(rows -> {
          JsonArray messages = new JsonArray();
          DlqCursor last = null;
          boolean more = false;
          for (Row r : rows) {
            if (messages.size() == limit) {
              more = true;
              break;
            }
            messages.add(render(r));
            last = DlqCursor.of(r.getOffsetDateTime("failed_at"), r.getUUID("id"));
          }
          return new Reply(200, new JsonObject().put("messages", messages).put("has_more", more)
              .put("next_cursor", more ? last.encode() : null));
        });
  }

  /** The seed's message object plus {@code id}; {@code deleted_at} only on a soft-deleted row. */
  static JsonObject render(Row r) {
    JsonObject m = new JsonObject()
        .put("id", r.getUUID("id").toString())
        .put("message_id", r.getUUID("message_id").toString())
        .put("endpoint", r.getString("url"))
        .put("status", r.getString("status"))
        .put("attempt_count", r.getInteger("attempt_count"))
        .put("created_at", Timestamps.millis(r.getOffsetDateTime("created_at")))
        .put("delivered_at", Timestamps.millis(r.getOffsetDateTime("delivered_at")))
        .put("first_attempt_at", Timestamps.millis(r.getOffsetDateTime("first_attempt_at")))
        .put("response_status", r.getInteger("response_status"))
        .put("response_latency_ms", r.getInteger("response_latency_ms"))
        .put("processing_ms", r.getInteger("processing_ms"))
        .put("total_delivery_ms", r.getInteger("total_delivery_ms"))
        .put("queue_wait_ms", r.getInteger("queue_wait_ms"))
        .put("last_error", r.getString("last_error"));
    OffsetDateTime deleted = r.getOffsetDateTime("deleted_at");
    if (deleted != null) m.put("deleted_at", Timestamps.millis(deleted));
    return m;
  }

  private Future<Reply> softDelete(RoutingContext ctx, UUID tenant) {
    UUID id = WebhookApi.pathId(ctx, "dead letter");
    return store.softDelete(tenant, id).map(at -> new Reply(200, new JsonObject().put("id", id.toString())
        .put("deleted_at", Timestamps.millis(WebhookApi.found(at, "dead letter")))));
  }

  /**
   * Moves the delivery's dead-letter row back into its queue in place (the engine's atomic move; the redelivery has
   * transaction id {@code dlq:<dlq row id>} and gets a delivery row of its own), then drops the old delivery row.
   */
  private Future<Reply> replay(RoutingContext ctx, UUID tenant) {
    UUID id = WebhookApi.pathId(ctx, "dead letter");
    return store.liveDeadLetter(tenant, id).compose(row -> {
      Row r = WebhookApi.found(row, "dead letter");
      UUID dlqId = r.getUUID("dlq_id");
      String messageId = r.getUUID("message_id").toString();
      if (dlqId == null) throw WebhookError.notFound("dead letter has no dead-letter queue entry to replay");
      if (node.maintenance().pushMaintenance()) throw maintenance();
      var move = new DlqMoveCommand(tenant, dlqId.toString(), null, null, null, null);
      return vertx.eventBus().<Verdict>request(Addresses.DLQ_MOVE, move, LocalCodec.options(MOVE_TIMEOUT_MS))
          .map(Message::body)
          .recover(DeadLetterRoutes::moverFailure)
          .compose(v -> afterMove(v, tenant, id, messageId, dlqId));
    });
  }

  /** The mover's {@code fail(code, text)} keeps its status; a timeout or anything else is a 500. */
  private static Future<Verdict> moverFailure(Throwable e) {
    if (e instanceof ReplyException re && re.failureType() == ReplyFailure.RECIPIENT_FAILURE
        && re.failureCode() >= 400 && re.failureCode() < 600) {
      return Future.failedFuture(ApiError.of(re.failureCode(), ApiError.describe(re)));
    }
    return Future.failedFuture(e);
  }

  private Future<Reply> afterMove(Verdict v, UUID tenant, UUID id, String messageId, UUID dlqId) {
    JsonObject b = v.body() == null ? new JsonObject() : v.body();
    if (v.status() == 200 && "moved".equals(b.getString("result"))) {
      JsonObject as = b.getJsonObject("replayedAs", new JsonObject());
      Reply reply = new Reply(200, new JsonObject()
          .put("id", id.toString())
          .put("message_id", messageId)
          .put("result", "moved")
          .put("replayed_as", new JsonObject()
              .put("transaction_id", as.getString("transaction_id", "dlq:" + dlqId))
              .put("offset", as.getLong("offset"))
              .put("message_id", as.getString("message_id"))));
      // The move is done and irreversible: a failure to drop the old row is logged, not answered.
      return store.dropDelivery(tenant, id)
          .map(x -> reply)
          .otherwise(e -> {
            log.warn("replayed dead letter {} (dlq {}) but could not drop its delivery row: {}", id, dlqId,
                ApiError.describe(e));
            return reply;
          });
    }
    if (v.status() == 200) {
      return Future.failedFuture(new WebhookError(409, "CONFLICT", "the message was already replayed: transaction "
          + "dlq:" + dlqId + " is already in the queue; the dead letter is kept"));
    }
    if (v.status() == 404) {
      return Future.failedFuture(WebhookError.notFound("the dead letter's queue entry is gone (already replayed or "
          + "purged)"));
    }
    if (v.status() == 503) return Future.failedFuture(maintenance());
    return Future.failedFuture(WebhookError.internal(b.getString("error", "replay failed")));
  }

  private static WebhookError maintenance() {
    return WebhookError.unavailable("push maintenance is on; the dead letter is untouched, replay it again once "
        + "maintenance is off");
  }
}
