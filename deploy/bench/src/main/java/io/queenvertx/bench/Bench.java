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
 * Load generator for queen-vertx (and any Queen-MQ wire-compatible broker). Speaks the HTTP API like a client:
 * HttpClient, keep-alive, no pipelining, one connection per concurrent loop. Prints exactly one JSON line on stdout
 * per run; progress and diagnostics go to stderr.
 *
 * <p>Modes: {@code push}, {@code popack}, {@code fanout}, {@code wakeup}, and the DLQ/inspection rows {@code redrive}
 * and {@code msgpage} ({@link DlqRows}). See {@link #usage()}.
 */
public final class Bench {

  // ---------------------------------------------------------------- options

  static final class Opts {
    String mode = "push";
    String url = "http://127.0.0.1:6632";
    String url2 = null;
    int clients = 8;
    int producers = -1; // -1 = same as clients (popack, fanout)
    int batch = 100;
    int partitions = 10;
    int payloadBytes = 200;
    int duration = 60;
    int warmup = 5;
    int groups = 10;
    int consumersPerGroup = 1;
    int trials = 200;
    int popTimeoutMs = 1000;
    int popPartitions = 1;
    long prefill = 0;
    int prefillBatch = 100;
    int fillClients = 16;
    long deadLetters = 100_000;
    long fill = 10_000_000;
    int redriveTimeout = 300;
    String deadLetterVia = "sql";
    int maxOffset = 5000;
    String partitionPick = "item"; // item | request
    int parkMs = 100;
    String queue = null;
    String pg = null;
    String pgUser = "postgres";
    String pgPassword = "postgres";
    int brokerPid = 0;
    int eventLoops = 0;
    String label = null;
    double reference = 0;
  }

  static String usage() {
    return String.join("\n",
        "usage: java -jar queen-bench.jar --mode push|popack|fanout|wakeup|redrive|msgpage [options]",
        "  --url URL               broker (node A for wakeup)           default http://127.0.0.1:6632",
        "  --url2 URL              node B for wakeup (push goes there)  default = --url",
        "  --clients N             concurrent loops (pushers in push, consumers in popack/fanout total)  default 8",
        "  --producers N           concurrent pushers in popack/fanout  default = --clients",
        "  --batch N               items per push / pop batch           default 100",
        "  --partitions N          partitions p-0..p-(N-1) of the queue default 10",
        "  --partition-pick item|request  round-robin per item (default) or one partition per request",
        "  --payload-bytes N       approximate JSON payload size        default 200",
        "  --duration S            measured seconds                     default 60",
        "  --warmup S              unmeasured seconds before            default 5",
        "  --groups K              fanout consumer groups g-0..g-(K-1)  default 10",
        "  --consumers-per-group N fanout consumers per group           default 1",
        "  --prefill N             popack: push N messages before starting consumers  default 0",
        "  --prefill-batch N       items per push while prefilling/filling  default 100",
        "  --fill-clients N        pushers while prefilling/filling     default 16",
        "  --dead-letters N        redrive: dead letters to make, then redrive in bulk  default 100000",
        "  --dead-letter-via sql|api  redrive setup: insert the rows (default) or pop+ack dlq each (slow)",
        "  --redrive-timeout S     redrive: give up (and cancel the task) after S seconds  default 300",
        "  --fill N                msgpage: messages in the queue before paging  default 10000000",
        "  --max-offset N          msgpage: largest random offset of an offset page  default 5000",
        "  --pop-timeout MS        long-poll timeout of pops            default 1000",
        "  --pop-partitions N      pop 'partitions' parameter           default 1",
        "  --trials T              wakeup trials                        default 200",
        "  --park-ms MS            wakeup: wait this long (+0..50 ms jitter) after sending the pop before pushing  default 100",
        "  --queue NAME            queue name                           default bench-<mode>-<random>",
        "  --pg JDBC_URL           read pg_stat_database.xact_commit before/after (e.g. jdbc:postgresql://127.0.0.1:5432/postgres)",
        "  --pg-user U --pg-password P                                  default postgres/postgres",
        "  --broker-pid PID        sample broker CPU from /proc/PID/stat",
        "  --event-loops N         bench event loops                    default 2*cores",
        "  --label TEXT            free text copied into the JSON line",
        "  --reference X           the reference broker's figure for this row (msg/s): adds reference and ratio");
  }

  static Opts parse(String[] args) {
    Opts o = new Opts();
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (a.equals("-h") || a.equals("--help")) {
        System.err.println(usage());
        System.exit(0);
      }
      String v;
      int eq = a.indexOf('=');
      if (a.startsWith("--") && eq > 0) {
        v = a.substring(eq + 1);
        a = a.substring(0, eq);
      } else {
        if (i + 1 >= args.length) die("missing value for " + a);
        v = args[++i];
      }
      switch (a) {
        case "--mode" -> o.mode = v;
        case "--url" -> o.url = v;
        case "--url2" -> o.url2 = v;
        case "--clients" -> o.clients = Integer.parseInt(v);
        case "--producers" -> o.producers = Integer.parseInt(v);
        case "--batch" -> o.batch = Integer.parseInt(v);
        case "--partitions" -> o.partitions = Integer.parseInt(v);
        case "--partition-pick" -> o.partitionPick = v;
        case "--payload-bytes" -> o.payloadBytes = Integer.parseInt(v);
        case "--duration" -> o.duration = Integer.parseInt(v);
        case "--warmup" -> o.warmup = Integer.parseInt(v);
        case "--groups" -> o.groups = Integer.parseInt(v);
        case "--consumers-per-group" -> o.consumersPerGroup = Integer.parseInt(v);
        case "--prefill" -> o.prefill = Long.parseLong(v);
        case "--prefill-batch" -> o.prefillBatch = Integer.parseInt(v);
        case "--fill-clients" -> o.fillClients = Integer.parseInt(v);
        case "--dead-letters" -> o.deadLetters = Long.parseLong(v);
        case "--redrive-timeout" -> o.redriveTimeout = Integer.parseInt(v);
        case "--dead-letter-via" -> o.deadLetterVia = v;
        case "--fill" -> o.fill = Long.parseLong(v);
        case "--max-offset" -> o.maxOffset = Integer.parseInt(v);
        case "--pop-timeout" -> o.popTimeoutMs = Integer.parseInt(v);
        case "--pop-partitions" -> o.popPartitions = Integer.parseInt(v);
        case "--trials" -> o.trials = Integer.parseInt(v);
        case "--park-ms" -> o.parkMs = Integer.parseInt(v);
        case "--queue" -> o.queue = v;
        case "--pg" -> o.pg = v;
        case "--pg-user" -> o.pgUser = v;
        case "--pg-password" -> o.pgPassword = v;
        case "--broker-pid" -> o.brokerPid = Integer.parseInt(v);
        case "--event-loops" -> o.eventLoops = Integer.parseInt(v);
        case "--label" -> o.label = v;
        case "--reference" -> o.reference = Double.parseDouble(v);
        default -> die("unknown option " + a + "\n" + usage());
      }
    }
    if (!List.of("push", "popack", "fanout", "wakeup", "redrive", "msgpage").contains(o.mode)) {
      die("unknown mode " + o.mode);
    }
    if (!List.of("item", "request").contains(o.partitionPick)) die("--partition-pick must be item or request");
    if (!List.of("sql", "api").contains(o.deadLetterVia)) die("--dead-letter-via must be sql or api");
    if (o.clients < 1 || o.batch < 1 || o.partitions < 1 || o.duration < 1 || o.warmup < 0) die("bad numbers");
    if (o.producers < 0) o.producers = o.clients;
    if (o.url2 == null) o.url2 = o.url;
    if (o.mode.equals("wakeup")) o.partitions = 1;
    return o;
  }

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

  Bench(Opts o) {
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
  static int[] pushStatuses(String body, Bench bench) {
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

  /** One pusher loop; completes the latch when stopped. */
  void pushLoop(int client, Target t, CountDownLatch done, java.util.function.BooleanSupplier stop) {
    pushLoop(client, t, done, stop, o.batch);
  }

  void pushLoop(int client, Target t, CountDownLatch done, java.util.function.BooleanSupplier stop, int batch) {
    if (stopping || stop.getAsBoolean()) {
      done.countDown();
      return;
    }
    String body = pushBody(client, batch);
    long t0 = System.nanoTime();
    t.post("/api/v1/push", Buffer.buffer(body), 60_000)
        .onComplete(ar -> {
          long t1 = System.nanoTime();
          boolean win = inWindow(t1);
          if (ar.failed()) {
            exception(win, "push", ar.cause());
            vertx.setTimer(50, x -> pushLoop(client, t, done, stop, batch));
            return;
          }
          Resp r = ar.result();
          if (r.statusCode() / 100 != 2) {
            httpError(win, "push", r);
          } else {
            int[] st = pushStatuses(r.bodyAsString(), this);
            pushedTotal.addAndGet(st[0]);
            if (win) {
              pushed.addAndGet(st[0]);
              itemErrors.addAndGet(st[1]);
              if (o.mode.equals("push")) delivered.addAndGet(st[0]);
            } else {
              warmupErrors.addAndGet(st[1]);
            }
          }
          if (win) record("push", t0, t1);
          pushLoop(client, t, done, stop, batch);
        });
  }

  // ---------------------------------------------------------------- pop + ack

  void consumeLoop(Target t, String group, CountDownLatch done) {
    if (stopping) {
      done.countDown();
      return;
    }
    StringBuilder path = new StringBuilder("/api/v1/pop/queue/").append(queue)
        .append("?batch=").append(o.batch).append("&wait=true&timeout=").append(o.popTimeoutMs);
    if (o.popPartitions != 1) path.append("&partitions=").append(o.popPartitions);
    if (group != null) path.append("&consumerGroup=").append(group).append("&subscriptionMode=all");
    long t0 = System.nanoTime();
    t.get(path.toString(), o.popTimeoutMs + 60_000L)
        .onComplete(ar -> {
          long t1 = System.nanoTime();
          boolean win = inWindow(t1);
          if (ar.failed()) {
            exception(win, "pop", ar.cause());
            vertx.setTimer(50, x -> consumeLoop(t, group, done));
            return;
          }
          Resp r = ar.result();
          if (win) record("pop", t0, t1);
          if (r.statusCode() == 204) {
            if (win) emptyPops.incrementAndGet();
            consumeLoop(t, group, done);
            return;
          }
          if (r.statusCode() != 200) {
            httpError(win, "pop", r);
            vertx.setTimer(50, x -> consumeLoop(t, group, done));
            return;
          }
          List<Wire.Popped> msgs;
          try {
            msgs = Wire.popped(r.body());
          } catch (RuntimeException e) {
            exception(win, "pop-parse", e);
            consumeLoop(t, group, done);
            return;
          }
          if (msgs.isEmpty()) {
            if (win) emptyPops.incrementAndGet();
            consumeLoop(t, group, done);
            return;
          }
          ack(t, group, msgs).onComplete(x -> consumeLoop(t, group, done));
        });
  }

  Future<Void> ack(Target t, String group, List<Wire.Popped> msgs) {
    Buffer body = Wire.ackBody(group, msgs);
    long t0 = System.nanoTime();
    return t.post("/api/v1/ack/batch", body, 60_000)
        .transform(ar -> {
          long t1 = System.nanoTime();
          boolean win = inWindow(t1);
          if (ar.failed()) {
            exception(win, "ack", ar.cause());
            return Future.succeededFuture();
          }
          Resp r = ar.result();
          if (win) record("ack", t0, t1);
          if (r.statusCode() / 100 != 2) {
            httpError(win, "ack", r);
            return Future.succeededFuture();
          }
          int ok = 0;
          int bad = 0;
          try {
            Wire.AckCount c = Wire.ackResults(r.body());
            ok = c.ok();
            bad = c.bad();
            if (c.firstError() != null) sample("ack item error " + c.firstError());
          } catch (RuntimeException e) {
            exception(win, "ack-parse", e);
          }
          ackedTotal.addAndGet(ok);
          if (win) {
            delivered.addAndGet(ok);
            itemErrors.addAndGet(bad);
            if (group != null) perGroup.computeIfAbsent(group, g -> new AtomicLong()).addAndGet(ok);
          } else {
            warmupErrors.addAndGet(bad);
          }
          return Future.succeededFuture();
        });
  }

  // ---------------------------------------------------------------- wakeup

  JsonObject runWakeup() throws Exception {
    LongList fromResp = new LongList();
    LongList fromSend = new LongList();
    AtomicInteger timeouts = new AtomicInteger();
    // prime: create the queue and partition through B, drain through A
    for (int i = 0; i < 3; i++) {
      String body = pushBody(0, 1);
      Resp pr = await(b.post("/api/v1/push", Buffer.buffer(body), 30_000));
      if (pr.statusCode() != 201) throw new IllegalStateException("prime push: HTTP " + pr.statusCode() + " " + pr.bodyAsString());
      Resp pop = await(a.get("/api/v1/pop/queue/" + queue + "?batch=10&wait=true&timeout=3000", 30_000));
      if (pop.statusCode() == 200) await(ack(a, null, Wire.popped(pop.body())));
    }
    long start = System.nanoTime();
    windowStart = start;
    Snapshot s0 = snapshot();
    for (int trial = 0; trial < o.trials; trial++) {
      long[] tPushSend = {0};
      long[] tPushResp = {0};
      long tPop0 = System.nanoTime();
      Future<Resp> popF = a.get(
          "/api/v1/pop/queue/" + queue + "?batch=10&wait=true&timeout=" + Math.max(o.popTimeoutMs, 5000), 70_000);
      long[] tPopResp = {0};
      popF.onComplete(x -> tPopResp[0] = System.nanoTime());
      Thread.sleep(o.parkMs + ThreadLocalRandom.current().nextInt(51));
      if (popF.isComplete()) {
        sample("wakeup pop returned before the push (status "
            + (popF.succeeded() ? popF.result().statusCode() : "exception") + ")");
        itemErrors.incrementAndGet();
        drainAck(popF);
        continue;
      }
      String body = pushBody(trial, 1);
      Resp pr;
      try {
        tPushSend[0] = System.nanoTime();
        Future<Resp> pf = b.post("/api/v1/push", Buffer.buffer(body), 30_000);
        pf.onComplete(x -> tPushResp[0] = System.nanoTime());
        pr = await(pf);
      } catch (Exception e) {
        exception(true, "wakeup push", e);
        drainAck(popF);
        continue;
      }
      record("push", tPushSend[0], tPushResp[0]);
      if (pr.statusCode() != 201) {
        httpError(true, "wakeup push", pr);
        drainAck(popF);
        continue;
      }
      int[] st = pushStatuses(pr.bodyAsString(), this);
      itemErrors.addAndGet(st[1]);
      Resp pop;
      try {
        pop = await(popF);
      } catch (Exception e) {
        exception(true, "wakeup pop", e);
        continue;
      }
      long tp = tPopResp[0] != 0 ? tPopResp[0] : System.nanoTime();
      record("pop", tPop0, tp);
      if (pop.statusCode() != 200) {
        timeouts.incrementAndGet();
        if (pop.statusCode() == 204) sample("wakeup pop timed out (204) although a message was pushed");
        else httpError(true, "wakeup pop", pop);
        if (pop.statusCode() == 204) itemErrors.incrementAndGet();
        continue;
      }
      fromResp.add(tp - tPushResp[0]);
      fromSend.add(tp - tPushSend[0]);
      await(ack(a, null, Wire.popped(pop.body())));
    }
    windowEnd = System.nanoTime();
    Snapshot s1 = snapshot();
    JsonObject j = new JsonObject();
    long[] r = fromResp.sorted();
    long[] s = fromSend.sorted();
    // pop responses can overtake the push response (the wake fires right after the commit): clamp below at 0
    JsonObject wr = summary(r);
    long negatives = Arrays.stream(r).filter(v -> v < 0).count();
    j.put("wakeup_ms", wr);
    j.put("wakeup_from_push_send_ms", summary(s));
    j.put("wakeup_pop_before_push_response", negatives);
    j.put("wakeup_pop_timeouts", timeouts.get());
    wakeS0 = s0;
    wakeS1 = s1;
    return j;
  }

  Snapshot wakeS0;
  Snapshot wakeS1;

  void drainAck(Future<Resp> popF) {
    try {
      Resp p = await(popF);
      if (p.statusCode() == 200) await(ack(a, null, Wire.popped(p.body())));
    } catch (Exception ignored) {
      // best effort
    }
  }

  static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
  }

  // ---------------------------------------------------------------- CPU and PostgreSQL

  static final long CLK_TCK = clkTck();

  static long clkTck() {
    try {
      Process p = new ProcessBuilder("getconf", "CLK_TCK").redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes()).trim();
      p.waitFor(5, TimeUnit.SECONDS);
      return Long.parseLong(out);
    } catch (Exception e) {
      return 100;
    }
  }

  /** Fields after the "(comm)" of /proc/pid/stat; index 0 is field 3 (state). */
  static String[] statFields(int pid) {
    try {
      String s = Files.readString(Path.of("/proc/" + pid + "/stat"));
      return s.substring(s.lastIndexOf(')') + 2).split(" ");
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  static long ticks(String[] f, boolean withChildren) {
    long t = Long.parseLong(f[11]) + Long.parseLong(f[12]);
    if (withChildren) t += Long.parseLong(f[13]) + Long.parseLong(f[14]);
    return t;
  }

  static String comm(int pid) {
    try {
      return Files.readString(Path.of("/proc/" + pid + "/comm")).trim();
    } catch (IOException e) {
      return "";
    }
  }

  /** PostgreSQL processes: the postmaster (with reaped children) and its live children, or every "postgres". */
  Map<Integer, Long> pgTicks(int postmaster) {
    Map<Integer, Long> m = new HashMap<>();
    java.io.File[] procs = new java.io.File("/proc").listFiles();
    if (procs == null) return m;
    for (java.io.File d : procs) {
      String n = d.getName();
      if (n.isEmpty() || !Character.isDigit(n.charAt(0))) continue;
      int pid;
      try {
        pid = Integer.parseInt(n);
      } catch (NumberFormatException e) {
        continue;
      }
      String[] f = statFields(pid);
      if (f == null) continue;
      try {
        if (postmaster > 0) {
          if (pid == postmaster) m.put(pid, ticks(f, true));
          else if (Integer.parseInt(f[1]) == postmaster) m.put(pid, ticks(f, false));
        } else if (comm(pid).startsWith("postgres")) {
          m.put(pid, ticks(f, false));
        }
      } catch (RuntimeException ignored) {
        // raced with exit
      }
    }
    return m;
  }

  Connection pgConn;
  int postmasterPid;

  void openPg() {
    if (o.pg == null) return;
    try {
      pgConn = DriverManager.getConnection(o.pg, o.pgUser, o.pgPassword);
      pgConn.setAutoCommit(true);
      try (Statement st = pgConn.createStatement(); ResultSet rs = st.executeQuery("SELECT pg_backend_pid()")) {
        rs.next();
        int backend = rs.getInt(1);
        String[] f = statFields(backend);
        if (f != null) postmasterPid = Integer.parseInt(f[1]);
      }
    } catch (Exception e) {
      log("cannot read PostgreSQL statistics from " + o.pg + ": " + e);
      pgConn = null;
    }
  }

  static final class Snapshot {
    long nanos;
    long brokerTicks = -1;
    Map<Integer, Long> pg;
    long commits = -1;
    long nextXid = -1;
    long selfTicks = -1;
    long machineBusy = -1;
    String loadavg = "";
  }

  /** Busy ticks of the whole machine (all cores) from the first line of /proc/stat. */
  static long machineBusyTicks() {
    try {
      String line = Files.readAllLines(Path.of("/proc/stat")).get(0);
      String[] f = line.trim().split("\\s+");
      long busy = 0;
      for (int i : new int[] {1, 2, 3, 6, 7, 8}) busy += Long.parseLong(f[i]);
      return busy;
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }

  static String loadavg() {
    try {
      String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split(" ");
      return f[0] + " " + f[1] + " " + f[2];
    } catch (IOException | RuntimeException e) {
      return "";
    }
  }

  Snapshot snapshot() {
    Snapshot s = new Snapshot();
    s.nanos = System.nanoTime();
    if (o.brokerPid > 0) {
      String[] f = statFields(o.brokerPid);
      if (f != null) s.brokerTicks = ticks(f, false);
    }
    s.pg = pgTicks(postmasterPid);
    String[] self = statFields((int) ProcessHandle.current().pid());
    if (self != null) s.selfTicks = ticks(self, false);
    s.machineBusy = machineBusyTicks();
    s.loadavg = loadavg();
    if (pgConn != null) {
      try (Statement st = pgConn.createStatement();
          ResultSet rs = st.executeQuery("SELECT (SELECT sum(xact_commit) FROM pg_stat_database)::bigint,"
              + " pg_snapshot_xmax(pg_current_snapshot())::text::bigint")) {
        rs.next();
        s.commits = rs.getLong(1);
        s.nextXid = rs.getLong(2);
      } catch (Exception e) {
        log("pg_stat_database read failed: " + e);
      }
    }
    return s;
  }

  void putResources(JsonObject j, Snapshot s0, Snapshot s1, long deliveredMsgs) {
    double secs = (s1.nanos - s0.nanos) / 1e9;
    j.put("cores", Runtime.getRuntime().availableProcessors());
    if (s0.brokerTicks >= 0 && s1.brokerTicks >= 0) {
      j.put("broker_cpu_pct", round2(100.0 * (s1.brokerTicks - s0.brokerTicks) / CLK_TCK / secs));
    }
    long pg = 0;
    for (var e : s1.pg.entrySet()) pg += e.getValue() - s0.pg.getOrDefault(e.getKey(), 0L);
    j.put("pg_cpu_pct", round2(100.0 * pg / CLK_TCK / secs));
    j.put("pg_cpu_scope", postmasterPid > 0 ? "postmaster " + postmasterPid + " and its children"
        : "every process named postgres (best effort)");
    if (s0.selfTicks >= 0 && s1.selfTicks >= 0) {
      j.put("bench_cpu_pct", round2(100.0 * (s1.selfTicks - s0.selfTicks) / CLK_TCK / secs));
    }
    if (s0.machineBusy >= 0 && s1.machineBusy >= 0) {
      double machine = 100.0 * (s1.machineBusy - s0.machineBusy) / CLK_TCK / secs;
      j.put("machine_cpu_pct", round2(machine));
      // whatever else ran on the machine meanwhile (other jobs): machine - broker - postgres - bench
      double other = machine - j.getDouble("pg_cpu_pct", 0.0) - j.getDouble("broker_cpu_pct", 0.0)
          - j.getDouble("bench_cpu_pct", 0.0);
      j.put("other_cpu_pct", round2(Math.max(0, other)));
    }
    j.put("loadavg_start", s0.loadavg).put("loadavg_end", s1.loadavg);
    if (s0.commits >= 0 && s1.commits >= 0) {
      long c = s1.commits - s0.commits;
      j.put("pg_xact_commits", c);
      j.put("commits_per_msg", deliveredMsgs > 0 ? Math.round(1e4 * c / deliveredMsgs) / 1e4 : null);
      long x = s1.nextXid - s0.nextXid;
      j.put("pg_write_xids", x);
      j.put("write_xids_per_msg", deliveredMsgs > 0 ? Math.round(1e4 * x / deliveredMsgs) / 1e4 : null);
    }
  }

  // ---------------------------------------------------------------- orchestration

  void checkHealth(Target t) throws Exception {
    Resp r = await(t.get("/health", 10_000));
    if (r.statusCode() != 200) throw new IllegalStateException(t.url + "/health answered " + r.statusCode());
  }

  /** Pushes n messages (--fill-clients pushers, --prefill-batch items each) before the measured part; returns seconds. */
  double prefill(long n) throws InterruptedException {
    log("prefilling " + n + " messages into " + queue);
    CountDownLatch done = new CountDownLatch(o.fillClients);
    windowStart = Long.MAX_VALUE;
    long t0 = System.nanoTime();
    AtomicLong reserved = new AtomicLong();
    for (int c = 0; c < o.fillClients; c++) {
      int id = 1000 + c;
      vertx.runOnContext(v -> pushLoop(id, a, done,
          () -> reserved.addAndGet(o.prefillBatch) - o.prefillBatch >= n, o.prefillBatch));
    }
    long lastLog = System.nanoTime();
    while (!done.await(1, TimeUnit.SECONDS)) {
      if (System.nanoTime() - lastLog > TimeUnit.SECONDS.toNanos(10)) {
        lastLog = System.nanoTime();
        log(String.format(Locale.ROOT, "prefill: %d queued in %.0f s", pushedTotal.get(), (lastLog - t0) / 1e9));
      }
    }
    double secs = (System.nanoTime() - t0) / 1e9;
    log(String.format(Locale.ROOT, "prefill done: %d queued in %.1f s", pushedTotal.get(), secs));
    return secs;
  }

  JsonObject run() throws Exception {
    checkHealth(a);
    if (b != a) checkHealth(b);
    openPg();
    JsonObject out = new JsonObject();
    out.put("mode", o.mode);
    out.put("ts", Instant.now().toString());
    if (o.label != null) out.put("label", o.label);
    JsonObject params = new JsonObject()
        .put("url", o.url).put("clients", o.clients).put("batch", o.batch).put("partitions", o.partitions)
        .put("partition_pick", o.partitionPick).put("payload_bytes", o.payloadBytes)
        .put("queue", queue);
    if (o.mode.equals("wakeup")) {
      params.put("url2", o.url2).put("trials", o.trials).put("park_ms", o.parkMs);
      params.remove("clients");
      params.remove("batch");
      params.remove("partitions");
      params.remove("partition_pick");
    } else {
      params.put("duration_s", o.duration).put("warmup_s", o.warmup);
    }
    if (o.mode.equals("popack") || o.mode.equals("fanout")) {
      params.put("producers", o.producers).put("pop_timeout_ms", o.popTimeoutMs).put("pop_partitions", o.popPartitions);
      if (o.prefill > 0) params.put("prefill", o.prefill);
    }
    if (o.mode.equals("fanout")) params.put("groups", o.groups).put("consumers_per_group", o.consumersPerGroup);
    if (o.mode.equals("redrive")) params.put("dead_letters", o.deadLetters).put("dead_letter_via", o.deadLetterVia).put("redrive_timeout_s", o.redriveTimeout);
    if (o.mode.equals("msgpage")) params.put("fill", o.fill).put("max_offset", o.maxOffset);
    if (o.prefill > 0 || o.mode.equals("redrive") || o.mode.equals("msgpage")) {
      params.put("prefill_batch", o.prefillBatch).put("fill_clients", o.fillClients);
    }
    out.put("params", params);

    Snapshot s0;
    Snapshot s1;
    double secs;
    if (o.mode.equals("wakeup")) {
      JsonObject w = runWakeup();
      s0 = wakeS0;
      s1 = wakeS1;
      secs = (windowEnd - windowStart) / 1e9;
      out.put("measured_s", round2(secs));
      out.put("messages", delivered.get());
      out.put("messages_per_s", round2(delivered.get() / secs));
      out.put("requests", requests.get());
      out.put("requests_per_s", round2(requests.get() / secs));
      out.mergeIn(w);
    } else if (o.mode.equals("redrive") || o.mode.equals("msgpage")) {
      DlqRows rows = new DlqRows(this);
      JsonObject w = o.mode.equals("redrive") ? rows.redrive() : rows.msgpage();
      s0 = rows.s0;
      s1 = rows.s1;
      out.mergeIn(w);
    } else {
      if (o.mode.equals("popack") && o.prefill > 0) out.put("prefill_s", round2(prefill(o.prefill)));
      List<CountDownLatch> latches = new ArrayList<>();
      long t0 = System.nanoTime();
      // the window is set before the loops start so that warmup is measured from the first request
      windowStart = t0 + TimeUnit.SECONDS.toNanos(o.warmup);
      windowEnd = windowStart + TimeUnit.SECONDS.toNanos(o.duration);
      switch (o.mode) {
        case "push" -> {
          CountDownLatch l = new CountDownLatch(o.clients);
          latches.add(l);
          for (int c = 0; c < o.clients; c++) {
            int id = c;
            vertx.runOnContext(v -> pushLoop(id, a, l, () -> false));
          }
        }
        case "popack", "fanout" -> {
          int consumers = o.mode.equals("popack") ? o.clients : o.groups * o.consumersPerGroup;
          CountDownLatch lc = new CountDownLatch(consumers);
          latches.add(lc);
          for (int c = 0; c < consumers; c++) {
            String group = o.mode.equals("fanout") ? "g-" + (c % o.groups) : null;
            vertx.runOnContext(v -> consumeLoop(a, group, lc));
          }
          CountDownLatch lp = new CountDownLatch(o.producers);
          latches.add(lp);
          for (int c = 0; c < o.producers; c++) {
            int id = c;
            vertx.runOnContext(v -> pushLoop(id, a, lp, () -> false));
          }
        }
        default -> throw new IllegalStateException(o.mode);
      }
      log(o.mode + " on " + queue + ": warm-up " + o.warmup + " s, then " + o.duration + " s measured");
      sleepUntil(windowStart);
      s0 = snapshot();
      long lastLog = System.nanoTime();
      while (System.nanoTime() < windowEnd) {
        sleepUntil(Math.min(windowEnd, lastLog + TimeUnit.SECONDS.toNanos(10)));
        lastLog = System.nanoTime();
        if (lastLog < windowEnd) {
          log(String.format(Locale.ROOT, "%.0f s: delivered %d, pushed %d, errors %d",
              (lastLog - windowStart) / 1e9, delivered.get(), pushed.get(),
              httpErrors.get() + itemErrors.get() + exceptions.get()));
        }
      }
      s1 = snapshot();
      stopping = true;
      secs = (windowEnd - windowStart) / 1e9;
      for (CountDownLatch l : latches) {
        if (!l.await(o.popTimeoutMs + 65_000L, TimeUnit.MILLISECONDS)) log("some loops did not finish in time");
      }
      out.put("measured_s", round2(secs));
      out.put("messages", delivered.get());
      out.put("messages_per_s", round2(delivered.get() / secs));
      out.put("requests", requests.get());
      out.put("requests_per_s", round2(requests.get() / secs));
      if (!o.mode.equals("push")) {
        out.put("pushed_messages", pushed.get());
        out.put("pushed_per_s", round2(pushed.get() / secs));
        out.put("empty_pops", emptyPops.get());
        out.put("backlog_at_end", pushedTotal.get() - ackedTotal.get() / (o.mode.equals("fanout") ? Math.max(1, o.groups) : 1));
      }
      if (o.mode.equals("fanout")) {
        JsonObject g = new JsonObject();
        long min = Long.MAX_VALUE;
        long max = 0;
        for (int k = 0; k < o.groups; k++) {
          long v = perGroup.getOrDefault("g-" + k, new AtomicLong()).get();
          min = Math.min(min, v);
          max = Math.max(max, v);
        }
        g.put("min_msgs_per_s", round2(min / secs)).put("max_msgs_per_s", round2(max / secs));
        out.put("per_group", g);
        out.put("fanout_ratio", pushed.get() > 0 ? round2((double) delivered.get() / (pushed.get() * (double) o.groups)) : null);
      }
    }
    out.put("latency_ms", summary(allLatency.sorted()));
    JsonObject byKind = new JsonObject();
    for (String k : new java.util.TreeSet<>(latency.keySet())) {
      LongList l = latency.get(k);
      if (l != null) byKind.put(k, summary(l.sorted()));
    }
    out.put("latency_by_kind_ms", byKind);
    long total = httpErrors.get() + itemErrors.get() + exceptions.get();
    JsonObject err = new JsonObject()
        .put("total", total)
        .put("http_non_2xx", httpErrors.get())
        .put("items", itemErrors.get())
        .put("exceptions", exceptions.get())
        .put("outside_window", warmupErrors.get());
    if (!errorSamples.isEmpty()) {
      JsonObject samples = new JsonObject();
      errorSamples.forEach((k, v) -> samples.put(k, v.get()));
      err.put("samples", samples);
    }
    out.put("errors", err);
    putResources(out, s0, s1, delivered.get());
    return out;
  }

  static void sleepUntil(long nanoDeadline) throws InterruptedException {
    long d;
    while ((d = nanoDeadline - System.nanoTime()) > 0) TimeUnit.NANOSECONDS.sleep(Math.min(d, 500_000_000L));
  }

  public static void main(String[] args) throws Exception {
    Opts o = parse(args);
    Bench bench = new Bench(o);
    int rc = 0;
    try {
      JsonObject out = bench.run();
      if (o.reference > 0) {
        double ours = out.getDouble("messages_per_s", 0.0);
        out.put("reference", new JsonObject().put("broker", "Queen 0.15 (issue 23)").put("messages_per_s", o.reference)
            .put("ratio", round2(ours / o.reference)));
      }
      System.out.println(out.encode());
      System.out.flush();
    } catch (Exception e) {
      log("run failed: " + e);
      e.printStackTrace();
      rc = 1;
    } finally {
      try {
        if (bench.pgConn != null) bench.pgConn.close();
      } catch (Exception ignored) {
        // closing
      }
      bench.vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
    System.exit(rc);
  }

}
