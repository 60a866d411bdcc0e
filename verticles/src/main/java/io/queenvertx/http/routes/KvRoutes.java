package io.queenvertx.http.routes;

import io.queenvertx.auth.AuthHandler;
import io.queenvertx.db.KvProcedures;
import io.queenvertx.http.server.Bodies;
import io.queenvertx.http.server.ErrorContract;
import io.queenvertx.http.server.OffLoop;
import io.queenvertx.http.server.RouteTable;
import io.queenvertx.http.server.Tenancy;
import io.queenvertx.json.JsonText;
import io.queenvertx.kernel.ApiError;
import io.queenvertx.kernel.StorableText;
import io.queenvertx.json.Timestamps;
import io.queenvertx.metrics.StateMetrics;
import io.queenvertx.node.NodeContext;
import io.queenvertx.state.KvAnswers;
import io.queenvertx.state.KvInput;
import io.queenvertx.state.RawValues;
import io.queenvertx.state.StateCodes;
import io.queenvertx.state.StateRefused;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Key-value state (docs/design/queen2-contract.md §2): {@code POST /api/v1/kv} (every operation, results in request
 * order), the single-key path routes {@code GET/PUT/DELETE /api/v1/kv/:namespace/*key} (one operation each, the result
 * object unwrapped), and the console reads {@code GET /api/v1/resources/kv/namespaces} and
 * {@code POST /api/v1/resources/kv/list}. The tenant is the request's, never the body's. A call is one {@code kv_apply}
 * statement, so its writes commit together; the status is the call's outcome, never an operation's verdict.
 */
final class KvRoutes {
  static final String FAMILY = "kv";
  private static final String PATH_PREFIX = "/api/v1/kv/";

  private KvRoutes() {}

  static void mount(RouteTable routes, NodeContext node) {
    KvProcedures kv = node.db().kv();
    StateMetrics metrics = node.metrics().state();
    routes.post("/api/v1/kv", ctx -> {
      Buffer body = ctx.body().buffer();
      OffLoop.parse(ctx, () -> KvInput.parse(KvInput.operations(Bodies.value(body)),
          RawValues.of(body.getBytes(), "operations")))
          .map(ops -> { // reads need a read token, writes a read-write one (a 403 AuthRefused)
            AuthHandler.require(ctx, "/api/v1/kv", ops.stream().map(KvProcedures.Op::op).toList());
            return ops;
          })
          .onSuccess(ops -> run(ctx, kv, metrics, ops, false))
          .onFailure(e -> {
            // a refusal of the checks is the family's 4xx, of the access check a 403; anything else is a bug: a 500,
            // never a retryable 503
            if (e instanceof StateRefused || e instanceof ApiError) StateErrors.fail(ctx, FAMILY, e);
            else ctx.fail(e);
          });
    });
    routes.get("/api/v1/kv/:namespace/*", ctx -> single(ctx, kv, metrics, "get", null));
    routes.put("/api/v1/kv/:namespace/*", ctx -> single(ctx, kv, metrics, "put", Bodies.object(ctx)));
    routes.delete("/api/v1/kv/:namespace/*", ctx -> single(ctx, kv, metrics, "delete", Bodies.optionalObject(ctx)));
    routes.get("/api/v1/resources/kv/namespaces", ctx -> guarded(ctx, () -> {
      noQuery(ctx);
      kv.namespaces(Tenancy.of(ctx)).onSuccess(list -> {
        JsonArray out = new JsonArray();
        for (var n : list) {
          out.add(new JsonObject().put("namespace", n.namespace()).put("keys", n.keys()).put("keysCapped", n.capped()));
        }
        ErrorContract.send(ctx, 200, out);
      }).onFailure(e -> StateErrors.fail(ctx, FAMILY, e));
    }));
    routes.post("/api/v1/resources/kv/list", ctx -> guarded(ctx, () -> list(ctx, kv)));
  }

  /** Runs {@code body}, turning a refusal of the Java checks into the family's error body. */
  static void guarded(RoutingContext ctx, Runnable body) {
    try {
      body.run();
    } catch (StateRefused e) {
      StateErrors.fail(ctx, FAMILY, e);
    }
  }

  private static void run(RoutingContext ctx, KvProcedures kv, StateMetrics metrics, List<KvProcedures.Op> ops,
                          boolean single) {
    kv.apply(Tenancy.of(ctx), ops, false).onSuccess(results -> {
      KvAnswers.count(metrics, results);
      if (!single) {
        ErrorContract.send(ctx, 200, KvAnswers.results(results).buffer());
        return;
      }
      KvProcedures.Result r = results.get(0);
      if ("get".equals(r.op()) && Boolean.TRUE.equals(r.result().present())) {
        ctx.response().putHeader("ETag", "\"" + r.result().version() + "\"");
      }
      ErrorContract.send(ctx, 200, KvAnswers.single(r).buffer());
    }).onFailure(e -> {
      JsonObject verdict = StateCodes.verdict(e);
      if (verdict != null) {
        KvAnswers.count(metrics, ops, "rejected");
        ErrorContract.send(ctx, 200, StateCodes.preconditionEnvelope(verdict, verdict.getInteger("index", 0)));
        return;
      }
      KvAnswers.count(metrics, ops, "error");
      StateErrors.fail(ctx, FAMILY, e);
    });
  }

  /** A path route: the namespace and key from the path, the rest from the body (PUT, DELETE). */
  private static void single(RoutingContext ctx, KvProcedures kv, StateMetrics metrics, String op, JsonObject body) {
    guarded(ctx, () -> {
      String ns = ctx.pathParam("namespace");
      String key = pathKey(ctx);
      JsonObject o = body == null ? new JsonObject() : body.copy();
      for (String f : new String[] {"op", "ns", "key", "keys", "prefix"}) o.remove(f);
      o.put("op", op).put("ns", ns).put("key", key);
      var raw = body == null ? null : RawValues.ofObject(ctx.body().buffer().getBytes());
      run(ctx, kv, metrics, List.of(KvInput.parse(o, 0, raw)), true);
    });
  }

  /** The rest of the path after the namespace, percent-decoded once ({@code order/9f1/items} is one key). */
  static String pathKey(RoutingContext ctx) {
    String key = PathTail.after(ctx, PATH_PREFIX);
    if (key == null) throw new StateRefused(400, "kv_bad_key", "the key in the path is not percent-encoded UTF-8");
    return key;
  }

  private static void noQuery(RoutingContext ctx) {
    if (ctx.request().query() != null) {
      throw new StateRefused(400, "kv_bad_request", "this route takes no query string (a prefix never travels in a"
          + " URL): send the fields in the body");
    }
  }

  private static void list(RoutingContext ctx, KvProcedures kv) {
    noQuery(ctx);
    JsonObject b = Bodies.object(ctx);
    if (!(b.getValue("namespace") instanceof String ns) || !StorableText.storable(ns)) {
      throw new StateRefused(400, "kv_bad_namespace", "`namespace` is required (a string, " + KvInput.UNSTORABLE + ")");
    }
    String prefix = listText(b, "prefix");
    String after = listText(b, "after");
    Object limit = b.getValue("limit");
    if (limit != null && !(limit instanceof Integer)) {
      throw new StateRefused(400, "kv_bad_request", "`limit` must be an integer (1..1000, default 100)");
    }
    boolean keysOnly = listFlag(b, "keysOnly");
    boolean expired = listFlag(b, "includeExpired");
    kv.list(Tenancy.of(ctx), ns, prefix == null ? "" : prefix, after, limit == null ? 100 : (Integer) limit,
        keysOnly, expired).onSuccess(page -> {
          JsonText j = new JsonText(1024);
          long bytes = 0;
          j.beginObject().key("rows").beginArray();
          for (var r : page.rows()) {
            j.beginObject().field("key", r.key());
            if (!keysOnly) j.key("value").raw(r.value() == null ? null : r.value().getBytes(StandardCharsets.UTF_8));
            j.field("version", r.version()).field("expiresAt", Timestamps.micros(r.expiresAt()))
                .field("updatedAt", Timestamps.micros(r.updatedAt())).field("expired", r.expired()).endObject();
            bytes += r.bytes();
          }
          String next = page.truncated() && !page.rows().isEmpty() ? page.rows().get(page.rows().size() - 1).key() : null;
          j.endArray().field("truncated", page.truncated()).field("nextAfter", next).field("bytes", bytes).endObject();
          ErrorContract.send(ctx, 200, j.buffer());
        }).onFailure(e -> StateErrors.fail(ctx, FAMILY, e));
  }

  private static String listText(JsonObject b, String field) {
    Object v = b.getValue(field);
    if (v == null || v instanceof String s && StorableText.storable(s)) return (String) v;
    throw new StateRefused(400, "kv_bad_request", "`" + field + "` must be a string (" + KvInput.UNSTORABLE + ")");
  }

  private static boolean listFlag(JsonObject b, String field) {
    Object v = b.getValue(field);
    if (v == null || v instanceof Boolean) return Boolean.TRUE.equals(v);
    throw new StateRefused(400, "kv_bad_request", "`" + field + "` must be a boolean");
  }
}
