package io.queenvertx.webhook.api;

import io.queenvertx.node.NodeContext;
import io.queenvertx.kernel.ApiError;
import io.queenvertx.http.server.ErrorContract;
import io.queenvertx.http.server.RequestIds;
import io.queenvertx.http.server.RouteTable;
import io.queenvertx.db.WebhookStore;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.HttpException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Map;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The webhook API (issue #9, shared/seeds/webhook-dlq-listing.txt, API.md §9), additive to Queen's contract and in
 * the seed's own dialect, not Queen's: Bearer API keys ({@code QUEEN_WEBHOOK_API_KEYS}, the key names the tenant),
 * snake_case, a {@code {data, meta:{request_id}}} envelope and {@code {error:{code,message}, meta}} errors.
 *
 * <p>It is a vertx-web sub-router on {@code /v1} with its own fallback and failure handler, so every answer under
 * {@code /v1} (the router's own 404 and 413 too) is in this dialect and Queen's {@link ErrorContract} never sees one.
 * The node's front layers (request id, path guard, the router-wide auth pass, tenancy) run before it; the API's own
 * authentication is its API key. Routes: {@link EndpointRoutes} (push subscriptions), {@link DeadLetterRoutes} (the
 * DLQ listing, soft delete and replay); the tables are {@link WebhookStore}'s.
 */
public final class WebhookApi {
  static final String PREFIX = "/v1";
  /**
   * The sub-router's place among the node's router-wide layers: after the request id (-2000), the path guard (-1990),
   * auth (-950) and tenancy (-900), before Queen's exact-path rule (-800), so this API answers its own trailing-slash
   * 404 in its own dialect.
   */
  static final int ORDER = -850;
  private static final Logger log = LoggerFactory.getLogger(WebhookApi.class);

  private WebhookApi() {}

  /** A handler of the API: runs after the API key resolved the tenant; answers what goes under {@code data}. */
  @FunctionalInterface
  interface Action {
    Future<Reply> handle(RoutingContext ctx, UUID tenant);
  }

  /** A successful answer: the status and what goes under {@code data}. */
  record Reply(int status, Object data) {}

  /** Mounts the API's sub-router on {@code /v1} of the node's router (through its route table). */
  public static void mount(RouteTable routes, NodeContext node, Vertx vertx) {
    RouteTable table = routes.subRouter(PREFIX, ORDER, router(vertx));
    Map<String, UUID> keys = node.config().security().webhookApiKeys();
    var store = node.db().webhooks();
    EndpointRoutes.mount(table, keys, new EndpointRoutes(store, vertx));
    DeadLetterRoutes.mount(table, keys, new DeadLetterRoutes(store, node, vertx));
  }

  /**
   * The API's sub-router before its routes are added: the exact-path rule first, a 404 behind every route, and the
   * failure handler that renders every failure in this API's dialect.
   */
  static Router router(Vertx vertx) {
    Router sub = Router.router(vertx);
    // Queen's rule, in this dialect: "/v1/endpoints/" is not "/v1/endpoints" (Vert.x would match both).
    sub.route().order(-1).handler(ctx -> {
      String p = ctx.normalizedPath();
      if (p.length() > 1 && p.endsWith("/")) ctx.fail(404);
      else ctx.next();
    });
    sub.route().last().handler(ctx -> ctx.fail(404));
    sub.route().failureHandler(WebhookApi::onFailure);
    return sub;
  }

  /** The route handler of an action: the API key first, then the action, then the envelope. */
  static Handler<RoutingContext> keyed(Map<String, UUID> keys, Action action) {
    return ctx -> {
      UUID tenant = tenantOf(ctx.request().getHeader("Authorization"), keys);
      if (tenant == null) {
        ctx.fail(WebhookError.unauthorized());
        return;
      }
      Future<Reply> f;
      try {
        f = action.handle(ctx, tenant);
      } catch (RuntimeException e) {
        f = Future.failedFuture(e);
      }
      f.onSuccess(r -> ErrorContract.send(ctx, r.status(), new JsonObject().put("data", r.data())
              .put("meta", meta(ctx))))
          .onFailure(ctx::fail);
    };
  }

  /** The tenant of a {@code Bearer <key>} header, or null; every configured key is compared in constant time. */
  static UUID tenantOf(String header, Map<String, UUID> keys) {
    if (header == null) return null;
    String h = header.strip();
    if (h.length() <= 7 || !h.regionMatches(true, 0, "Bearer ", 0, 7)) return null;
    byte[] given = h.substring(7).strip().getBytes(StandardCharsets.UTF_8);
    if (given.length == 0) return null;
    UUID found = null;
    for (var e : keys.entrySet()) {
      if (MessageDigest.isEqual(given, e.getKey().getBytes(StandardCharsets.UTF_8))) found = e.getValue();
    }
    return found;
  }

  /**
   * The sub-router's failure handler: every failure under {@code /v1} ends here, a handler's own error, a shared
   * layer's (tenancy, auth, the body limit, an unparseable body) and the router's bare statuses (no such route).
   */
  static void onFailure(RoutingContext ctx) {
    var resp = ctx.response();
    if (resp.ended() || resp.closed()) return;
    Throwable f = ctx.failure();
    WebhookError e;
    if (f != null && !(f instanceof HttpException)) {
      e = WebhookError.of(f);
    } else {
      int status = f instanceof HttpException h ? h.getStatusCode() : ctx.statusCode() > 0 ? ctx.statusCode() : 500;
      e = WebhookError.ofStatus(status, ctx.request().method().name(), ctx.request().path());
    }
    if (e.status >= 500) {
      log.error("{} {} failed: {} request_id={}", ctx.request().method(), ctx.request().path(),
          f == null ? e.getMessage() : ApiError.describe(f), RequestIds.of(ctx),
          f instanceof WebhookError ? null : f instanceof ApiError a ? a.getCause() : f);
    }
    ErrorContract.send(ctx, e.status, new JsonObject()
        .put("error", new JsonObject().put("code", e.code).put("message", e.getMessage()))
        .put("meta", meta(ctx)));
  }

  private static JsonObject meta(RoutingContext ctx) {
    return new JsonObject().put("request_id", RequestIds.of(ctx));
  }

  /** The request body as a JSON object; anything else is a 400. */
  static JsonObject body(RoutingContext ctx) {
    Buffer b = ctx.body().buffer();
    if (b == null || b.toString().isBlank()) throw WebhookError.invalid("request body must be a JSON object");
    Object v;
    try {
      v = Json.decodeValue(b);
    } catch (DecodeException e) {
      throw WebhookError.invalid("request body must be a JSON object");
    }
    if (v instanceof JsonObject o) return o;
    if (v instanceof Map<?, ?> m) {
      @SuppressWarnings("unchecked")
      Map<String, Object> map = (Map<String, Object>) m;
      return new JsonObject(map);
    }
    throw WebhookError.invalid("request body must be a JSON object");
  }

  /** The {@code :id} of the path; one that is not a UUID names no row, so it is the same 404 as a missing one. */
  static UUID pathId(RoutingContext ctx, String what) {
    try {
      String text = ctx.pathParam("id");
      if (text != null && text.length() == 36) return UUID.fromString(text);
    } catch (IllegalArgumentException e) {
      // falls through to the 404
    }
    throw WebhookError.notFound(what + " not found");
  }

  /** The row an action needs, or its 404. */
  static <T> T found(T row, String what) {
    if (row == null) throw WebhookError.notFound(what + " not found");
    return row;
  }
}
