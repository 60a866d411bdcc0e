package io.queenvertx.http.server;

import io.queenvertx.kernel.ApiError;
import io.queenvertx.auth.AuthRefused;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Renders every response shape of the error contract (shared/seeds/status-codes-and-errors.txt): the generic
 * envelope, 204 with no body at all, the unknown-route 404 with its {@code code}, and the body-limit 413 that is
 * deliberately not the envelope. Every JSON error body with an {@code error} passes {@link #coded} here, the ONE place
 * that gives it the Queen 2.x machine {@code code} of its status when it names none (queen2-contract.md §1.1), and
 * every 503 leaves with {@code Retry-After}.
 */
public final class ErrorContract {
  private static final Logger log = LoggerFactory.getLogger(ErrorContract.class);
  public static final String JSON = "application/json";
  /** Header name and value as pre-encoded ASCII: every JSON response carries them, and Netty copies them as bytes. */
  private static final CharSequence CONTENT_TYPE = io.vertx.core.http.HttpHeaders.CONTENT_TYPE;
  private static final CharSequence JSON_TYPE = io.vertx.core.http.HttpHeaders.createOptimized(JSON);
  private static final Buffer NO_SUCH_ROUTE =
      new JsonObject().put("error", "Not Found").put("code", "no_such_route").toBuffer();
  /** Seconds a client waits before retrying a request refused during a failover (about one check of the servers). */
  static final String RETRY_AFTER_S = "2";
  /** Seconds a client waits before retrying any other 503 (maintenance, overload) that names none itself. */
  static final String RETRY_AFTER_DEFAULT_S = "1";
  private static final String TOO_LARGE = "Failed to buffer the request body: length limit exceeded";

  private ErrorContract() {}

  /** Sends a JSON body; a 204 is sent with no body and no Content-Length whatever the handler built. */
  public static void send(RoutingContext ctx, int status, Buffer json) {
    var resp = ctx.response();
    if (resp.ended() || resp.closed()) return;
    if (status == 204) {
      // Strict HTTP/1.1 clients drop a connection whose 204 announces a body (seed: "204 carries no body at all").
      resp.setStatusCode(204).end();
      return;
    }
    if (status >= 400) {
      if (status == 503 && resp.headers().get("Retry-After") == null) {
        resp.putHeader("Retry-After", RETRY_AFTER_DEFAULT_S);
      }
      json = coded(status, json);
    }
    resp.setStatusCode(status).putHeader(CONTENT_TYPE, JSON_TYPE).end(json);
  }

  /**
   * The 2.x machine code of an error status (queen2-contract.md §1.1), for a body that names none: what the 2.x
   * clients copy into {@code error.code}.
   */
  public static String codeOf(int status) {
    return switch (status) {
      case 400 -> "bad_request";
      case 401 -> "unauthorized";
      case 403 -> "forbidden";
      case 404 -> "not_found";
      case 405 -> "method_not_allowed";
      case 409 -> "conflict";
      case 413 -> "payload_too_large";
      case 415 -> "unsupported_media_type";
      case 429 -> "rate_limited";
      case 503 -> "unavailable";
      default -> status >= 500 ? "internal" : "bad_request";
    };
  }

  /** An error body with {@code code} added when it is a JSON object with an {@code error} text and no {@code code}. */
  static Buffer coded(int status, Buffer body) {
    if (body == null || body.length() == 0 || body.getByte(0) != '{') return body;
    JsonObject o;
    try {
      o = body.toJsonObject();
    } catch (DecodeException e) {
      return body;
    }
    // (the webhook API's error is an object {code, message}: its own dialect, left as it is)
    if (!(o.getValue("error") instanceof String) || o.containsKey("code")) return body;
    return o.put("code", codeOf(status)).toBuffer();
  }

  public static void send(RoutingContext ctx, int status, Object body) {
    Buffer buf;
    if (body == null) buf = Buffer.buffer("null");
    else if (body instanceof Buffer b) buf = b;
    else if (body instanceof JsonObject o) buf = o.toBuffer();
    else if (body instanceof io.vertx.core.json.JsonArray a) buf = a.toBuffer();
    else if (body instanceof String s) buf = Buffer.buffer(s);
    else buf = io.vertx.core.json.Json.encodeToBuffer(body);
    send(ctx, status, buf);
  }

  public static void noContent(RoutingContext ctx) {
    send(ctx, 204, Buffer.buffer());
  }

  /** The router's failure handler: every failed context ends here. */
  public static void onFailure(RoutingContext ctx) {
    Throwable f = ctx.failure();
    if (f instanceof AuthRefused r) f = ApiError.of(r.status(), r.getMessage());
    var resp = ctx.response();
    if (resp.ended() || resp.closed()) return;
    if (duringFailover(ctx, f)) return;
    if (f instanceof ApiError e) {
      if (e.status() >= 500) logServerError(ctx, e.status(), e.getMessage(), e.getCause());
      if (e.status() == 204) {
        noContent(ctx);
      } else if (e.contentType().startsWith(JSON)) {
        send(ctx, e.status(), e.body());
      } else {
        resp.setStatusCode(e.status()).putHeader("content-type", e.contentType()).end(e.body());
      }
      return;
    }
    if (ctx.statusCode() == 413 || f instanceof io.vertx.ext.web.handler.HttpException h && h.getStatusCode() == 413) {
      // Produced by the body-limit layer before any handler: plain text, not the {"error"} envelope (API.md §1.6).
      resp.setStatusCode(413).putHeader("content-type", "text/plain; charset=utf-8").end(TOO_LARGE);
      return;
    }
    if (f instanceof DecodeException d) {
      send(ctx, 400, ApiError.of(400, "bad body: " + ApiError.describe(d)).body());
      return;
    }
    if (f instanceof io.vertx.ext.web.handler.HttpException h) {
      int code = h.getStatusCode();
      if (code >= 500) logServerError(ctx, code, h.getPayload() != null ? h.getPayload() : httpReason(code), h);
      if (code == 404) {
        send(ctx, 404, NO_SUCH_ROUTE);
      } else {
        send(ctx, code, ApiError.of(code, h.getPayload() != null ? h.getPayload() : httpReason(code)).body());
      }
      return;
    }
    int code = ctx.statusCode() > 0 ? ctx.statusCode() : 500;
    if (code >= 500) logServerError(ctx, code, f == null ? httpReason(code) : ApiError.describe(f), f);
    send(ctx, code, ApiError.of(code, f == null ? httpReason(code) : ApiError.describe(f)).body());
  }

  /**
   * A server error while the node's PostgreSQL is in a failover window (no server takes writes, or the one in use
   * just failed a call and is being checked, {@link io.queenvertx.db.PgServers#degraded}) is answered 503 with
   * {@code Retry-After}: the request can be retried once a primary is back. Sent here, with a WARN line, when so.
   */
  private static boolean duringFailover(RoutingContext ctx, Throwable f) {
    int status = f instanceof ApiError e ? e.status()
        : f instanceof io.vertx.ext.web.handler.HttpException h ? h.getStatusCode()
        : ctx.statusCode() > 0 ? ctx.statusCode() : 500;
    return status >= 500 && status != 503 && unavailable(ctx, ApiError.describe(f));
  }

  /**
   * Answers 503 with {@code Retry-After} and {@code {"error":"database unavailable (PostgreSQL failover), retry later:
   * <cause>"}} when the node's PostgreSQL is in a failover window; false (nothing sent) otherwise. For the routes
   * whose contract answers a database failure with 200 and per-item errors (acks), which call it when every item
   * failed.
   */
  public static boolean unavailable(RoutingContext ctx, String cause) {
    if (!io.queenvertx.db.PgServers.degraded(ctx.vertx())) return false;
    log.warn("{} {} 503 during a PostgreSQL failover: {} request_id={}", ctx.request().method(),
        RequestIds.loggable(ctx.request().path()), cause, RequestIds.of(ctx));
    ctx.response().putHeader("Retry-After", RETRY_AFTER_S);
    send(ctx, 503, ApiError.of(503, "database unavailable (PostgreSQL failover), retry later: " + cause).body());
    return true;
  }

  /**
   * The one ERROR line of a 5xx (the access line is only a WARN with the status): method, path, status, the error text
   * and the request id, with the cause's stack trace when there is one. A 4xx never comes here.
   */
  private static void logServerError(RoutingContext ctx, int status, String text, Throwable cause) {
    log.error("{} {} {} failed: {} request_id={}", ctx.request().method(), RequestIds.loggable(ctx.request().path()),
        status, text, RequestIds.of(ctx), cause);
  }

  /**
   * The fallback behind every route (API.md §1.5): JSON 404 {@code no_such_route} under /api, /auth and /streams (Queen 2's streams API, not offered) and for any
   * method other than GET/HEAD or a percent-encoded path; any other GET or HEAD is a client-side route of the
   * dashboard and gets its index.html.
   */
  public static void fallback(RoutingContext ctx) {
    String path = routedPath(ctx);
    HttpMethod m = ctx.request().method();
    boolean api = under(path, "/api") || under(path, "/auth") || under(path, "/streams"); // /streams: Queen 2's, not ours
    // a client-side route of the dashboard is plain text: a percent-encoded path is never one, so a spelling such as
    // /assets%2f..%2fapi/... gets the 404 rather than a page that looks like an answer
    boolean encoded = ctx.request().path() != null && ctx.request().path().indexOf('%') >= 0;
    if (api || encoded || !(m == HttpMethod.GET || m == HttpMethod.HEAD)) {
      send(ctx, 404, NO_SUCH_ROUTE);
    } else {
      DashboardRoutes.index(ctx);
    }
  }

  private static boolean under(String path, String root) {
    return path.equals(root) || path.startsWith(root + "/");
  }

  /**
   * The path the router matched on ({@code normalizedPath()}), which is the one every decision about a request must
   * use; the raw path when it cannot be normalised (a malformed escape, which the path guard refuses first).
   */
  public static String routedPath(RoutingContext ctx) {
    try {
      return ctx.normalizedPath();
    } catch (IllegalArgumentException e) {
      return ctx.request().path();
    }
  }

  private static String httpReason(int code) {
    return io.netty.handler.codec.http.HttpResponseStatus.valueOf(code).reasonPhrase();
  }
}
