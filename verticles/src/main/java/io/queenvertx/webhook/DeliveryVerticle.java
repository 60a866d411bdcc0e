package io.queenvertx.webhook;

import io.queenvertx.db.Database;
import io.queenvertx.db.WebhookStore;
import io.queenvertx.bus.AckCommand;
import io.queenvertx.bus.AckItem;
import io.queenvertx.bus.Addresses;
import io.queenvertx.bus.LeaseCommand;
import io.queenvertx.bus.LocalCodec;
import io.queenvertx.bus.PopCommand;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.Message;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import io.queenvertx.db.WebhookStore.Delivery;
import io.queenvertx.db.WebhookStore.Outcome;
import io.vertx.sqlclient.Row;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.OffsetDateTime;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Webhook delivery (issue #9), one instance per node. Every enabled endpoint is a consumer group
 * {@code webhook:<endpoint id>} on its queue, subscribed from the endpoint's creation time (messages stored before
 * the subscription existed are not delivered); each endpoint runs {@code max_concurrency} lanes, each lane pops a
 * batch under the group's lease (so one partition is delivered by one lane of one node at a time, in offset order),
 * POSTs each message signed with HMAC-SHA256, acks it on a 2xx, retries with exponential backoff and jitter
 * (honouring {@code Retry-After} on 429/503, capped), and after the last attempt dead-letters it through the engine
 * (ack status {@code dlq}) with status {@code failed_permanent}. A slow or hanging receiver only holds its own lanes:
 * every request has the endpoint's timeout, redirects are never followed, and only http(s) URLs are called. The
 * endpoints and the delivery records are read and written through {@link WebhookStore}.
 */
public final class DeliveryVerticle extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(DeliveryVerticle.class);
  static final int BATCH = 10;
  static final long POLL_TIMEOUT_MS = 5000;
  static final int LEASE_SECONDS = 60;
  public static final String SIGNATURE_HEADER = "X-Queen-Signature";
  public static final String TIMESTAMP_HEADER = "X-Queen-Timestamp";
  /** Each endpoint {@code <id>} is the consumer group {@code webhook:<id>} on its queue. */
  public static final String GROUP_PREFIX = "webhook:";

  /** One endpoint's settings and its running lanes. */
  private final class Endpoint {
    final UUID id;
    final UUID tenant;
    final String queue;
    final String partition;
    final String url;
    final byte[] secret;
    final int timeoutMs;
    final int maxAttempts;
    final long backoffInitialMs;
    final long backoffMaxMs;
    final int lanes;
    final WebClient client;
    final String updatedAt;
    final OffsetDateTime createdAt;
    volatile boolean stopped;

    Endpoint(Row r) {
      id = r.getUUID("id");
      tenant = r.getUUID("tenant_id");
      queue = r.getString("queue");
      partition = r.getString("partition");
      url = r.getString("url");
      secret = r.getString("secret").getBytes(StandardCharsets.UTF_8);
      timeoutMs = Math.max(1, r.getInteger("timeout_ms"));
      maxAttempts = Math.max(1, r.getInteger("max_attempts"));
      backoffInitialMs = Math.max(1, r.getInteger("backoff_initial_ms"));
      backoffMaxMs = Math.max(backoffInitialMs, r.getInteger("backoff_max_ms"));
      lanes = Math.max(1, Math.min(64, r.getInteger("max_concurrency")));
      updatedAt = String.valueOf(r.getOffsetDateTime("updated_at"));
      createdAt = r.getOffsetDateTime("created_at");
      var options = new WebClientOptions()
          .setFollowRedirects(false)
          .setConnectTimeout(Math.min(timeoutMs, 10_000))
          .setIdleTimeout(60)
          .setKeepAlive(true)
          .setUserAgent("queen-vertx-webhook/1.0");
      client = WebClient.create(vertx, options, new PoolOptions().setHttp1MaxSize(lanes));
    }

    String group() {
      return GROUP_PREFIX + id;
    }
  }

  private final WebhookStore store;
  private final Map<UUID, Endpoint> endpoints = new HashMap<>();

  public DeliveryVerticle(Database db) {
    this.store = db.webhooks();
  }

  @Override
  public Future<?> start() {
    vertx.eventBus().<JsonObject>consumer(Addresses.WEBHOOK_CHANGED, m -> reload());
    vertx.setPeriodic(30_000, t -> reload());
    reload();
    return Future.succeededFuture();
  }

  @Override
  public Future<?> stop() {
    for (Endpoint e : endpoints.values()) stopEndpoint(e);
    endpoints.clear();
    return Future.succeededFuture();
  }

  private void reload() {
    store.enabledEndpoints().onSuccess(rows -> {
      Map<UUID, Row> wanted = new HashMap<>();
      for (Row r : rows) wanted.put(r.getUUID("id"), r);
      for (var it = endpoints.entrySet().iterator(); it.hasNext(); ) {
        var e = it.next();
        Row r = wanted.get(e.getKey());
        if (r == null || !String.valueOf(r.getOffsetDateTime("updated_at")).equals(e.getValue().updatedAt)) {
          stopEndpoint(e.getValue());
          it.remove();
        }
      }
      for (var w : wanted.entrySet()) {
        if (endpoints.containsKey(w.getKey())) continue;
        var e = new Endpoint(w.getValue());
        if (!allowedUrl(e.url)) {
          log.warn("webhook endpoint {} has a non-HTTP(S) URL; not delivering", e.id);
          continue;
        }
        endpoints.put(e.id, e);
        for (int i = 0; i < e.lanes; i++) lane(e);
      }
    }).onFailure(err -> log.debug("webhook endpoints not loaded: {}", err.getMessage()));
  }

  private void stopEndpoint(Endpoint e) {
    e.stopped = true;
    e.client.close();
  }

  static boolean allowedUrl(String url) {
    try {
      URI u = URI.create(url);
      String scheme = u.getScheme() == null ? "" : u.getScheme().toLowerCase(java.util.Locale.ROOT);
      return (scheme.equals("http") || scheme.equals("https")) && u.getHost() != null;
    } catch (RuntimeException ex) {
      return false;
    }
  }

  // ---- one lane: pop, deliver in order, ack -----------------------------------------------------------------

  private void lane(Endpoint e) {
    if (e.stopped) return;
    var pop = new PopCommand(e.tenant, e.queue, e.partition, null, null, e.group(), BATCH, 1, false, true,
        POLL_TIMEOUT_MS, LEASE_SECONDS, "timestamp", e.createdAt);
    vertx.eventBus().<Buffer>request(Addresses.POP, pop, LocalCodec.options(POLL_TIMEOUT_MS + 30_000))
        .map(Message::body)
        .compose(body -> body == null ? Future.succeededFuture() : deliverBatch(e, body))
        .onComplete(ar -> {
          if (ar.failed()) {
            log.warn("webhook {} lane failed: {}", e.id, ar.cause().getMessage());
            vertx.setTimer(1000, t -> lane(e));
          } else {
            context.runOnContext(v -> lane(e));
          }
        });
  }

  private Future<Void> deliverBatch(Endpoint e, Buffer body) {
    JsonObject pop = new JsonObject(body);
    JsonArray msgs = pop.getJsonArray("messages", new JsonArray());
    String leaseId = pop.getString("leaseId");
    List<byte[]> payloads;
    try {
      payloads = RawPayloads.of(body);
    } catch (java.io.IOException ex) {
      return Future.failedFuture(ex);
    }
    // In offset order; a dead-lettered message releases the lease, so the rest of the batch is left to the next pop.
    Future<Boolean> chain = Future.succeededFuture(true);
    for (int i = 0; i < msgs.size(); i++) {
      JsonObject m = msgs.getJsonObject(i);
      Buffer payload = Buffer.buffer(payloads.get(i));
      chain = chain.compose(go -> go && !e.stopped ? deliver(e, m, payload, leaseId) : Future.succeededFuture(false));
    }
    return chain.mapEmpty();
  }

  /**
   * Delivers one message with all its attempts, then acks it (completed, or dlq after the last attempt); true when
   * the rest of the batch may follow under the same lease.
   */
  private Future<Boolean> deliver(Endpoint e, JsonObject m, Buffer body, String leaseId) {
    UUID pid = UUID.fromString(m.getString("partitionId"));
    String txn = m.getString("transactionId");
    UUID messageId = UUID.fromString(m.getString("id"));
    OffsetDateTime createdAt = OffsetDateTime.parse(m.getString("createdAt"));
    Delivery d = new Delivery(e.id, pid, txn);
    return renew(e, leaseId, 0)
        .compose(v -> store.queued(d, e.tenant, messageId, createdAt))
        .compose(v -> attempt(e, m, leaseId, d, body, 1, null));
  }

  private Future<Boolean> attempt(Endpoint e, JsonObject m, String leaseId, Delivery d, Buffer body, int n,
                                  OffsetDateTime firstAttempt) {
    if (e.stopped) return Future.succeededFuture(false);
    long t0 = System.nanoTime();
    OffsetDateTime now = OffsetDateTime.now();
    OffsetDateTime first = firstAttempt == null ? now : firstAttempt;
    String timestamp = Long.toString(System.currentTimeMillis() / 1000);
    String signature = "sha256=" + sign(e.secret, timestamp, body);
    long processingMs = (System.nanoTime() - t0) / 1_000_000;
    Promise<Boolean> done = Promise.promise();
    store.attempting(d, n, first)
        .onComplete(x -> {
          long sent = System.nanoTime();
          e.client.postAbs(e.url)
              .timeout(e.timeoutMs)
              .putHeader("content-type", "application/json")
              .putHeader(SIGNATURE_HEADER, signature)
              .putHeader(TIMESTAMP_HEADER, timestamp)
              .putHeader("X-Queen-Message-Id", m.getString("id"))
              .putHeader("X-Queen-Transaction-Id", d.transactionId())
              .putHeader("X-Queen-Attempt", Integer.toString(n))
              .sendBuffer(body)
              .onComplete(ar -> {
                int latency = (int) ((System.nanoTime() - sent) / 1_000_000);
                Integer status = ar.succeeded() ? ar.result().statusCode() : null;
                boolean ok = status != null && status >= 200 && status < 300;
                String error = ok ? null : ar.failed() ? describe(ar.cause()) : "HTTP " + status;
                Outcome o = new Outcome(status, latency, (int) processingMs, error);
                Future<Boolean> next;
                if (ok) {
                  next = store.succeeded(d, o)
                      .compose(v -> ack(e, m, leaseId, "completed", null))
                      .map(v -> true);
                } else if (n >= e.maxAttempts) {
                  next = ack(e, m, leaseId, "dlq", error)
                      .compose(v -> store.failedPermanently(d, o, e.group()))
                      .map(v -> false);
                } else {
                  long wait = backoff(e, n, ar.succeeded() ? ar.result().getHeader("Retry-After") : null, status);
                  next = store.pendingRetry(d, o, wait)
                      .compose(v -> renew(e, leaseId, wait))
                      .compose(v -> sleep(wait))
                      .compose(v -> attempt(e, m, leaseId, d, body, n + 1, first));
                }
                next.onComplete(done);
              });
        });
    return done.future();
  }

  /** Exponential from the initial delay, capped, with jitter; {@code Retry-After} (seconds) on 429/503 wins. */
  static long backoff(long initialMs, long maxMs, int attempt, String retryAfter, Integer status) {
    if (retryAfter != null && status != null && (status == 429 || status == 503)) {
      try {
        long s = Long.parseLong(retryAfter.trim());
        return Math.min(Math.max(0, s) * 1000, maxMs);
      } catch (NumberFormatException ignored) {
        // an HTTP-date Retry-After falls back to the exponential delay
      }
    }
    long base = Math.min(maxMs, initialMs << Math.min(30, attempt - 1));
    long jitter = (long) (base * 0.2 * (ThreadLocalRandom.current().nextDouble() * 2 - 1));
    return Math.max(1, Math.min(maxMs, base + jitter));
  }

  private long backoff(Endpoint e, int attempt, String retryAfter, Integer status) {
    return backoff(e.backoffInitialMs, e.backoffMaxMs, attempt, retryAfter, status);
  }

  static String sign(byte[] secret, String timestamp, Buffer body) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(secret, "HmacSHA256"));
      mac.update(timestamp.getBytes(StandardCharsets.US_ASCII));
      mac.update((byte) '.');
      mac.update(body.getBytes());
      return HexFormat.of().formatHex(mac.doFinal());
    } catch (Exception ex) {
      throw new IllegalStateException(ex);
    }
  }

  private Future<Void> sleep(long ms) {
    Promise<Void> p = Promise.promise();
    vertx.setTimer(Math.max(1, ms), t -> p.complete());
    return p.future();
  }

  private Future<Void> renew(Endpoint e, String leaseId, long waitMs) {
    int seconds = (int) Math.min(Integer.MAX_VALUE, LEASE_SECONDS + waitMs / 1000 + e.timeoutMs / 1000);
    return vertx.eventBus().request(Addresses.LEASE, new LeaseCommand(e.tenant, leaseId, seconds),
        LocalCodec.options(30_000)).mapEmpty();
  }

  private Future<Void> ack(Endpoint e, JsonObject m, String leaseId, String status, String error) {
    var item = new AckItem(m.getString("transactionId"), m.getString("partitionId"), status, leaseId, error,
        e.group());
    return vertx.eventBus().<JsonArray>request(Addresses.ACK, new AckCommand(e.tenant, List.of(item)),
        LocalCodec.options(30_000)).mapEmpty();
  }

  private static String describe(Throwable t) {
    String m = t.getMessage();
    return m == null || m.isBlank() ? t.getClass().getSimpleName() : m;
  }

}
