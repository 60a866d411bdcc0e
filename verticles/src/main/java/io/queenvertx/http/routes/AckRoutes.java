package io.queenvertx.http.routes;

import io.queenvertx.http.server.Bodies;
import io.queenvertx.http.server.ErrorContract;
import io.queenvertx.http.server.RouteTable;
import io.queenvertx.http.server.Tenancy;
import io.queenvertx.kernel.ApiError;
import io.queenvertx.node.NodeContext;
import io.queenvertx.bus.AckCommand;
import io.queenvertx.bus.AckItem;
import io.queenvertx.bus.Addresses;
import io.queenvertx.bus.LeaseCommand;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.util.ArrayList;
import java.util.List;

/**
 * Ack, ack batch (API.md §5.5) and lease extension (§5.7): always 200 with per-item verdicts once parsed, except
 * during a PostgreSQL failover, when an ack none of whose items ran answers 503 with {@code Retry-After}.
 */
final class AckRoutes {
  private AckRoutes() {}

  static void mount(RouteTable routes, NodeContext node, Vertx vertx) {
    routes.post("/api/v1/ack", ctx -> {
      JsonObject b = Bodies.object(ctx);
      String group = groupOf(b);
      send(ctx, vertx, List.of(item(b, group)));
    });
    routes.post("/api/v1/ack/batch", ctx -> {
      JsonObject b = Bodies.object(ctx);
      String group = groupOf(b);
      Object acks = b.getValue("acknowledgments");
      List<AckItem> items = new ArrayList<>();
      if (acks != null) {
        if (!(acks instanceof JsonArray arr)) throw ApiError.of(400, "bad body: `acknowledgments` must be an array");
        for (Object o : arr) {
          if (!(o instanceof JsonObject a)) throw ApiError.of(400, "bad body: each acknowledgment must be an object");
          items.add(item(a, group));
        }
      }
      send(ctx, vertx, items);
    });
    routes.post("/api/v1/lease/:leaseId/extend", ctx -> {
      int seconds = 60;
      try {
        JsonObject b = Bodies.optionalObject(ctx);
        if (b != null && b.getValue("seconds") instanceof Number n) seconds = n.intValue();
      } catch (ApiError e) {
        // an empty or non-JSON body means 60 (API.md §5.7)
      }
      var cmd = new LeaseCommand(Tenancy.of(ctx), ctx.pathParam("leaseId"), seconds);
      Bus.<JsonObject>request(vertx, Addresses.LEASE, cmd)
          .onSuccess(r -> ErrorContract.send(ctx, 200, r))
          .onFailure(ctx::fail);
    });
  }

  private static void send(RoutingContext ctx, Vertx vertx, List<AckItem> items) {
    if (items.isEmpty()) {
      ErrorContract.send(ctx, 200, Buffer.buffer("[]"));
      return;
    }
    Bus.ack(vertx, new AckCommand(Tenancy.of(ctx), items))
        .onSuccess(r -> {
          if (!noneSucceeded(r) || !ErrorContract.unavailable(ctx, r.getJsonObject(0).getString("error"))) {
            ErrorContract.send(ctx, 200, r);
          }
        })
        .onFailure(ctx::fail);
  }

  /** Every verdict failed: during a PostgreSQL failover the whole call answers 503 instead (issue 37). */
  private static boolean noneSucceeded(JsonArray verdicts) {
    for (int i = 0; i < verdicts.size(); i++) {
      if (verdicts.getJsonObject(i).getBoolean("success", false)) return false;
    }
    return !verdicts.isEmpty();
  }

  private static String groupOf(JsonObject b) {
    String g = PushRoutes.optionalString(b, "consumerGroup");
    return g == null || g.isEmpty() ? PopRoutes.QUEUE_MODE : g;
  }

  private static AckItem item(JsonObject a, String group) {
    String txn = PushRoutes.requiredString(a, "transactionId");
    String pid = PushRoutes.requiredString(a, "partitionId");
    String lease = PushRoutes.optionalString(a, "leaseId");
    String error = PushRoutes.optionalString(a, "error");
    return new AckItem(txn, pid, normaliseStatus(PushRoutes.optionalString(a, "status")),
        lease == null || lease.isEmpty() ? null : lease, error == null || error.isEmpty() ? null : error, group);
  }

  /** Case-sensitive (API.md §5.5): completed/success/acked/ok or absent → completed; retry; dlq; anything else failed. */
  static String normaliseStatus(String s) {
    if (s == null) return "completed";
    return switch (s) {
      case "completed", "success", "acked", "ok" -> "completed";
      case "retry" -> "retry";
      case "dlq" -> "dlq";
      default -> "failed";
    };
  }
}
