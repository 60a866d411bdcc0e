package io.queenvertx.http;

import io.queenvertx.boot.NodeContext;
import io.queenvertx.bus.Addresses;
import io.queenvertx.bus.DlqMoveCommand;
import io.queenvertx.bus.Verdict;
import io.queenvertx.json.Timestamps;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.Tuple;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The webhook API (issue #9, shared/seeds/webhook-dlq-listing.txt, API.md §9), additive to Queen's contract and in
 * the seed's own dialect, not Queen's: Bearer API keys ({@code QUEEN_WEBHOOK_API_KEYS}, the key names the tenant),
 * snake_case, a {@code {data, meta:{request_id}}} envelope and {@code {error:{code,message}, meta}} errors.
 *
 * <ul>
 *   <li>{@code /v1/endpoints}: push subscriptions (a queue, an optional partition, an HTTP(S) URL, a signing secret,
 *       a timeout and a retry policy); each is the consumer group {@code webhook:<id>} on its queue. Every change is
 *       announced on {@link Addresses#WEBHOOK_CHANGED} so the delivery verticles reload.</li>
 *   <li>{@code GET /v1/dlq/messages}: the {@code failed_permanent} deliveries, paged by an opaque keyset cursor over
 *       {@code (failed_at, id)} ascending, so a page never repeats or skips a row whatever is added or deleted
 *       between calls.</li>
 *   <li>{@code POST /v1/dlq/replay/:id}: the engine's atomic DLQ move of the delivery's dead-letter row, in place;
 *       {@code DELETE /v1/dlq/messages/:id}: a soft delete.</li>
 * </ul>
 */
final class WebhookRoutes {
  static final String GROUP_PREFIX = "webhook:";
  static final int DEFAULT_LIMIT = 100;
  static final int MAX_LIMIT = 1000;
  static final String BAD_URL = "endpoint must be a valid HTTP(S) URL";

  private static final Logger log = LoggerFactory.getLogger(WebhookRoutes.class);
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final int MAX_URL_LENGTH = 2048;
  private static final int MAX_SECRET_LENGTH = 1024;
  private static final String ENDPOINT_COLUMNS = "id, queue, partition, url, timeout_ms, max_attempts, "
      + "backoff_initial_ms, backoff_max_ms, max_concurrency, enabled, created_at, updated_at";
  private static final String DLQ_SELECT = "SELECT d.id, d.message_id, e.url, d.status, d.attempt_count, d.created_at, "
      + "d.delivered_at, d.first_attempt_at, d.response_status, d.response_latency_ms, d.processing_ms, "
      + "d.total_delivery_ms, d.queue_wait_ms, d.last_error, d.deleted_at, d.failed_at "
      + "FROM queen.webhook_deliveries d JOIN queen.webhook_endpoints e ON e.id = d.endpoint_id "
      + "WHERE d.tenant_id = $1 AND d.status = 'failed_permanent' AND ($2 OR d.deleted_at IS NULL) ";
  private static final String DLQ_FIRST_PAGE = DLQ_SELECT + "ORDER BY d.failed_at, d.id LIMIT $3";
  private static final String DLQ_NEXT_PAGE = DLQ_SELECT + "AND (d.failed_at, d.id) > ($4, $5) "
      + "ORDER BY d.failed_at, d.id LIMIT $3";

  private WebhookRoutes() {}

  /** A handler of the webhook API: runs after the API key resolved the tenant; answers the {@code data} of a reply. */
  @FunctionalInterface
  interface V1Handler {
    Future<Reply> handle(RoutingContext ctx, UUID tenant);
  }

  /** A successful answer: the status and what goes under {@code data}. */
  record Reply(int status, Object data) {}

  /** An answer of the error envelope: the status, the machine code and the human text. */
  static final class V1Error extends RuntimeException {
    final int status;
    final String code;

    V1Error(int status, String code, String message) {
      super(message, null, false, false);
      this.status = status;
      this.code = code;
    }

    static V1Error invalid(String m) {
      return new V1Error(400, "INVALID_REQUEST", m);
    }

    static V1Error notFound(String m) {
      return new V1Error(404, "NOT_FOUND", m);
    }
  }

  static void mount(RouteTable routes, NodeContext node, Vertx vertx) {
    Map<String, UUID> keys = node.config().security().webhookApiKeys();
    routes.post("/v1/endpoints", v1(keys, (ctx, t) -> createEndpoint(ctx, t, node, vertx)));
    routes.get("/v1/endpoints", v1(keys, (ctx, t) -> listEndpoints(t, node)));
    routes.get("/v1/endpoints/:id", v1(keys, (ctx, t) -> getEndpoint(ctx, t, node)));
    routes.patch("/v1/endpoints/:id", v1(keys, (ctx, t) -> updateEndpoint(ctx, t, node, vertx)));
    routes.delete("/v1/endpoints/:id", v1(keys, (ctx, t) -> deleteEndpoint(ctx, t, node, vertx)));
    routes.get("/v1/dlq/messages", v1(keys, (ctx, t) -> listDeadLetters(ctx, t, node)));
    routes.delete("/v1/dlq/messages/:id", v1(keys, (ctx, t) -> softDelete(ctx, t, node)));
    routes.post("/v1/dlq/replay/:id", v1(keys, (ctx, t) -> replay(ctx, t, node, vertx)));
  }

  // ---- envelope and authentication -------------------------------------------------------------------------------

  static io.vertx.core.Handler<RoutingContext> v1(Map<String, UUID> keys, V1Handler h) {
    return ctx -> {
      UUID tenant = tenantOf(ctx.request().getHeader("Authorization"), keys);
      if (tenant == null) {
        error(ctx, new V1Error(401, "UNAUTHORIZED", "Invalid or missing API key"));
        return;
      }
      Future<Reply> f;
      try {
        f = h.handle(ctx, tenant);
      } catch (RuntimeException e) {
        f = Future.failedFuture(e);
      }
      f.onSuccess(r -> ErrorContract.send(ctx, r.status(), new JsonObject().put("data", r.data())
              .put("meta", meta(ctx))))
          .onFailure(e -> error(ctx, e));
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

  private static JsonObject meta(RoutingContext ctx) {
    return new JsonObject().put("request_id", RequestIds.of(ctx));
  }

  private static void error(RoutingContext ctx, Throwable e) {
    V1Error v = asV1(e);
    if (v.status >= 500) {
      log.error("{} {} failed: {} request_id={}", ctx.request().method(), ctx.request().path(), ApiError.describe(e),
          RequestIds.of(ctx), e instanceof V1Error ? null : e instanceof ApiError a ? a.getCause() : e);
    }
    ErrorContract.send(ctx, v.status, new JsonObject()
        .put("error", new JsonObject().put("code", v.code).put("message", v.getMessage()))
        .put("meta", meta(ctx)));
  }

  private static V1Error asV1(Throwable e) {
    if (e instanceof V1Error v) return v;
    if (e instanceof DecodeException) return V1Error.invalid("request body must be a JSON object");
    if (e instanceof ApiError a) {
      if (a.status() == 503) return new V1Error(503, "SERVICE_UNAVAILABLE", "service unavailable, retry later");
      if (a.status() >= 400 && a.status() < 500) return new V1Error(a.status(), codeOf(a.status()), a.getMessage());
    }
    return new V1Error(500, "INTERNAL_ERROR", "internal error");
  }

  /** Whether a path belongs to the webhook API, whose every error (even the router's own) uses its envelope. */
  static boolean isV1(String path) {
    return path.equals("/v1") || path.startsWith("/v1/");
  }

  /**
   * An error the router produced before any webhook handler ran (no such route or method, the body-limit layer, an
   * unparseable body, a malformed tenant header): answered in the webhook API's envelope, not Queen's.
   */
  static void routerError(RoutingContext ctx, int status, Throwable f) {
    if (f instanceof ApiError || f instanceof DecodeException || f instanceof V1Error) {
      error(ctx, f);
    } else if (status == 404 || status == 405) {
      error(ctx, V1Error.notFound("no such route: " + ctx.request().method() + " " + ctx.request().path()));
    } else if (status == 413) {
      error(ctx, new V1Error(413, "PAYLOAD_TOO_LARGE", "request body too large"));
    } else if (status >= 400 && status < 500) {
      error(ctx, new V1Error(status, codeOf(status), "request refused (HTTP " + status + ")"));
    } else {
      error(ctx, f != null ? f : new V1Error(500, "INTERNAL_ERROR", "internal error"));
    }
  }

  private static String codeOf(int status) {
    return switch (status) {
      case 401 -> "UNAUTHORIZED";
      case 403 -> "FORBIDDEN";
      case 404 -> "NOT_FOUND";
      case 409 -> "CONFLICT";
      case 413 -> "PAYLOAD_TOO_LARGE";
      default -> "INVALID_REQUEST";
    };
  }

  private static JsonObject body(RoutingContext ctx) {
    Buffer b = ctx.body().buffer();
    if (b == null || b.toString().isBlank()) throw V1Error.invalid("request body must be a JSON object");
    Object v;
    try {
      v = Json.decodeValue(b);
    } catch (DecodeException e) {
      throw V1Error.invalid("request body must be a JSON object");
    }
    if (v instanceof JsonObject o) return o;
    if (v instanceof Map<?, ?> m) {
      @SuppressWarnings("unchecked")
      Map<String, Object> map = (Map<String, Object>) m;
      return new JsonObject(map);
    }
    throw V1Error.invalid("request body must be a JSON object");
  }

  private static UUID pathId(RoutingContext ctx, String what) {
    UUID id = MessageRoutes.parseOrNull(ctx.pathParam("id"));
    if (id == null) throw V1Error.notFound(what + " not found");
    return id;
  }

  // ---- endpoints -------------------------------------------------------------------------------------------------

  /** The settings of a push subscription, validated. */
  record EndpointSpec(String queue, String partition, String url, String secret, int timeoutMs, int maxAttempts,
                      int backoffInitialMs, int backoffMaxMs, int maxConcurrency, boolean enabled) {}

  /**
   * Validates a create body ({@code current} null) or a partial update over {@code current}. An explicit null is an
   * absent key, except {@code partition}: null there means every partition.
   */
  static EndpointSpec spec(JsonObject b, EndpointSpec current) {
    boolean create = current == null;
    String queue = create ? null : current.queue();
    if (b.getValue("queue") != null || create) {
      if (!(b.getValue("queue") instanceof String s) || s.isBlank()) {
        throw V1Error.invalid(create && b.getValue("queue") == null ? "queue is required"
            : "queue must be a non-empty string");
      }
      queue = s.strip();
    }
    String partition = create ? null : current.partition();
    if (b.containsKey("partition")) {
      Object p = b.getValue("partition");
      if (p == null) {
        partition = null;
      } else if (!(p instanceof String s) || s.isBlank()) {
        throw V1Error.invalid("partition must be a non-empty string or null");
      } else {
        partition = s.strip();
      }
    }
    String url = create ? null : current.url();
    if (b.getValue("url") != null || create) {
      if (b.getValue("url") == null) throw V1Error.invalid("url is required");
      url = httpUrl(b.getValue("url"));
    }
    String secret = create ? null : current.secret();
    if (b.getValue("secret") != null) {
      if (!(b.getValue("secret") instanceof String s) || s.isEmpty() || s.length() > MAX_SECRET_LENGTH) {
        throw V1Error.invalid("secret must be a non-empty string of at most " + MAX_SECRET_LENGTH + " characters");
      }
      secret = s;
    }
    if (secret == null) secret = newSecret();
    int timeout = integer(b, "timeout_ms", create ? 10_000 : current.timeoutMs(), 1, 120_000);
    int attempts = integer(b, "max_attempts", create ? 5 : current.maxAttempts(), 1, 50);
    int initial = integer(b, "backoff_initial_ms", create ? 1_000 : current.backoffInitialMs(), 1, 3_600_000);
    int max = integer(b, "backoff_max_ms", create ? 60_000 : current.backoffMaxMs(), 1, 86_400_000);
    if (max < initial) throw V1Error.invalid("backoff_max_ms must be greater than or equal to backoff_initial_ms");
    int concurrency = integer(b, "max_concurrency", create ? 4 : current.maxConcurrency(), 1, 64);
    boolean enabled = create || current.enabled();
    if (b.getValue("enabled") != null) {
      if (!(b.getValue("enabled") instanceof Boolean e)) throw V1Error.invalid("enabled must be a boolean");
      enabled = e;
    }
    return new EndpointSpec(queue, partition, url, secret, timeout, attempts, initial, max, concurrency, enabled);
  }

  /** An absolute http or https URL with a host; nothing else is ever dialled. */
  static String httpUrl(Object v) {
    if (!(v instanceof String s) || s.isBlank() || s.length() > MAX_URL_LENGTH) throw V1Error.invalid(BAD_URL);
    String text = s.strip();
    URI u;
    try {
      u = new URI(text);
    } catch (URISyntaxException e) {
      throw V1Error.invalid(BAD_URL);
    }
    String scheme = u.getScheme() == null ? "" : u.getScheme().toLowerCase(Locale.ROOT);
    if (!u.isAbsolute() || u.isOpaque() || !(scheme.equals("http") || scheme.equals("https"))
        || u.getHost() == null || u.getHost().isEmpty() || u.getRawUserInfo() != null) {
      throw V1Error.invalid(BAD_URL);
    }
    return text;
  }

  private static int integer(JsonObject b, String key, int def, int min, int max) {
    Object v = b.getValue(key);
    if (v == null) return def;
    String err = key + " must be an integer between " + min + " and " + max;
    if (!(v instanceof Number n) || n instanceof Double && n.doubleValue() != Math.rint(n.doubleValue())
        || n instanceof Float || n instanceof java.math.BigDecimal) {
      throw V1Error.invalid(err);
    }
    double d = n.doubleValue();
    if (d < min || d > max) throw V1Error.invalid(err);
    return n.intValue();
  }

  static String newSecret() {
    byte[] b = new byte[32];
    RANDOM.nextBytes(b);
    return HexFormat.of().formatHex(b);
  }

  private static Future<Reply> createEndpoint(RoutingContext ctx, UUID tenant, NodeContext node, Vertx vertx) {
    EndpointSpec s = spec(body(ctx), null);
    return node.pool().preparedQuery("INSERT INTO queen.webhook_endpoints(tenant_id, queue, partition, url, secret, "
            + "timeout_ms, max_attempts, backoff_initial_ms, backoff_max_ms, max_concurrency, enabled) "
            + "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING " + ENDPOINT_COLUMNS)
        .execute(Tuple.from(new Object[] {tenant, s.queue(), s.partition(), s.url(), s.secret(), s.timeoutMs(),
            s.maxAttempts(), s.backoffInitialMs(), s.backoffMaxMs(), s.maxConcurrency(), s.enabled()}))
        .map(rows -> {
          JsonObject e = renderEndpoint(rows.iterator().next());
          changed(vertx, e.getString("id"));
          return new Reply(201, e.put("secret", s.secret()));
        });
  }

  private static Future<Reply> listEndpoints(UUID tenant, NodeContext node) {
    return node.pool().preparedQuery("SELECT " + ENDPOINT_COLUMNS + " FROM queen.webhook_endpoints "
            + "WHERE tenant_id = $1 ORDER BY created_at DESC, id DESC")
        .execute(Tuple.of(tenant))
        .map(rows -> {
          JsonArray out = new JsonArray();
          for (Row r : rows) out.add(renderEndpoint(r));
          return new Reply(200, new JsonObject().put("endpoints", out));
        });
  }

  private static Future<Reply> getEndpoint(RoutingContext ctx, UUID tenant, NodeContext node) {
    UUID id = pathId(ctx, "endpoint");
    return node.pool().preparedQuery("SELECT " + ENDPOINT_COLUMNS + " FROM queen.webhook_endpoints "
            + "WHERE id = $1 AND tenant_id = $2")
        .execute(Tuple.of(id, tenant))
        .map(rows -> new Reply(200, renderEndpoint(only(rows, "endpoint"))));
  }

  /** Reads the row FOR UPDATE, merges and validates the patch over it, and writes it back, in one transaction. */
  private static Future<Reply> updateEndpoint(RoutingContext ctx, UUID tenant, NodeContext node, Vertx vertx) {
    UUID id = pathId(ctx, "endpoint");
    JsonObject patch = body(ctx);
    return node.pool().withTransaction(conn -> conn
            .preparedQuery("SELECT queue, partition, url, secret, timeout_ms, max_attempts, backoff_initial_ms, "
                + "backoff_max_ms, max_concurrency, enabled FROM queen.webhook_endpoints "
                + "WHERE id = $1 AND tenant_id = $2 FOR UPDATE")
            .execute(Tuple.of(id, tenant))
            .compose(rows -> {
              Row r = only(rows, "endpoint");
              EndpointSpec cur = new EndpointSpec(r.getString("queue"), r.getString("partition"), r.getString("url"),
                  r.getString("secret"), r.getInteger("timeout_ms"), r.getInteger("max_attempts"),
                  r.getInteger("backoff_initial_ms"), r.getInteger("backoff_max_ms"), r.getInteger("max_concurrency"),
                  r.getBoolean("enabled"));
              EndpointSpec s = spec(patch, cur);
              return conn.preparedQuery("UPDATE queen.webhook_endpoints SET queue = $3, partition = $4, url = $5, "
                      + "secret = $6, timeout_ms = $7, max_attempts = $8, backoff_initial_ms = $9, "
                      + "backoff_max_ms = $10, max_concurrency = $11, enabled = $12, updated_at = now() "
                      + "WHERE id = $1 AND tenant_id = $2 RETURNING " + ENDPOINT_COLUMNS)
                  .execute(Tuple.from(new Object[] {id, tenant, s.queue(), s.partition(), s.url(), s.secret(),
                      s.timeoutMs(), s.maxAttempts(), s.backoffInitialMs(), s.backoffMaxMs(), s.maxConcurrency(),
                      s.enabled()}));
            }))
        .map(rows -> {
          changed(vertx, id.toString());
          return new Reply(200, renderEndpoint(rows.iterator().next()));
        });
  }

  private static Future<Reply> deleteEndpoint(RoutingContext ctx, UUID tenant, NodeContext node, Vertx vertx) {
    UUID id = pathId(ctx, "endpoint");
    return node.pool().preparedQuery("DELETE FROM queen.webhook_endpoints WHERE id = $1 AND tenant_id = $2 "
            + "RETURNING id")
        .execute(Tuple.of(id, tenant))
        .map(rows -> {
          only(rows, "endpoint");
          changed(vertx, id.toString());
          return new Reply(200, new JsonObject().put("id", id.toString()).put("deleted", true));
        });
  }

  private static void changed(Vertx vertx, String id) {
    vertx.eventBus().publish(Addresses.WEBHOOK_CHANGED, new JsonObject().put("id", id));
  }

  static JsonObject renderEndpoint(Row r) {
    String id = r.getUUID("id").toString();
    return new JsonObject()
        .put("id", id)
        .put("queue", r.getString("queue"))
        .put("partition", r.getString("partition"))
        .put("url", r.getString("url"))
        .put("timeout_ms", r.getInteger("timeout_ms"))
        .put("max_attempts", r.getInteger("max_attempts"))
        .put("backoff_initial_ms", r.getInteger("backoff_initial_ms"))
        .put("backoff_max_ms", r.getInteger("backoff_max_ms"))
        .put("max_concurrency", r.getInteger("max_concurrency"))
        .put("enabled", r.getBoolean("enabled"))
        .put("consumer_group", GROUP_PREFIX + id)
        .put("created_at", Timestamps.millis(r.getOffsetDateTime("created_at")))
        .put("updated_at", Timestamps.millis(r.getOffsetDateTime("updated_at")));
  }

  private static Row only(RowSet<Row> rows, String what) {
    if (rows.size() == 0) throw V1Error.notFound(what + " not found");
    return rows.iterator().next();
  }

  // ---- the DLQ -----------------------------------------------------------------------------------------------------

  /** A position in the (failed_at, id) keyset: the last row of the previous page. */
  record Cursor(long failedAtMicros, UUID id) {
    String encode() {
      return Base64.getUrlEncoder().withoutPadding()
          .encodeToString(("v1:" + failedAtMicros + ":" + id).getBytes(StandardCharsets.US_ASCII));
    }

    OffsetDateTime failedAt() {
      return Instant.EPOCH.plus(failedAtMicros, ChronoUnit.MICROS).atOffset(ZoneOffset.UTC);
    }

    static Cursor of(OffsetDateTime t, UUID id) {
      Instant i = t.toInstant();
      return new Cursor(Math.addExact(Math.multiplyExact(i.getEpochSecond(), 1_000_000L), i.getNano() / 1_000), id);
    }

    static Cursor decode(String text) {
      try {
        String s = new String(Base64.getUrlDecoder().decode(text), StandardCharsets.US_ASCII);
        String[] p = s.split(":", -1);
        if (p.length != 3 || !p[0].equals("v1") || p[2].length() != 36) throw V1Error.invalid("cursor is malformed");
        long micros = Long.parseLong(p[1]);
        // years 1..9999, well inside timestamptz's range
        if (micros < -62_135_596_800_000_000L || micros > 253_402_300_799_999_999L) {
          throw V1Error.invalid("cursor is malformed");
        }
        return new Cursor(micros, UUID.fromString(p[2]));
      } catch (IllegalArgumentException e) {
        throw V1Error.invalid("cursor is malformed");
      }
    }
  }

  static int limit(String v) {
    if (v == null) return DEFAULT_LIMIT;
    String err = "limit must be an integer between 1 and " + MAX_LIMIT;
    int n;
    try {
      n = Integer.parseInt(v.strip());
    } catch (NumberFormatException e) {
      throw V1Error.invalid(err);
    }
    if (n < 1 || n > MAX_LIMIT) throw V1Error.invalid(err);
    return n;
  }

  static boolean flag(String key, String v) {
    if (v == null || v.isEmpty()) return false;
    return switch (v.strip().toLowerCase(Locale.ROOT)) {
      case "true", "1" -> true;
      case "false", "0" -> false;
      default -> throw V1Error.invalid(key + " must be true or false");
    };
  }

  private static Future<Reply> listDeadLetters(RoutingContext ctx, UUID tenant, NodeContext node) {
    int limit = limit(ctx.request().getParam("limit"));
    boolean includeDeleted = flag("include_deleted", ctx.request().getParam("include_deleted"));
    String c = ctx.request().getParam("cursor");
    Cursor after = c == null || c.isEmpty() ? null : Cursor.decode(c);
    var q = after == null
        ? node.pool().preparedQuery(DLQ_FIRST_PAGE).execute(Tuple.of(tenant, includeDeleted, limit + 1))
        : node.pool().preparedQuery(DLQ_NEXT_PAGE)
            .execute(Tuple.of(tenant, includeDeleted, limit + 1, after.failedAt(), after.id()));
    return q.map(rows -> {
      JsonArray messages = new JsonArray();
      Cursor last = null;
      boolean more = false;
      for (Row r : rows) {
        if (messages.size() == limit) {
          more = true;
          break;
        }
        messages.add(renderDeadLetter(r));
        last = Cursor.of(r.getOffsetDateTime("failed_at"), r.getUUID("id"));
      }
      return new Reply(200, new JsonObject().put("messages", messages).put("has_more", more)
          .put("next_cursor", more ? last.encode() : null));
    });
  }

  /** The seed's message object plus {@code id}; {@code deleted_at} only on a soft-deleted row. */
  static JsonObject renderDeadLetter(Row r) {
    JsonObject m = new JsonObject()
        .put("id", r.getUUID("id").toString())
        .put("message_id", r.getUUID("message_id").toString())
        .put("endpoint", r.getString("url"))
        .put("status", r.getString("status"))
        .put("attempt_count", r.getInteger("attempt_count"))
        .put("created_at", Timestamps.millis(r.getOffsetDateTime("created_at")))
        .put("delivered_at", Timestamps.millis(r.getOffsetDateTime("delivered_at")))
        .put("first_attempt_at", Timestamps.millis(r.getOffsetDateTime("first_attempt_at")))
        .put("response_status", r.getInteger("response_status"))
        .put("response_latency_ms", r.getInteger("response_latency_ms"))
        .put("processing_ms", r.getInteger("processing_ms"))
        .put("total_delivery_ms", r.getInteger("total_delivery_ms"))
        .put("queue_wait_ms", r.getInteger("queue_wait_ms"))
        .put("last_error", r.getString("last_error"));
    OffsetDateTime deleted = r.getOffsetDateTime("deleted_at");
    if (deleted != null) m.put("deleted_at", Timestamps.millis(deleted));
    return m;
  }

  private static Future<Reply> softDelete(RoutingContext ctx, UUID tenant, NodeContext node) {
    UUID id = pathId(ctx, "dead letter");
    return node.pool().preparedQuery("UPDATE queen.webhook_deliveries SET deleted_at = now(), updated_at = now() "
            + "WHERE id = $1 AND tenant_id = $2 AND status = 'failed_permanent' AND deleted_at IS NULL "
            + "RETURNING deleted_at")
        .execute(Tuple.of(id, tenant))
        .map(rows -> new Reply(200, new JsonObject().put("id", id.toString())
            .put("deleted_at", Timestamps.millis(only(rows, "dead letter").getOffsetDateTime("deleted_at")))));
  }

  /**
   * Moves the delivery's dead-letter row back into its queue in place (the engine's atomic move; the redelivery has
   * transaction id {@code dlq:<dlq row id>} and gets a delivery row of its own), then drops the old delivery row.
   */
  private static Future<Reply> replay(RoutingContext ctx, UUID tenant, NodeContext node, Vertx vertx) {
    UUID id = pathId(ctx, "dead letter");
    return node.pool().preparedQuery("SELECT message_id, dlq_id FROM queen.webhook_deliveries "
            + "WHERE id = $1 AND tenant_id = $2 AND status = 'failed_permanent' AND deleted_at IS NULL")
        .execute(Tuple.of(id, tenant))
        .compose(rows -> {
          Row r = only(rows, "dead letter");
          UUID dlqId = r.getUUID("dlq_id");
          String messageId = r.getUUID("message_id").toString();
          if (dlqId == null) throw V1Error.notFound("dead letter has no dead-letter queue entry to replay");
          if (node.maintenance().pushMaintenance()) throw maintenance();
          return Bus.<Verdict>request(vertx, Addresses.DLQ_MOVE,
                  new DlqMoveCommand(tenant, dlqId.toString(), null, null, null, null))
              .compose(v -> afterMove(v, id, messageId, dlqId, tenant, node));
        });
  }

  private static Future<Reply> afterMove(Verdict v, UUID id, String messageId, UUID dlqId, UUID tenant,
                                         NodeContext node) {
    JsonObject b = v.body() == null ? new JsonObject() : v.body();
    if (v.status() == 200 && "moved".equals(b.getString("result"))) {
      JsonObject as = b.getJsonObject("replayedAs", new JsonObject());
      Reply reply = new Reply(200, new JsonObject()
          .put("id", id.toString())
          .put("message_id", messageId)
          .put("result", "moved")
          .put("replayed_as", new JsonObject()
              .put("transaction_id", as.getString("transaction_id", "dlq:" + dlqId))
              .put("offset", as.getLong("offset"))
              .put("message_id", as.getString("message_id"))));
      // The move is done and irreversible: a failure to drop the old row is logged, not answered.
      return node.pool().preparedQuery("DELETE FROM queen.webhook_deliveries WHERE id = $1 AND tenant_id = $2")
          .execute(Tuple.of(id, tenant))
          .map(rows -> reply)
          .otherwise(e -> {
            log.warn("replayed dead letter {} (dlq {}) but could not drop its delivery row: {}", id, dlqId,
                ApiError.describe(e));
            return reply;
          });
    }
    if (v.status() == 200) {
      return Future.failedFuture(new V1Error(409, "CONFLICT", "the message was already replayed: transaction "
          + "dlq:" + dlqId + " is already in the queue; the dead letter is kept"));
    }
    if (v.status() == 404) {
      return Future.failedFuture(V1Error.notFound("the dead letter's queue entry is gone (already replayed or "
          + "purged)"));
    }
    if (v.status() == 503) return Future.failedFuture(maintenance());
    String text = b.getString("error", "replay failed");
    return Future.failedFuture(new V1Error(500, "INTERNAL_ERROR", text));
  }

  private static V1Error maintenance() {
    return new V1Error(503, "SERVICE_UNAVAILABLE", "push maintenance is on; the dead letter is untouched, replay it "
        + "again once maintenance is off");
  }
}
