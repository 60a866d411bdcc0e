package io.queenvertx.http.routes;

import io.queenvertx.http.server.ErrorContract;
import io.queenvertx.http.server.Identity;
import io.queenvertx.http.server.RouteTable;
import io.queenvertx.http.server.Tenancy;
import io.queenvertx.kernel.ApiError;
import io.queenvertx.node.NodeContext;
import io.queenvertx.bus.Addresses;
import io.queenvertx.bus.PushCommand;
import io.queenvertx.bus.PushItem;
import io.queenvertx.bus.PushOutcome;
import io.queenvertx.json.JsonText;
import io.queenvertx.log.PushInbox;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** {@code POST /api/v1/push} (API.md §5.3). */
final class PushRoutes {
  static final String DEFAULT_PARTITION = "Default";
  static final int MAX_TXN_BYTES = 65535;
  /** {@code queues.name} is {@code varchar(255)}; partition names are held to the same length. */
  static final int MAX_NAME_CHARS = 255;

  private PushRoutes() {}

  static void mount(RouteTable routes, NodeContext node, Vertx vertx) {
    routes.post("/api/v1/push", ctx -> push(ctx, node, vertx));
  }

  private static void push(RoutingContext ctx, NodeContext node, Vertx vertx) {
    List<PushItem> items = PushBody.parse(ctx.body().buffer(), node.config().http().maxPushItems());
    var cmd = new PushCommand(Tenancy.of(ctx), Identity.subject(ctx), items);
    // The log writer's inbox when it is up (no event-bus request per push); the bus otherwise, with the same answer.
    PushInbox inbox = PushInbox.of(vertx);
    Future<List<PushOutcome>> answer = inbox != null ? inbox.push(cmd)
        : Bus.<List<PushOutcome>>request(vertx, Addresses.PUSH, cmd);
    answer
        .onSuccess(out -> {
          // Under maintenance a spool write that failed is a 500 with the same array (API.md §5.3).
          boolean spoolFailed = node.maintenance().pushMaintenance()
              && out.stream().anyMatch(o -> "failed".equals(o.status()));
          ErrorContract.send(ctx, spoolFailed ? 500 : 201, render(out).buffer());
        })
        .onFailure(ctx::fail);
  }

  /**
   * The per-item rules of API.md §5.3, shared by the HTTP body parser, the event-bus edge and the transaction route.
   * They are what the schema accepts, checked before anything is acknowledged (a {@code buffered} item must be one
   * the database will take later): {@code queues.name} is {@code varchar(255)}, a partition name is held to the same
   * 255 characters (it is a key of a unique btree index, whose rows have a size limit), PostgreSQL text takes no NUL
   * and no unpaired surrogate, and a transaction id is at most 65535 UTF-8 bytes. One bad item rejects the whole
   * request.
   */
  static PushItem validated(String queue, String partition, String txn, byte[] payload, int i) {
    if (queue == null) throw missing("queue");
    if (payload == null) throw missing("payload");
    if (partition == null) partition = DEFAULT_PARTITION;
    if (hasControl(queue) || hasControl(partition) || (txn != null && hasControl(txn))) {
      throw ApiError.of(400,
          "bad body: control characters are not allowed in queue, partition or transactionId");
    }
    text("queue", queue, i);
    text("partition", partition, i);
    if (txn != null) text("transactionId", txn, i);
    if (queue.codePointCount(0, queue.length()) > MAX_NAME_CHARS) {
      throw ApiError.of(400, "bad body: queue of item " + i + " exceeds the 255-character limit");
    }
    if (partition.codePointCount(0, partition.length()) > MAX_NAME_CHARS) {
      throw ApiError.of(400, "bad body: partition of item " + i + " exceeds the 255-character limit");
    }
    if (txn != null && txn.getBytes(StandardCharsets.UTF_8).length > MAX_TXN_BYTES) {
      throw ApiError.of(400, "bad body: transactionId of item " + i + " exceeds the 65535-byte limit");
    }
    return new PushItem(queue, partition, txn, payload);
  }

  /** An unpaired surrogate has no UTF-8 form: it would be stored as another name than the one sent. */
  private static void text(String field, String s, int i) {
    for (int k = 0; k < s.length(); k++) {
      char c = s.charAt(k);
      if (Character.isHighSurrogate(c) && k + 1 < s.length() && Character.isLowSurrogate(s.charAt(k + 1))) {
        k++;
      } else if (Character.isSurrogate(c)) {
        throw ApiError.of(400, "bad body: " + field + " of item " + i + " is not valid Unicode (unpaired surrogate)");
      }
    }
  }

  static String requiredString(JsonObject o, String key) {
    Object v = o.getValue(key);
    if (v == null) throw missing(key);
    if (!(v instanceof String s)) throw ApiError.of(400, "bad body: invalid type for `" + key + "`, expected a string");
    return s;
  }

  static String optionalString(JsonObject o, String key) {
    Object v = o.getValue(key);
    if (v == null) return null;
    if (!(v instanceof String s)) throw ApiError.of(400, "bad body: invalid type for `" + key + "`, expected a string");
    return s;
  }

  static ApiError missing(String field) {
    return ApiError.of(400, "bad body: missing field `" + field + "`");
  }

  private static boolean hasControl(String s) {
    for (int i = 0; i < s.length(); i++) if (s.charAt(i) < 0x20) return true;
    return false;
  }

  /**
   * The push result array: mixed-case {@code message_id}/{@code queueName} are the contract. {@code partitionId} is
   * added for the items that reached a partition (issue #3 asks for it; clients ignore unknown keys).
   */
  static JsonText render(List<PushOutcome> out) {
    var j = new JsonText(64 + out.size() * 160);
    j.beginArray();
    for (PushOutcome o : out) {
      j.beginObject()
          .field("index", o.index())
          .field("message_id", o.messageId().toString())
          .field("transaction_id", o.transactionId())
          .field("queueName", o.queue())
          .field("status", o.status());
      if (o.partitionId() != null) j.field("partitionId", o.partitionId().toString());
      j.endObject();
    }
    return j.endArray();
  }
}
