package io.queenvertx.http.routes;

import io.queenvertx.http.server.Bodies;
import io.queenvertx.http.server.ErrorContract;
import io.queenvertx.http.server.Identity;
import io.queenvertx.http.server.OffLoop;
import io.queenvertx.http.server.RouteTable;
import io.queenvertx.http.server.Tenancy;
import io.queenvertx.kernel.ApiError;
import io.queenvertx.bus.AckItem;
import io.queenvertx.bus.Addresses;
import io.queenvertx.bus.PushItem;
import io.queenvertx.bus.TransactionCommand;
import io.queenvertx.codec.UuidV7;
import io.queenvertx.log.Riders;
import io.queenvertx.state.RawValues;
import io.queenvertx.state.StateRefused;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * {@code POST /api/v1/transaction} (API.md §5.6, docs/design/queen2-contract.md §5). Pre-flight validation answers
 * 400 (the riders' checks too: their status and reason as {@code code}); once the bundle reached the database every
 * outcome, failures included, is a 200, except a rider the database refused as malformed (its 4xx). The body is decoded
 * and checked ({@link #parse}: JSON, every push item, the riders' base64 payloads) by {@link OffLoop}: on a worker
 * when it is over 64 KiB, as the key-value and timer routes do.
 */
final class TransactionRoutes {
  private TransactionRoutes() {}

  static void mount(RouteTable routes, Vertx vertx) {
    routes.post("/api/v1/transaction", ctx -> {
      UUID tenant = Tenancy.of(ctx);
      String sub = Identity.subject(ctx);
      Buffer body = ctx.body().buffer();
      OffLoop.parse(ctx, () -> {
        JsonObject b = Bodies.object(body);
        return parse(b, tenant, sub, b.getValue("kv") == null ? null : RawValues.of(body.getBytes(), "kv"));
      })
          .compose(cmd -> Bus.<JsonObject>request(vertx, Addresses.TRANSACTION, cmd))
          .onSuccess(r -> {
            // a rider refused by the database (Riders.failure) is answered its 4xx, not 200
            Object status = r.remove(Riders.STATUS);
            ErrorContract.send(ctx, status instanceof Integer s ? s : 200, r);
          })
          .onFailure(ctx::fail);
    });
  }

  static TransactionCommand parse(JsonObject b, UUID tenant, String sub, List<Map<String, String>> kvValues) {
    JsonArray kv = rider(b, "kv");
    JsonArray timers = rider(b, "timers");
    try {
      Riders.check(kv, timers, kvValues);
    } catch (StateRefused e) {
      throw refuse(e.status(), "bad_request", e.reason(), e.getMessage());
    } catch (ApiError e) {
      JsonObject env = new JsonObject(e.body());
      throw refuse(e.status(), e.status() == 400 ? "bad_request" : env.getString("error"), env.getString("reason"),
          env.getString("detail"));
    }
    if (b.getValue("operations") == null && (kv != null || timers != null)) b.put("operations", new JsonArray());
    if (!(b.getValue("operations") instanceof JsonArray ops)) {
      throw refuse("transaction requires an operations array (or a top-level kv/timers array)");
    }
    List<TransactionCommand.Op> out = new ArrayList<>();
    for (Object o : ops) {
      if (!(o instanceof JsonObject op) || !(op.getValue("type") instanceof String type)) {
        throw refuse("every transaction operation needs a `type` of push or ack");
      }
      switch (type) {
        case "push" -> {
          if (op.getValue("items") instanceof JsonArray items) {
            for (Object i : items) {
              if (!(i instanceof JsonObject item)) throw refuse("every push item must be an object");
              out.add(pushOp(item, out.size()));
            }
          } else {
            out.add(pushOp(op, out.size()));
          }
        }
        case "ack" -> out.add(new TransactionCommand.Op(null, null, ackOp(op)));
        default -> throw refuse("segments transaction supports only push and ack operations, got `" + type + "`");
      }
    }
    List<String> leases = new ArrayList<>();
    if (b.getValue("requiredLeases") instanceof JsonArray rl) {
      for (Object l : rl) if (l instanceof String s && !s.isEmpty() && !leases.contains(s)) leases.add(s);
    }
    return new TransactionCommand(tenant, sub, out, leases, kv, timers, kvValues);
  }

  private static TransactionCommand.Op pushOp(JsonObject item, int index) {
    String queue;
    try {
      queue = PushRoutes.requiredString(item, "queue");
    } catch (ApiError e) {
      throw refuse("push operation needs a `queue`");
    }
    String partition = item.getValue("partition") instanceof String p ? p : PushRoutes.DEFAULT_PARTITION;
    String txn = item.getValue("transactionId") instanceof String t ? t : null;
    if (item.getValue("transactionId") != null && txn == null) {
      throw refuse("bad body: invalid type for `transactionId`, expected a string");
    }
    Object payload = item.containsKey("payload") ? item.getValue("payload")
        : item.containsKey("data") ? item.getValue("data") : new JsonObject();
    UUID trace = null;
    if (item.getValue("traceId") instanceof String t && !t.isEmpty()) {
      try {
        trace = UUID.fromString(t);
      } catch (IllegalArgumentException e) {
        throw refuse("traceId must be a UUID, got `" + t + "`");
      }
    }
    PushItem pushed;
    try {
      // the same per-item rules as /push: nothing of a request with a bad item reaches the database
      pushed = PushRoutes.validated(queue, partition, txn, Json.encodeToBuffer(payload).getBytes(), index);
    } catch (ApiError e) {
      throw refuse(e.getMessage());
    }
    return new TransactionCommand.Op(pushed, trace, null);
  }

  private static AckItem ackOp(JsonObject op) {
    if (!(op.getValue("transactionId") instanceof String txn) || !(op.getValue("partitionId") instanceof String pid)) {
      throw refuse("ack operation needs `transactionId` and `partitionId`");
    }
    String group = op.getValue("consumerGroup") instanceof String g && !g.isEmpty() ? g : PopRoutes.QUEUE_MODE;
    String lease = op.getValue("leaseId") instanceof String l && !l.isEmpty() ? l : null;
    String error = op.getValue("error") instanceof String e && !e.isEmpty() ? e : null;
    String status = op.getValue("status") instanceof String s ? s : null;
    return new AckItem(txn, pid, AckRoutes.normaliseStatus(status), lease, error, group);
  }

  /** A top-level rider: absent (null) or an array; anything else is a 400 naming it. */
  private static JsonArray rider(JsonObject b, String field) {
    Object v = b.getValue(field);
    if (v == null || v instanceof JsonArray) return (JsonArray) v;
    throw refuse("transaction `" + field + "` must be an array of " + field + " operations");
  }

  private static ApiError refuse(String text) {
    return ApiError.withBody(400, new JsonObject().put("transactionId", UuidV7.next().toString())
        .put("success", false).put("reason", "bad_request").put("error", text).put("results", new JsonArray()));
  }

  /** A rider refused before the bundle ran: its status, the transaction reason, and the registry's reason as code. */
  private static ApiError refuse(int status, String reason, String code, String text) {
    return ApiError.withBody(status, new JsonObject().put("transactionId", UuidV7.next().toString())
        .put("success", false).put("reason", reason).put("code", code).put("error", text)
        .put("results", new JsonArray()));
  }
}
