package io.queenvertx.http.routes;

import io.queenvertx.http.server.ErrorContract;
import io.queenvertx.http.server.IsoTime;
import io.queenvertx.http.server.RouteTable;
import io.queenvertx.http.server.Tenancy;
import io.queenvertx.kernel.ApiError;
import io.queenvertx.node.NodeContext;
import io.queenvertx.inspection.InspectionService;
import io.queenvertx.bus.Addresses;
import io.queenvertx.bus.DlqMoveCommand;
import io.queenvertx.bus.Verdict;
import io.queenvertx.codec.EnvelopeCipher;
import io.queenvertx.json.JsonText;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.nio.charset.StandardCharsets;
import java.time.OffsetDateTime;
import java.util.Optional;

/** {@code GET/DELETE /api/v1/dlq} and {@code POST /api/v1/dlq/:id/replay} (seed, API.md §5.10). */
final class DlqRoutes {
  static final String REPLAY_BODY_HINT = "The replay body is optional; send {} to replay in place, or name a "
      + "destination with {\"queue\":\"...\",\"partition\":\"...\"}";
  /** Passed to {@code queen.get_dlq_messages}, which checks them (a malformed from/to, or from after to, is a 400). */
  private static final String[] FILTERS = {"queue", "consumerGroup", "partition", "from", "to", "error", "limit",
      "offset", "cursor"};

  private DlqRoutes() {}

  static void mount(RouteTable routes, NodeContext node, Vertx vertx, Optional<EnvelopeCipher> cipher) {
    routes.get("/api/v1/dlq", ctx -> list(ctx, node, cipher));
    routes.delete("/api/v1/dlq", ctx -> purge(ctx, node));
    routes.post("/api/v1/dlq/:id/replay", ctx -> replay(ctx, node, vertx));
  }

  private static void list(RoutingContext ctx, NodeContext node, Optional<EnvelopeCipher> cipher) {
    JsonObject filter = new JsonObject();
    for (String k : FILTERS) {
      String v = ctx.request().getParam(k);
      if (v != null && !v.isEmpty()) filter.put(k, v);
    }
    checkWindow(filter);
    node.db().dlq().list(Tenancy.of(ctx), filter.encode())
        .onFailure(e -> ctx.fail(ApiError.prefixed(500, "dlq failed: ", e)))
        .onSuccess(r -> {
          int status = InspectionService.listingStatus(r);
          ErrorContract.send(ctx, status, status == 200 ? render(r, cipher) : r.toBuffer());
        });
  }

  /**
   * The listing as {@code get_dlq_messages} built it, each row's {@code payloadText} spliced in as its {@code data}:
   * the snapshot's stored JSON text verbatim (never re-parsed, so {@code "\u0000"} or {@code 1e1000000} come back as
   * they were pushed). A snapshot that is an envelope and decrypts is shown as its plaintext, with {@code isEncrypted}.
   */
  static Buffer render(JsonObject page, Optional<EnvelopeCipher> cipher) {
    JsonText j = new JsonText(4096).beginObject();
    for (var e : page) {
      j.key(e.getKey());
      if (!"messages".equals(e.getKey()) || !(e.getValue() instanceof JsonArray rows)) {
        j.raw(Json.encodeToBuffer(e.getValue()).getBytes());
        continue;
      }
      j.beginArray();
      for (Object o : rows) {
        JsonObject row = (JsonObject) o;
        j.beginObject();
        for (var f : row) {
          if (!"payloadText".equals(f.getKey())) j.key(f.getKey()).raw(Json.encodeToBuffer(f.getValue()).getBytes());
        }
        byte[] data = row.getString("payloadText", "null").getBytes(StandardCharsets.UTF_8);
        Optional<byte[]> plain = cipher.flatMap(c -> c.tryDecrypt(data));
        j.key("data").raw(plain.orElse(data));
        if (plain.isPresent()) j.field("isEncrypted", true);
        j.endObject();
      }
      j.endArray();
    }
    return j.endObject().buffer();
  }

  /**
   * from / to are ISO-8601 (PostgreSQL's looser input such as {@code yesterday} is not accepted): each is parsed here, a
   * malformed one or from after to is a 400 naming the field, and the normalised instant is what the procedure gets.
   */
  private static void checkWindow(JsonObject filter) {
    OffsetDateTime from = filter.containsKey("from") ? IsoTime.parse("from", filter.getString("from")) : null;
    OffsetDateTime to = filter.containsKey("to") ? IsoTime.parse("to", filter.getString("to")) : null;
    if (from != null && to != null && from.isAfter(to)) {
      throw ApiError.of(400, "from (" + filter.getString("from") + ") is after to (" + filter.getString("to") + ")");
    }
    if (from != null) filter.put("from", from.toInstant().toString());
    if (to != null) filter.put("to", to.toInstant().toString());
  }

  private static void purge(RoutingContext ctx, NodeContext node) {
    String queue = ctx.request().getParam("queue");
    String group = ctx.request().getParam("consumerGroup");
    if (queue == null || queue.isEmpty()) {
      ErrorContract.send(ctx, 400, new JsonObject().put("success", false).put("error", "queue is required")
          .put("message", "Bulk DLQ purge requires an exact queue name"));
      return;
    }
    String g = group == null || group.isEmpty() ? null : group;
    node.db().dlq().purge(Tenancy.of(ctx), queue, g)
        .onFailure(e -> ctx.fail(ApiError.prefixed(500, "bulk dlq purge failed: ", e)))
        .onSuccess(r -> {
          ErrorContract.send(ctx, 200, new JsonObject().put("success", true).put("deleted", r.getLong("deleted", 0L))
              .put("queue", queue).put("consumerGroup", g));
        });
  }

  private static void replay(RoutingContext ctx, NodeContext node, Vertx vertx) {
    String id = ctx.pathParam("id");
    String queue = null;
    String partition = null;
    Buffer raw = ctx.body().buffer();
    if (raw != null && !raw.toString().isBlank()) {
      Object v;
      try {
        v = Json.decodeValue(raw);
      } catch (RuntimeException e) {
        v = null;
      }
      if (!(v instanceof JsonObject b)) {
        throw replayBodyError("bad body: expected {} or {\"queue\":\"...\",\"partition\":\"...\"}");
      }
      queue = override(b, "queue");
      partition = override(b, "partition");
    }
    if (refusedByMaintenance(ctx, node)) return;
    Bus.<Verdict>request(vertx, Addresses.DLQ_MOVE,
            new DlqMoveCommand(Tenancy.of(ctx), id, null, null, queue, partition))
        .onSuccess(v -> ErrorContract.send(ctx, v.status(), v.body()))
        .onFailure(ctx::fail);
  }

  private static String override(JsonObject b, String key) {
    if (!b.containsKey(key) || b.getValue(key) == null) return null;
    if (!(b.getValue(key) instanceof String s) || s.strip().isEmpty()) {
      throw replayBodyError(key + " override must be a non-empty name");
    }
    return s.strip();
  }

  private static ApiError replayBodyError(String text) {
    return ApiError.withBody(400, new JsonObject().put("success", false).put("error", text)
        .put("message", REPLAY_BODY_HINT));
  }

  /** A move cannot be spooled, so it is refused while push maintenance is on (seed: "The 503"). */
  static boolean refusedByMaintenance(RoutingContext ctx, NodeContext node) {
    if (!node.maintenance().pushMaintenance()) return false;
    ErrorContract.send(ctx, 503, new JsonObject().put("success", false).put("result", "maintenance")
        .put("error", "push maintenance is on").put("dlqRowRemoved", false)
        .put("message", "Push maintenance is on, so nothing may be written to the log. The dead-letter row is "
            + "untouched; replay it again once maintenance is off"));
    return true;
  }

  static JsonObject addressGone(String pid, String txn) {
    return new JsonObject().put("success", false).put("partitionId", pid).put("transactionId", txn)
        .put("error", MessageRoutes.NOT_FOUND)
        .put("message", "No dead-letter row for this address. Only dead-lettered messages can be replayed");
  }
}
