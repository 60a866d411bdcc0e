package io.queenvertx.http.routes;

import io.queenvertx.http.server.Bodies;
import io.queenvertx.http.server.ErrorContract;
import io.queenvertx.http.server.RouteTable;
import io.queenvertx.http.server.Tenancy;
import io.queenvertx.kernel.ApiError;
import io.queenvertx.kernel.ProcedureResult;
import io.queenvertx.db.ReportProcedures.Listing;
import io.queenvertx.db.ReportProcedures.Report;
import io.queenvertx.node.NodeContext;
import io.queenvertx.bus.Addresses;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Queue configuration (API.md §5.2) and the queue resources routes (§5.8). A queue's detail lists its partitions a
 * page at a time ({@link Paging}, at most {@value #PARTITIONS_PAGE}); its totals cover them all.
 */
final class QueueRoutes {
  private static final Set<String> NOT_OPTIONS = Set.of("queue", "options", "mode");
  /** The option keys configure_queue casts with {@code ::integer} (an int4 column each). */
  static final Set<String> INT_OPTIONS = Set.of("priority", "leaseTime", "retryLimit", "retryDelay", "maxSize", "ttl",
      "delayedProcessing", "windowBuffer", "retentionSeconds", "completedRetentionSeconds", "maxWaitTimeSeconds",
      "minPopWaitTime", "dedupWindowSeconds", "retentionSinkHoldMaxSeconds");
  /** The option keys it casts with {@code ::boolean}. */
  static final Set<String> BOOL_OPTIONS = Set.of("deadLetterQueue", "dlqAfterMaxRetries", "retentionEnabled",
      "encryptionEnabled");
  private static final Pattern INTEGER_TEXT = Pattern.compile("[+-]?[0-9]{1,12}");
  private static final Pattern SINK_HOLD = Pattern.compile("^[A-Za-z0-9._-]{0,64}$");
  /** Partitions in one answer of a queue's detail (Queen lists them all): the default and the maximum. */
  static final int PARTITIONS_PAGE = 1000;

  private QueueRoutes() {}

  static void mount(RouteTable routes, NodeContext node, Vertx vertx) {
    routes.post("/api/v1/configure", ctx -> configure(ctx, node, vertx));
    routes.get("/api/v1/resources/queues", ctx -> passthrough(ctx, node, "list failed: ", Report.GET_QUEUES,
        Tenancy.of(ctx)));
    // one page of the partitions (PARTITIONS_PAGE by default and at most); the totals cover them all
    routes.get("/api/v1/resources/queues/:queue", ctx -> Paging.passthrough(ctx, node, "get failed: ",
        Listing.QUEUE_PARTITIONS, Tenancy.of(ctx), ctx.pathParam("queue"), Paging.after(ctx),
        Paging.limit(ctx, PARTITIONS_PAGE, PARTITIONS_PAGE)));
    routes.delete("/api/v1/resources/queues/:queue", ctx -> deleteQueue(ctx, node, vertx));
  }

  private static void configure(RoutingContext ctx, NodeContext node, Vertx vertx) {
    JsonObject b = Bodies.object(ctx);
    if (!(b.getValue("queue") instanceof String queue)) throw ApiError.of(400, "queue is required");
    Bodies.queueName("queue", queue);
    Object modeValue = b.getValue("mode");
    String mode;
    if (modeValue == null) mode = "merge";
    else if ("merge".equals(modeValue) || "replace".equals(modeValue)) mode = (String) modeValue;
    else {
      throw ApiError.of(400, "mode must be \"merge\" or \"replace\", got " + io.vertx.core.json.Json.encode(modeValue));
    }
    JsonObject options;
    if (b.getValue("options") instanceof JsonObject o) {
      options = o.copy();
    } else {
      options = new JsonObject();
      for (String k : b.fieldNames()) if (!NOT_OPTIONS.contains(k)) options.put(k, b.getValue(k));
    }
    // A top-level namespace/task folds in only as a non-empty string the bag lacks (the JS client sends null).
    for (String k : new String[] {"namespace", "task"}) {
      if (b.getValue(k) instanceof String s && !s.isEmpty() && !options.containsKey(k)) options.put(k, s);
    }
    options.remove("replace");
    validateOptions(options);
    if (options.containsKey("retentionSinkHold") && options.getValue("retentionSinkHold") != null) {
      Object v = options.getValue("retentionSinkHold");
      if (!(v instanceof String s) || !SINK_HOLD.matcher(s).matches()) {
        throw ApiError.withBody(400, new JsonObject()
            .put("error", "retentionSinkHold must match ^[A-Za-z0-9._-]{0,64}$").put("invalid", "retentionSinkHold"));
      }
    }
    if (options.getValue("retentionSinkHoldMaxSeconds") instanceof Number n
        && (n.longValue() < 60 || n.longValue() > 31_536_000L)) {
      throw ApiError.withBody(400, new JsonObject()
          .put("error", "retentionSinkHoldMaxSeconds must be between 60 and 31536000")
          .put("invalid", "retentionSinkHoldMaxSeconds"));
    }
    if (Boolean.TRUE.equals(options.getValue("encryptionEnabled")) && node.cipher().isEmpty()) {
      // Never a silent downgrade to plaintext (issue #5): refuse the flag when the broker has no key.
      throw ApiError.of(400, "encryptionEnabled requires QUEEN_ENCRYPTION_KEY (64 hex characters) on the broker");
    }
    var tenant = Tenancy.of(ctx);
    node.db().queues().configure(tenant, queue, options.encode(), mode)
        .onSuccess(text -> {
          vertx.eventBus().publish(Addresses.QUEUE_CHANGED,
              new JsonObject().put("tenant", tenant.toString()).put("queue", queue));
          ErrorContract.send(ctx, ProcedureResult.statusOf(text), Buffer.buffer(text));
        })
        .onFailure(e -> ctx.fail(ApiError.prefixed(500, "configure failed: ", e)));
  }

  /**
   * Checks every option against what configure_queue's casts accept, before any SQL, and rewrites the accepted
   * spellings to their JSON type ({@code "5"} becomes 5, {@code "false"} becomes false), so the later checks (the
   * encryption flag) read the value the database will store. A JSON null keeps meaning "the default". Refused with
   * 400 {@code {"error":…,"invalid":<key>}}: an integer option that is not a whole number in int4's range (a number,
   * or a string of digits as PostgreSQL's integer input reads it), a boolean option that PostgreSQL's boolean input
   * would not read, and any key or text the jsonb cannot hold (NUL, an unpaired surrogate).
   */
  static void validateOptions(JsonObject options) {
    String bad = Bodies.unstorable("", options);
    if (bad != null) {
      String key = bad.split("[.\\[]", 2)[0];
      throw invalid(key.isEmpty() ? "options" : key, bad + " must be valid text without NUL characters");
    }
    for (String k : List.copyOf(options.fieldNames())) {
      Object v = options.getValue(k);
      if (v == null) continue;
      if (INT_OPTIONS.contains(k)) {
        Integer i = int4(v);
        if (i == null) {
          throw invalid(k, k + " must be an integer between " + Integer.MIN_VALUE + " and " + Integer.MAX_VALUE
              + ", got " + io.vertx.core.json.Json.encode(v));
        }
        options.put(k, i);
      } else if (BOOL_OPTIONS.contains(k)) {
        Boolean bool = bool(v);
        if (bool == null) throw invalid(k, k + " must be a boolean, got " + io.vertx.core.json.Json.encode(v));
        options.put(k, bool);
      }
    }
  }

  private static ApiError invalid(String key, String text) {
    String shown = text.length() > 300 ? text.substring(0, 300) + "..." : text;
    return ApiError.withBody(400, new JsonObject().put("error", shown).put("invalid", key));
  }

  /** A whole JSON number or digit string within int4, else null (1.5, "three", true, 2^31). */
  static Integer int4(Object v) {
    long l;
    if (v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte) {
      l = ((Number) v).longValue();
    } else if (v instanceof java.math.BigInteger) {
      return null;
    } else if (v instanceof String s && INTEGER_TEXT.matcher(s.strip()).matches()) {
      l = Long.parseLong(s.strip());
    } else {
      return null;
    }
    return l < Integer.MIN_VALUE || l > Integer.MAX_VALUE ? null : (int) l;
  }

  /** JSON true/false, 0/1, or a string PostgreSQL's boolean input reads (true/yes/on/1 and prefixes), else null. */
  static Boolean bool(Object v) {
    if (v instanceof Boolean b) return b;
    if ((v instanceof Integer || v instanceof Long) && ((Number) v).longValue() == 1) return true;
    if ((v instanceof Integer || v instanceof Long) && ((Number) v).longValue() == 0) return false;
    if (!(v instanceof String s)) return null;
    String t = s.strip().toLowerCase(java.util.Locale.ROOT);
    if (t.isEmpty()) return null;
    if ("true".startsWith(t) || "yes".startsWith(t) || t.equals("on") || t.equals("1")) return true;
    if ("false".startsWith(t) || "no".startsWith(t) || t.equals("of") || t.equals("off") || t.equals("0")) {
      return false;
    }
    return null;
  }

  private static void deleteQueue(RoutingContext ctx, NodeContext node, Vertx vertx) {
    var tenant = Tenancy.of(ctx);
    String queue = ctx.pathParam("queue");
    node.db().queues().delete(tenant, queue)
        .onSuccess(r -> {
          boolean existed = r.getBoolean("existed", false);
          vertx.eventBus().publish(Addresses.QUEUE_CHANGED, new JsonObject().put("tenant", tenant.toString())
              .put("queue", queue).put("partitionIds", r.getJsonArray("partitionIds", new JsonArray())));
          // The SDKs delete before create: never 204 or 404 here (API.md §5.8).
          var body = new JsonObject().put("deleted", existed).put("queue", queue).put("existed", existed);
          if (!existed) body.put("message", "Queue not found, nothing was deleted");
          ErrorContract.send(ctx, 200, body);
        })
        .onFailure(e -> ctx.fail(ApiError.prefixed(500, "delete failed: ", e)));
  }

  /** A stored procedure's JSON, verbatim, with its status derived by {@link ProcedureResult}. */
  static void passthrough(RoutingContext ctx, NodeContext node, String prefix, Report report, Object... args) {
    answer(ctx, node.db().reports().text(report, args), prefix);
  }

  /** {@link #passthrough} of a read-only procedure, on the read pool (a read replica when one is fit). */
  static void readThrough(RoutingContext ctx, NodeContext node, String prefix, Report report, Object... args) {
    answer(ctx, node.db().readReports().text(report, args), prefix);
  }

  private static void answer(RoutingContext ctx, io.vertx.core.Future<String> json, String prefix) {
    json.onSuccess(text -> ErrorContract.send(ctx, ProcedureResult.statusOf(text),
            Buffer.buffer(text == null ? "null" : text)))
        .onFailure(e -> ctx.fail(ApiError.prefixed(500, prefix, e)));
  }


}
