package io.queenvertx.http.routes;

import io.queenvertx.http.server.ErrorContract;
import io.queenvertx.http.server.RouteTable;
import io.queenvertx.http.server.Tenancy;
import io.queenvertx.node.NodeContext;
import io.queenvertx.bus.Addresses;
import io.queenvertx.bus.DlqMoveCommand;
import io.queenvertx.bus.Verdict;
import io.queenvertx.inspection.InspectionService;
import io.queenvertx.kernel.ApiError;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.util.UUID;

/**
 * The message inspection routes (shared/seeds/messages-and-dlq.txt, API.md §5.9): the listing, one message's detail,
 * deleting an address's dead-letter rows and replaying its newest one. The listing, the detail and the delete are
 * {@link InspectionService}'s; replay goes to the DLQ mover.
 */
final class MessageRoutes {
  public static final String NOT_FOUND = InspectionService.NOT_FOUND;
  static final String NO_DLQ_ROW =
      "No dead-letter row for this address. Live messages live in immutable segments and cannot be deleted";
  private static final String[] LIST_FILTERS = {"queue", "partition", "namespace", "task", "status", "from", "to",
      "limit", "offset", "cursor"};

  private MessageRoutes() {}

  static void mount(RouteTable routes, NodeContext node, Vertx vertx) {
    var service = new InspectionService(vertx, node.db().inspection(), node.db().readSegments(), node.gate());
    routes.get("/api/v1/messages", ctx -> list(ctx, service));
    routes.get("/api/v1/messages/:partitionId/:transactionId", ctx -> detail(ctx, service));
    routes.delete("/api/v1/messages/:partitionId/:transactionId", ctx -> deleteDeadLetters(ctx, service));
    routes.post("/api/v1/messages/:partitionId/:transactionId/retry", ctx -> retry(ctx, node, vertx));
  }

  // ---- listing and detail: InspectionService ---------------------------------------------------------------

  private static void list(RoutingContext ctx, InspectionService service) {
    JsonObject filter = new JsonObject();
    for (String k : LIST_FILTERS) {
      String v = ctx.request().getParam(k);
      if (v != null && !v.isEmpty()) filter.put(k, v);
    }
    String ns = ctx.request().getParam("ns");
    if (!filter.containsKey("namespace") && ns != null && !ns.isEmpty()) filter.put("namespace", ns);
    service.list(Tenancy.of(ctx), filter)
        .onSuccess(l -> ErrorContract.send(ctx, l.status(), l.body()))
        .onFailure(ctx::fail);
  }

  private static void detail(RoutingContext ctx, InspectionService service) {
    UUID pid = partitionIdOr404(ctx.pathParam("partitionId"));
    service.detail(Tenancy.of(ctx), pid, ctx.pathParam("transactionId"))
        .onSuccess(buf -> ErrorContract.send(ctx, 200, buf))
        .onFailure(ctx::fail);
  }

  // ---- dead-letter rows of an address -----------------------------------------------------------------------

  private static void deleteDeadLetters(RoutingContext ctx, InspectionService service) {
    UUID tenant = Tenancy.of(ctx);
    String pidText = ctx.pathParam("partitionId");
    String txn = ctx.pathParam("transactionId");
    UUID pid = parseOrNull(pidText);
    if (pid == null) {
      ErrorContract.send(ctx, 404, addressNotFound(pidText, txn));
      return;
    }
    service.deleteDeadLetters(tenant, pid, txn)
        .onSuccess(n -> {
          if (n > 0) {
            ErrorContract.send(ctx, 200, new JsonObject().put("success", true).put("partitionId", pidText)
                .put("transactionId", txn).put("message", "Message deleted successfully"));
          } else {
            ErrorContract.send(ctx, 404, addressNotFound(pidText, txn));
          }
        })
        .onFailure(ctx::fail);
  }

  private static void retry(RoutingContext ctx, NodeContext node, Vertx vertx) {
    UUID tenant = Tenancy.of(ctx);
    String pidText = ctx.pathParam("partitionId");
    String txn = ctx.pathParam("transactionId");
    if (DlqRoutes.refusedByMaintenance(ctx, node)) return;
    UUID pid = parseOrNull(pidText);
    if (pid == null) {
      ErrorContract.send(ctx, 404, DlqRoutes.addressGone(pidText, txn));
      return;
    }
    node.gate().owns(tenant, pid).onComplete(ar -> {
      if (ar.failed() || !ar.result()) {
        ErrorContract.send(ctx, 404, DlqRoutes.addressGone(pidText, txn));
        return;
      }
      Bus.<Verdict>request(vertx, Addresses.DLQ_MOVE, new DlqMoveCommand(tenant, null, pid, txn, null, null))
          .onSuccess(v -> ErrorContract.send(ctx, v.status(), v.body()))
          .onFailure(ctx::fail);
    });
  }

  static JsonObject addressNotFound(String pid, String txn) {
    return new JsonObject().put("success", false).put("partitionId", pid).put("transactionId", txn)
        .put("error", NOT_FOUND).put("message", NO_DLQ_ROW);
  }

  private static UUID partitionIdOr404(String text) {
    UUID pid = parseOrNull(text);
    if (pid == null) throw ApiError.of(404, NOT_FOUND);
    return pid;
  }

  /** A canonical 8-4-4-4-12 uuid, else null (java.util.UUID alone would accept "1-1-1-1-1"). */
  static UUID parseOrNull(String text) {
    if (text == null || text.length() != 36) return null;
    try {
      return UUID.fromString(text);
    } catch (RuntimeException e) {
      return null;
    }
  }
}
