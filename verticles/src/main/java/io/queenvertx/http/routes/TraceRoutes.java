package io.queenvertx.http.routes;

import io.queenvertx.http.server.Bodies;
import io.queenvertx.http.server.ErrorContract;
import io.queenvertx.http.server.RouteTable;
import io.queenvertx.http.server.Tenancy;
import io.queenvertx.kernel.ApiError;
import io.queenvertx.node.NodeContext;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import io.queenvertx.db.ReportProcedures.Listing;
import io.queenvertx.db.ReportProcedures.Report;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * Message traces (API.md §5.13): recording one (what Queen's JS {@code message.trace()} sends) and the three
 * listings. Stored by the procedures of R__74_traces.sql in {@code queen.message_traces}, with the tenant on the row:
 * a trace outlives its queue and is removed by the retention cycle on its own age ({@code QUEEN_TRACES_RETENTION_DAYS}).
 * A partition id that is not the caller tenant's is "Message not found" on POST and an empty list on GET. A message's
 * timeline is paged ({@link Paging}: {@value #MAX_PAGE} traces by default and at most), oldest first.
 */
final class TraceRoutes {
  static final String MESSAGE_NOT_FOUND = "Message not found";
  static final int MAX_TRACE_NAMES = 100;
  static final int MAX_EVENT_TYPE_CHARS = 255;
  static final int MAX_PAGE = 1000;
  /** A timeline cursor's key: the last trace's time in microseconds since the epoch and its id. */
  private static final Pattern TIMELINE_KEY =
      Pattern.compile("-?[0-9]{1,18},[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}");

  private TraceRoutes() {}

  static void mount(RouteTable routes, NodeContext node) {
    routes.post("/api/v1/traces", ctx -> record(ctx, node));
    routes.get("/api/v1/traces/names", ctx -> QueueRoutes.passthrough(ctx, node, "trace names failed: ",
        Report.TRACE_NAMES, Tenancy.of(ctx), limit(ctx, 50), offset(ctx)));
    // Before /:partitionId/:transactionId, which would also match /by-name/<name>.
    routes.get("/api/v1/traces/by-name/:traceName", ctx -> QueueRoutes.passthrough(ctx, node, "traces failed: ",
        Report.TRACES_BY_NAME, Tenancy.of(ctx), ctx.pathParam("traceName"), limit(ctx, 100), offset(ctx)));
    routes.get("/api/v1/traces/:partitionId/:transactionId", ctx -> {
      UUID pid = MessageRoutes.parseOrNull(ctx.pathParam("partitionId"));
      if (pid == null) {
        ErrorContract.send(ctx, 200, new JsonObject().put("traces", new JsonArray()));
        return;
      }
      Paging.passthrough(ctx, node, "traces failed: ", Listing.TRACES_OF_MESSAGE, Tenancy.of(ctx), pid,
          ctx.pathParam("transactionId"), Paging.after(ctx, TIMELINE_KEY), Paging.limit(ctx, MAX_PAGE, MAX_PAGE));
    });
  }

  private static void record(RoutingContext ctx, NodeContext node) {
    JsonObject b = Bodies.object(ctx);
    if (!(b.getValue("transactionId") instanceof String txn) || txn.isEmpty()
        || !(b.getValue("partitionId") instanceof String pidText) || pidText.isEmpty()) {
      throw ApiError.of(400, "transactionId and partitionId are required");
    }
    Object data = b.getValue("data");
    if (data == null) throw ApiError.of(400, "data is required");
    // Indexed with the partition id (message_traces_address): a btree entry holds ~2.7 kB, so a longer id would fail
    // the INSERT with a 500; it is a 400 naming the field instead.
    Bodies.name("transactionId", txn);
    String bad = Bodies.unstorable("data", data);
    if (bad != null) throw ApiError.of(400, bad + " must be valid text without NUL characters");
    String group = optionalText(b, "consumerGroup");
    if (group != null) Bodies.name("consumerGroup", group);
    String eventType = optionalText(b, "eventType");
    if (eventType != null) {
      Bodies.requireText("eventType", eventType);
      if (eventType.length() > MAX_EVENT_TYPE_CHARS) {
        throw ApiError.of(400, "eventType must be at most " + MAX_EVENT_TYPE_CHARS + " characters");
      }
    }
    String worker = optionalText(b, "workerId");
    if (worker != null) Bodies.name("workerId", worker);
    List<String> names = traceNames(b.getValue("traceNames"));
    UUID pid = MessageRoutes.parseOrNull(pidText);
    if (pid == null) throw notFound();

    node.db().groups().recordTrace(Tenancy.of(ctx), pid, txn, group, eventType,
            io.vertx.core.json.Json.encode(data), worker != null ? worker : node.config().serverId(), names)
        .onSuccess(r -> {
          if (Boolean.TRUE.equals(r.getValue("success"))) {
            ErrorContract.send(ctx, 201, r);
          } else if (MESSAGE_NOT_FOUND.equals(r.getValue("error"))) {
            ctx.fail(notFound());
          } else {
            ErrorContract.send(ctx, 500, r);
          }
        })
        .onFailure(e -> ctx.fail(ApiError.prefixed(500, "trace failed: ", e)));
  }

  /** The foreign/unknown partition answer of API.md §3: {@code {"success":false,"error":"Message not found"}}. */
  private static ApiError notFound() {
    return ApiError.withBody(404, new JsonObject().put("success", false).put("error", MESSAGE_NOT_FOUND));
  }

  /** A string field; absent or null is null (the default applies), any other type is 400 naming it. */
  private static String optionalText(JsonObject b, String field) {
    Object v = b.getValue(field);
    if (v == null) return null;
    if (v instanceof String s) return s;
    throw ApiError.of(400, field + " must be a string");
  }

  /** {@code traceNames}: an array of strings, or one string; null means none; empty names are skipped. */
  static List<String> traceNames(Object v) {
    List<String> out = new ArrayList<>();
    if (v == null) return out;
    if (v instanceof String s) {
      if (!s.isEmpty()) out.add(Bodies.name("traceNames", s));
      return out;
    }
    if (!(v instanceof JsonArray a)) throw ApiError.of(400, "traceNames must be an array of strings or a string");
    if (a.size() > MAX_TRACE_NAMES) {
      throw ApiError.of(400, "traceNames must hold at most " + MAX_TRACE_NAMES + " names");
    }
    for (Object o : a) {
      if (o == null) continue;
      if (!(o instanceof String s)) throw ApiError.of(400, "traceNames must be an array of strings or a string");
      if (!s.isEmpty()) out.add(Bodies.name("traceNames", s));
    }
    return out;
  }

  /** {@code limit}: a number that does not parse, or is below 1, falls back to the default; at most 1000. */
  private static int limit(RoutingContext ctx, int def) {
    int v = whole(ctx.request().getParam("limit"), def);
    return v < 1 ? def : Math.min(v, MAX_PAGE);
  }

  private static int offset(RoutingContext ctx) {
    return Math.max(0, whole(ctx.request().getParam("offset"), 0));
  }

  private static int whole(String text, int def) {
    if (text == null || text.isBlank()) return def;
    try {
      return Integer.parseInt(text.strip());
    } catch (NumberFormatException e) {
      return def;
    }
  }
}
