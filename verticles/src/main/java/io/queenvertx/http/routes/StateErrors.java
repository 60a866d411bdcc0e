package io.queenvertx.http.routes;

import io.queenvertx.db.SqlState;
import io.queenvertx.http.server.ErrorContract;
import io.queenvertx.kernel.ApiError;
import io.queenvertx.state.StateCodes;
import io.queenvertx.state.StateRefused;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

/**
 * The error bodies of the key-value and lock routes (docs/design/queen2-contract.md §1.2): {@code error} IS the code,
 * repeated in {@code code}, refined by {@code reason}, with the human {@code detail}. A refusal of the Java checks or
 * of the SQL (QV8xx / QV9xx) is a 4xx; the database's trouble a 503 {@code <family>_unavailable} with
 * {@code Retry-After: 1}; anything else a 500 {@code internal}.
 */
final class StateErrors {
  private StateErrors() {}

  /** Fails {@code ctx} with the body for {@code err}; {@code family} is {@code kv} or {@code locks}. */
  static void fail(RoutingContext ctx, String family, Throwable err) {
    if (err instanceof ApiError) {
      ctx.fail(err);
      return;
    }
    if (err instanceof StateRefused r) {
      String error = r.status() == 413 ? "payload_too_large" : family + "_bad_request";
      ctx.fail(ApiError.withBody(r.status(), body(error, r.reason(), r.getMessage())));
      return;
    }
    StateCodes.Code code = StateCodes.of(err);
    if (code != null) {
      ctx.fail(ApiError.withBody(code.status(), body(code.error(), code.reason(), SqlState.errorText(err))));
      return;
    }
    if (SqlState.unavailable(err)) {
      var resp = ctx.response();
      if (resp.ended() || resp.closed()) return;
      resp.putHeader("Retry-After", "1");
      ErrorContract.send(ctx, 503, body(family + "_unavailable", family + "_unavailable", SqlState.describe(err)));
      return;
    }
    ctx.fail(ApiError.withBody(500, body("internal", "internal", SqlState.describe(err))));
  }

  static JsonObject body(String error, String reason, String detail) {
    return new JsonObject().put("error", error).put("code", error).put("reason", reason).put("detail", detail);
  }
}
