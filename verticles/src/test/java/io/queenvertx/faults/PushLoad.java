package io.queenvertx.faults;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Bounded push load with a ledger: {@code producers} scheduled tasks each push a batch of {@code batch} items with
 * unique transaction ids every {@code periodMs} to {@code partitions} partitions of one queue, through HTTP/1.1 with
 * a deadline per request, taking the brokers of {@code baseUrls} in turn. Every item's answer is recorded:
 * {@code queued}, {@code buffered} and {@code duplicate} are the broker's promises; {@code failed}, other answers and
 * connection errors are not ({@code failed} is a promise too: that the item never lands). Answers with a 5xx status
 * are counted, and the first {@code queued} answer after {@link #markFault} is timed. Also used by the failover suite
 * ({@code io.queenvertx.ha}).
 */
public final class PushLoad implements AutoCloseable {
  static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);

  private final List<String> urls;
  private final String queue;
  private final String tag;
  private final int batch;
  private final int partitions;
  private final ScheduledExecutorService pool;
  private final AtomicLong seq = new AtomicLong();
  /** Acknowledged transaction id to the status the broker answered. */
  private final Map<String, String> acknowledged = new ConcurrentHashMap<>();
  /** Transaction ids pushed without a promise (failed, an error answer, a connection error). */
  private final Set<String> unconfirmed = ConcurrentHashMap.newKeySet();
  /** Among them, those answered {@code failed}: the broker's promise that they never land. */
  private final Set<String> refused = ConcurrentHashMap.newKeySet();
  private final AtomicLong queued = new AtomicLong();
  private final AtomicLong buffered = new AtomicLong();
  private final AtomicLong duplicate = new AtomicLong();
  private final AtomicLong failed = new AtomicLong();
  private final AtomicLong errors = new AtomicLong();
  private final AtomicLong serverErrors = new AtomicLong();
  /** Nanos of the last {@link #markFault}, and of the first queued answer to a request sent after it (0: none). */
  private volatile long faultAt;
  private final AtomicLong firstQueuedAfterFault = new AtomicLong();
  private volatile boolean stopped;

  private PushLoad(List<String> urls, String queue, String tag, int producers, int batch, int partitions) {
    this.urls = urls;
    this.queue = queue;
    this.tag = tag;
    this.batch = batch;
    this.partitions = partitions;
    this.pool = Executors.newScheduledThreadPool(producers, r -> {
      Thread t = new Thread(r, "fault-producer-" + tag);
      t.setDaemon(true);
      return t;
    });
  }

  /** Starts the producers; each pushes one batch, then waits {@code periodMs} before its next. */
  static PushLoad start(String baseUrl, String queue, String tag, FaultPlan.Load load) {
    return start(List.of(baseUrl), queue, tag, load.producers(), load.batch(), load.periodMs(), load.partitions());
  }

  /** Producers spread over several brokers: request n goes to {@code baseUrls[n % size]}. */
  public static PushLoad start(List<String> baseUrls, String queue, String tag, int producers, int batch,
                               int periodMs, int partitions) {
    List<String> urls = baseUrls.stream().map(u -> u + "/api/v1/push").toList();
    var l = new PushLoad(urls, queue, tag, producers, batch, partitions);
    for (int p = 0; p < producers; p++) {
      int producer = p;
      l.pool.scheduleWithFixedDelay(() -> l.pushOnce(producer), 0, periodMs, TimeUnit.MILLISECONDS);
    }
    return l;
  }

  private void pushOnce(int producer) {
    if (stopped) return;
    long n = seq.incrementAndGet();
    List<String> txns = new ArrayList<>(batch);
    JsonArray items = new JsonArray();
    for (int i = 0; i < batch; i++) {
      String txn = tag + "-" + producer + "-" + n + "-" + i;
      txns.add(txn);
      items.add(new JsonObject().put("queue", queue).put("partition", "p" + ((n + i) % partitions))
          .put("transactionId", txn).put("payload", new JsonObject().put("producer", producer).put("n", n).put("i", i)));
    }
    JsonArray answer = null;
    long sent = System.nanoTime();
    try {
      var r = FaultBroker.Http.post(urls.get((int) (n % urls.size())), new JsonObject().put("items", items).encode(),
          REQUEST_TIMEOUT);
      if (r.statusCode() >= 500) serverErrors.incrementAndGet();
      if (r.statusCode() == 201 || r.statusCode() == 500) answer = parseArray(r.body());
    } catch (Exception e) {
      // connection refused or cut, timeout: no promise was made
    }
    Map<String, String> byTxn = new java.util.HashMap<>();
    if (answer != null) {
      for (int i = 0; i < answer.size(); i++) {
        if (answer.getValue(i) instanceof JsonObject o && o.getString("transaction_id") != null) {
          byTxn.put(o.getString("transaction_id"), o.getString("status", ""));
        }
      }
    }
    for (String txn : txns) record(txn, byTxn.getOrDefault(txn, ""));
    long fault = faultAt;
    if (fault != 0 && sent > fault && byTxn.containsValue("queued")) {
      firstQueuedAfterFault.compareAndSet(0, System.nanoTime() - fault);
    }
  }

  /** Marks the moment of a fault: {@link #queuedAfterFaultMs} then times the first queued answer after it. */
  public void markFault() {
    firstQueuedAfterFault.set(0);
    faultAt = System.nanoTime();
  }

  /** Milliseconds from the last {@link #markFault} to the first queued answer to a request sent after it; -1: none. */
  public long queuedAfterFaultMs() {
    long n = firstQueuedAfterFault.get();
    return n == 0 ? -1 : n / 1_000_000;
  }

  /** Requests answered with a 5xx status. */
  public long serverErrors() {
    return serverErrors.get();
  }

  private static JsonArray parseArray(String body) {
    try {
      return new JsonArray(body);
    } catch (RuntimeException e) {
      return null;
    }
  }

  private void record(String txn, String status) {
    switch (status) {
      case "queued" -> queued.incrementAndGet();
      case "buffered" -> buffered.incrementAndGet();
      case "duplicate" -> duplicate.incrementAndGet();
      case "failed" -> failed.incrementAndGet();
      default -> errors.incrementAndGet();
    }
    if (status.equals("queued") || status.equals("buffered") || status.equals("duplicate")) {
      acknowledged.put(txn, status);
    } else {
      unconfirmed.add(txn);
      if (status.equals("failed")) refused.add(txn);
    }
  }

  public long queued() {
    return queued.get();
  }

  public long buffered() {
    return buffered.get();
  }

  public long duplicates() {
    return duplicate.get();
  }

  public long failed() {
    return failed.get();
  }

  public long errors() {
    return errors.get();
  }

  public long acknowledgedCount() {
    return acknowledged.size();
  }

  /** The ledger; complete only after {@link #close()}. */
  public Map<String, String> acknowledged() {
    return acknowledged;
  }

  public Set<String> unconfirmed() {
    return unconfirmed;
  }

  Set<String> refused() {
    return refused;
  }

  /** Stops the producers and waits for the requests in flight, so the ledger is complete. */
  @Override
  public void close() throws InterruptedException {
    stopped = true;
    pool.shutdown();
    if (!pool.awaitTermination(REQUEST_TIMEOUT.toSeconds() + 30, TimeUnit.SECONDS)) {
      pool.shutdownNow();
      throw new IllegalStateException("producers did not finish their last requests");
    }
  }
}
