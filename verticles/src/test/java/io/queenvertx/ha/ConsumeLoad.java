package io.queenvertx.ha;

import io.queenvertx.testing.TestNode;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpRequest;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Pop-and-ack load with a ledger: {@code consumers} threads of one consumer group, each popping (leased, long poll of
 * 500 ms) from the brokers in turn and acking what it got with {@code /api/v1/ack/batch}. Records, per transaction
 * id, the message ids delivered; which acks were answered {@code success:true} ({@link #acked}); and every delivery of
 * a message whose ack had already been answered {@code success:true} (an ack undone: {@link #undone}). Answers with a
 * 5xx status are counted; after a 503 a consumer waits as its {@code Retry-After} asks, as a client would.
 */
final class ConsumeLoad implements AutoCloseable {
  private final List<String> urls;
  private final String queue;
  private final String group;
  private final int batch;
  private final int leaseSeconds;
  private final ScheduledExecutorService pool;
  private final Map<String, Set<String>> delivered = new ConcurrentHashMap<>();
  private final Set<String> acked = ConcurrentHashMap.newKeySet();
  private final Set<String> undone = ConcurrentHashMap.newKeySet();
  private final AtomicLong serverErrors = new AtomicLong();
  private final AtomicLong pops = new AtomicLong();
  private final Map<Integer, AtomicLong> statuses = new ConcurrentHashMap<>();
  private volatile boolean stopped;

  private ConsumeLoad(List<String> urls, String queue, String group, int consumers, int batch, int leaseSeconds) {
    this.urls = urls;
    this.queue = queue;
    this.group = group;
    this.batch = batch;
    this.leaseSeconds = leaseSeconds;
    this.pool = Executors.newScheduledThreadPool(consumers, r -> {
      Thread t = new Thread(r, "ha-consumer");
      t.setDaemon(true);
      return t;
    });
  }

  static ConsumeLoad start(List<String> baseUrls, String queue, String group, int consumers, int batch,
                           int leaseSeconds) {
    var l = new ConsumeLoad(baseUrls, queue, group, consumers, batch, leaseSeconds);
    for (int c = 0; c < consumers; c++) {
      int me = c;
      l.pool.execute(() -> l.step(me, me));
    }
    return l;
  }

  /** One pop (and ack) from broker {@code n}, then the next step: at once, or after a 503's Retry-After. */
  private void step(int me, long n) {
    if (stopped) return;
    long delayMs = 0;
    try {
      delayMs = once(urls.get((int) (n % urls.size())));
    } catch (RuntimeException e) {
      delayMs = 100; // connection refused or cut: no answer, nothing recorded
    }
    if (!stopped) pool.schedule(() -> step(me, n + 1), delayMs, TimeUnit.MILLISECONDS);
  }

  /** Milliseconds to wait before the next pop: a 503's Retry-After, else 0. */
  private static long backoff(TestNode.Reply r) {
    if (r.status() != 503) return 0;
    String ra = r.header("Retry-After");
    return ra == null ? 1000 : Long.parseLong(ra.trim()) * 1000;
  }

  private long once(String base) {
    var r = call(HttpRequest.newBuilder(URI.create(base + "/api/v1/pop/queue/" + queue + "?batch=" + batch
        + "&partitions=0&wait=true&timeout=500&leaseSeconds=" + leaseSeconds + "&subscriptionMode=all"
        + "&consumerGroup=" + group)).GET());
    pops.incrementAndGet();
    if (r.status() != 200) return backoff(r);
    JsonObject body = r.json();
    JsonArray msgs = body.getJsonArray("messages", new JsonArray());
    JsonArray acks = new JsonArray();
    for (int i = 0; i < msgs.size(); i++) {
      JsonObject m = msgs.getJsonObject(i);
      String txn = m.getString("transactionId");
      if (acked.contains(txn)) undone.add(txn);
      delivered.computeIfAbsent(txn, k -> ConcurrentHashMap.newKeySet()).add(m.getString("id"));
      acks.add(new JsonObject().put("transactionId", txn).put("partitionId", m.getString("partitionId"))
          .put("leaseId", m.getString("leaseId", body.getString("leaseId"))).put("status", "completed"));
    }
    if (acks.isEmpty()) return 0;
    var a = call(HttpRequest.newBuilder(URI.create(base + "/api/v1/ack/batch"))
        .header("content-type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(new JsonObject().put("consumerGroup", group)
            .put("acknowledgments", acks).encode())));
    if (a.status() != 200) return backoff(a);
    JsonArray answers = a.array();
    for (int i = 0; i < answers.size() && i < acks.size(); i++) {
      if (answers.getJsonObject(i).getBoolean("success", false)) {
        acked.add(acks.getJsonObject(i).getString("transactionId"));
      }
    }
    return 0;
  }

  private TestNode.Reply call(HttpRequest.Builder b) {
    TestNode.Reply r = TestNode.exchange(b, Map.of());
    statuses.computeIfAbsent(r.status(), k -> new AtomicLong()).incrementAndGet();
    if (r.status() >= 500) serverErrors.incrementAndGet();
    return r;
  }

  /** Transaction ids delivered at least once, with their message ids. */
  Map<String, Set<String>> delivered() {
    return delivered;
  }

  /** Transaction ids whose ack was answered success:true. */
  Set<String> acked() {
    return acked;
  }

  /** Transaction ids delivered again after their ack was answered success:true. */
  Set<String> undone() {
    return undone;
  }

  long serverErrors() {
    return serverErrors.get();
  }

  long pops() {
    return pops.get();
  }

  /** HTTP status to the number of answers with it (pops and acks). */
  Map<Integer, Long> statuses() {
    Map<Integer, Long> out = new java.util.TreeMap<>();
    statuses.forEach((k, v) -> out.put(k, v.get()));
    return out;
  }

  @Override
  public void close() throws InterruptedException {
    stopped = true;
    pool.shutdown();
    if (!pool.awaitTermination(120, TimeUnit.SECONDS)) {
      pool.shutdownNow();
      throw new IllegalStateException("consumers did not finish their last calls");
    }
  }
}
