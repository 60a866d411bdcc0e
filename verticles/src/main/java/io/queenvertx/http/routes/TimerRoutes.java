package io.queenvertx.http.routes;

import io.queenvertx.auth.AuthHandler;
import io.queenvertx.auth.AuthRefused;
import io.queenvertx.db.TimerProcedures;
import io.queenvertx.db.TimerProcedures.Applied;
import io.queenvertx.db.TimerProcedures.Op;
import io.queenvertx.http.server.Bodies;
import io.queenvertx.http.server.ErrorContract;
import io.queenvertx.http.server.Identity;
import io.queenvertx.http.server.OffLoop;
import io.queenvertx.http.server.RouteTable;
import io.queenvertx.http.server.Tenancy;
import io.queenvertx.kernel.ApiError;
import io.queenvertx.metrics.TimerMetrics;
import io.queenvertx.node.NodeContext;
import io.queenvertx.timers.TimerOps;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.util.List;

/**
 * The timer routes (docs/design/queen2-contract.md §3.1): schedule, reschedule and cancel ({@code POST
 * /api/v1/timers}), cancel one ({@code DELETE}), peek one and list a queue's ({@code GET}). The tenant is the
 * request's; every verdict of an operation is a 200 with its {@code ok}/{@code found}, a refusal is the timer
 * envelope ({@link TimerOps#envelope}). The key is the rest of the path ({@link PathTail}): a key holding {@code /}
 * is named by its slashes or by {@code %2F} (the 2.x client's {@code encodeURIComponent}), both the same key.
 */
final class TimerRoutes {
  static final int LIST_DEFAULT = 100;
  static final int LIST_MAX = 1000;

  private static final String PATH_PREFIX = "/api/v1/timers/";

  private TimerRoutes() {}

  static void mount(RouteTable routes, NodeContext node, Vertx vertx) {
    TimerProcedures timers = node.db().timers();
    TimerMetrics metrics = node.metrics().timers;
    routes.post("/api/v1/timers", ctx -> {
      var body = ctx.body().buffer();
      answer(ctx, OffLoop.parse(ctx, () -> TimerOps.parseBody(Bodies.value(body)))
          .map(parsed -> { // schedule needs a write token, cancel a read-write one (a 403 AuthRefused)
            AuthHandler.require(ctx, "/api/v1/timers", parsed.stream().map(Op::op).toList());
            return parsed;
          })
          .compose(parsed -> TimerOps.sealed(vertx, node.db().pushes(), node.cipher(), Tenancy.of(ctx), parsed))
          .compose(ops -> apply(vertx, timers, metrics, ctx, ops)).map(applied -> {
        JsonArray results = new JsonArray();
        for (Applied a : applied) results.add(a.toJson());
        return new JsonObject().put("results", results);
      }));
    });
    routes.get("/api/v1/timers/:queue", ctx -> {
      String queue = ctx.pathParam("queue");
      check(queue, "x", null);
      String after = ctx.queryParams().get("after");
      answer(ctx, timers.list(Tenancy.of(ctx), queue, after == null || after.isEmpty() ? null : after,
          Paging.limit(ctx, LIST_DEFAULT, LIST_MAX)));
    });
    routes.get("/api/v1/timers/:queue/*", ctx -> {
      Op op = check(ctx.pathParam("queue"), pathKey(ctx), null);
      answer(ctx, timers.peek(Tenancy.of(ctx), op.queue(), op.timerKey()));
    });
    routes.delete("/api/v1/timers/:queue/*", ctx -> {
      Op op = check(ctx.pathParam("queue"), pathKey(ctx), ctx.queryParams().get("txn"));
      answer(ctx, apply(vertx, timers, metrics, ctx, List.of(op)).map(applied -> applied.get(0).toJson()));
    });
  }

  /** The rest of the path after the queue, percent-decoded once ({@code daily/report} is one key). */
  private static String pathKey(RoutingContext ctx) {
    String key = PathTail.after(ctx, PATH_PREFIX);
    if (key == null) {
      throw ApiError.withBody(400, TimerOps.envelope("timers_bad_request", "timers_key_required",
          "the timer key in the path is not percent-encoded UTF-8"));
    }
    return key;
  }

  /** The path's queue and key checked as a cancel operation's (400/413 naming the field). */
  private static Op check(String queue, String key, String txn) {
    JsonObject o = new JsonObject().put("op", "cancel").put("queue", queue).put("timerKey", key).put("txn", txn);
    return TimerOps.parse(new JsonArray().add(o)).get(0);
  }

  private static Future<List<Applied>> apply(Vertx vertx, TimerProcedures timers, TimerMetrics metrics,
                                             RoutingContext ctx, List<Op> ops) {
    return timers.apply(Tenancy.of(ctx), Identity.subject(ctx), ops).onSuccess(applied -> {
      for (Applied a : applied) {
        if (a.scheduled()) metrics.scheduled.increment();
        else if (a.ok()) metrics.cancelled.increment();
      }
      TimerOps.armed(vertx, ops);
    });
  }

  private static void answer(RoutingContext ctx, Future<JsonObject> result) {
    result.onSuccess(body -> ErrorContract.send(ctx, 200, body)).onFailure(e -> {
      if (e instanceof AuthRefused) {
        ctx.fail(e);
        return;
      }
      ApiError refusal = e instanceof ApiError a ? a : TimerOps.refusal(e);
      if (refusal.status() == 503) {
        // the database away: answered like the key-value and lock routes' 503, without an ERROR line and stack trace
        // per request (the access line still records each 503)
        if (ctx.response().ended() || ctx.response().closed()) return;
        ctx.response().putHeader("Retry-After", "1");
        ErrorContract.send(ctx, 503, refusal.body());
        return;
      }
      ctx.fail(refusal);
    });
  }
}
