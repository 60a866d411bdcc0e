package io.queenvertx.bench;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
/**
 * What every mode of {@link Bench} shares: the options, the targets, the counters and latencies of the measured window,
 * and how a request's outcome is recorded.
 */
abstract class BenchBase {
  static void die(String msg) {
    System.err.println("queen-bench: " + msg);
    System.exit(2);
  }

  static void log(String msg) {
    System.err.println("[bench " + Instant.now() + "] " + msg);
  }

  // ---------------------------------------------------------------- measurement

  /** Growable list of longs; synchronized, the request rates here are far below contention levels. */
  static final class LongList {
    private long[] a = new long[1024];
    private int n;

    synchronized void add(long v) {
      if (n == a.length) a = Arrays.copyOf(a, n * 2);
      a[n++] = v;
    }

    synchronized long[] sorted() {
      long[] c = Arrays.copyOf(a, n);
      Arrays.sort(c);
      return c;
    }
  }

  static JsonObject summary(long[] sortedNanos) {
    JsonObject j = new JsonObject();
    j.put("n", sortedNanos.length);
    if (sortedNanos.length == 0) return j;
    j.put("p50", ms(pct(sortedNanos, 0.50)));
    j.put("p90", ms(pct(sortedNanos, 0.90)));
    j.put("p99", ms(pct(sortedNanos, 0.99)));
    j.put("max", ms(sortedNanos[sortedNanos.length - 1]));
    j.put("min", ms(sortedNanos[0]));
    return j;
  }

  static long pct(long[] s, double p) {
    int idx = (int) Math.ceil(p * s.length) - 1;
    return s[Math.max(0, Math.min(s.length - 1, idx))];
  }

  static double ms(long nanos) {
    return Math.round(nanos / 1e4) / 100.0;
  }

  static double round2(double v) {
    return Math.round(v * 100.0) / 100.0;
  }

  final Opts o;
  final Vertx vertx;
  final Target a;
  final Target b;
  final String queue;
  final String runId = Long.toString(System.currentTimeMillis(), 36) + "-"
      + Integer.toString(ThreadLocalRandom.current().nextInt(1 << 20), 36);

  volatile long windowStart = Long.MAX_VALUE;
  volatile long windowEnd = Long.MAX_VALUE;
  volatile boolean stopping;

  final Map<String, LongList> latency = new ConcurrentHashMap<>();
  final LongList allLatency = new LongList();
  final AtomicLong requests = new AtomicLong();
  final AtomicLong delivered = new AtomicLong(); // messages counted as "delivered" for the mode
  final AtomicLong pushed = new AtomicLong(); // queued items in window
  final AtomicLong pushedTotal = new AtomicLong(); // queued items, whole run
  final AtomicLong ackedTotal = new AtomicLong(); // acked items, whole run
  final AtomicLong httpErrors = new AtomicLong();
  final AtomicLong itemErrors = new AtomicLong();
  final AtomicLong exceptions = new AtomicLong();
  final AtomicLong warmupErrors = new AtomicLong();
  final AtomicLong emptyPops = new AtomicLong();
  final Map<String, AtomicLong> errorSamples = new ConcurrentHashMap<>();
  final Map<String, AtomicLong> perGroup = new ConcurrentHashMap<>();
  final AtomicLong partitionCursor = new AtomicLong();
  final AtomicLong seq = new AtomicLong();
  final String pad;

  /** A response read whole: status and body. */
  record Resp(int statusCode, Buffer body) {
    String bodyAsString() {
      return body == null ? "" : body.toString(java.nio.charset.StandardCharsets.UTF_8);
    }
  }

  /**
   * One broker node, reached with Vert.x's plain HttpClient (keep-alive, no pipelining): the generator shares the
   * machine with what it measures, and the WebClient's request pipeline cost it about twice the CPU per request.
   */
  static final class Target {
    final String url;
    final String host;
    final int port;
    final HttpClient client;

    Target(Vertx vertx, String url, int connections) {
      this.url = url;
      URI u = URI.create(url);
      this.host = u.getHost();
      this.port = u.getPort() > 0 ? u.getPort() : 80;
      HttpClientOptions ho = new HttpClientOptions()
          .setKeepAlive(true)
          .setPipelining(false)
          .setTcpNoDelay(true)
          .setMaxHeaderSize(64 * 1024);
      PoolOptions po = new PoolOptions().setHttp1MaxSize(connections).setMaxWaitQueueSize(-1);
      this.client = vertx.createHttpClient(ho, po);
    }

    Future<Resp> get(String path, long timeoutMs) {
      return send(HttpMethod.GET, path, null, timeoutMs);
    }

    Future<Resp> post(String path, Buffer body, long timeoutMs) {
      return send(HttpMethod.POST, path, body, timeoutMs);
    }

    private Future<Resp> send(HttpMethod method, String path, Buffer body, long timeoutMs) {
      RequestOptions ro = new RequestOptions().setMethod(method).setHost(host).setPort(port).setURI(path)
          .setIdleTimeout(timeoutMs).putHeader("user-agent", "queen-bench/0.1");
      if (body != null) ro.putHeader("content-type", "application/json");
      return client.request(ro).compose(req -> (body == null ? req.send() : req.send(body))
          .compose(resp -> resp.body().map(b -> new Resp(resp.statusCode(), b))));
    }
  }

  BenchBase(Opts o) {
    this.o = o;
    VertxOptions vo = new VertxOptions();
    if (o.eventLoops > 0) vo.setEventLoopPoolSize(o.eventLoops);
    vo.setBlockedThreadCheckInterval(10_000);
    this.vertx = Vertx.vertx(vo);
    int conns = o.clients + o.producers + o.groups * o.consumersPerGroup + o.fillClients + 8;
    this.a = new Target(vertx, o.url, conns);
    this.b = o.url2.equals(o.url) ? a : new Target(vertx, o.url2, conns);
    this.queue = o.queue != null ? o.queue : "bench-" + o.mode + "-" + runId;
    // {"n":123456,"c":12,"ts":1764694000000,"pad":"..."} ~ 52 bytes of frame around the pad
    this.pad = "x".repeat(Math.max(0, o.payloadBytes - 52));
  }

  boolean inWindow(long now) {
    return now >= windowStart && now <= windowEnd;
  }

  void record(String kind, long t0, long t1) {
    latency.computeIfAbsent(kind, k -> new LongList()).add(t1 - t0);
    allLatency.add(t1 - t0);
    requests.incrementAndGet();
  }

  void sample(String key) {
    if (key.length() > 200) key = key.substring(0, 200);
    AtomicLong c = errorSamples.get(key);
    if (c == null && errorSamples.size() < 20) c = errorSamples.computeIfAbsent(key, k -> new AtomicLong());
    if (c != null) c.incrementAndGet();
  }

  void httpError(boolean win, String what, Resp r) {
    if (win) httpErrors.incrementAndGet();
    else warmupErrors.incrementAndGet();
    String body = r.body() == null ? "" : r.bodyAsString();
    sample(what + " HTTP " + r.statusCode() + " " + body);
  }

  void exception(boolean win, String what, Throwable t) {
    if (win) exceptions.incrementAndGet();
    else warmupErrors.incrementAndGet();
    sample(what + " exception " + t.getClass().getSimpleName() + ": " + t.getMessage());
  }

  // ---------------------------------------------------------------- push

  String pushBody(int client, int items) {
    StringBuilder sb = new StringBuilder(items * (o.payloadBytes + 120) + 16);
    sb.append("{\"items\":[");
    long base = partitionCursor.getAndAdd(o.partitionPick.equals("item") ? items : 1);
    long now = System.currentTimeMillis();
    for (int i = 0; i < items; i++) {
      long s = seq.incrementAndGet();
      long k = o.partitionPick.equals("item") ? (base + i) % o.partitions : base % o.partitions;
      if (i > 0) sb.append(',');
      sb.append("{\"queue\":\"").append(queue)
          .append("\",\"partition\":\"p-").append(k)
          .append("\",\"transactionId\":\"").append(runId).append('-').append(client).append('-').append(s)
          .append("\",\"payload\":{\"n\":").append(s)
          .append(",\"c\":").append(client)
          .append(",\"ts\":").append(now)
          .append(",\"pad\":\"").append(pad).append("\"}}");
    }
    sb.append("]}");
    return sb.toString();
  }

  /** Counts "status":"..." entries of a push response: [queued, other]. */
  static int[] pushStatuses(String body, BenchBase bench) {
    int queued = 0;
    int other = 0;
    int from = 0;
    final String key = "\"status\":\"";
    while (true) {
      int i = body.indexOf(key, from);
      if (i < 0) break;
      int s = i + key.length();
      int e = body.indexOf('"', s);
      if (e < 0) break;
      if (body.startsWith("queued", s) && e - s == 6) queued++;
      else {
        other++;
        if (bench != null) bench.sample("push item status " + body.substring(s, e));
      }
      from = e;
    }
    return new int[] {queued, other};
  }

  static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
  }
}
