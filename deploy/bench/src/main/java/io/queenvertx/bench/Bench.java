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
public final class Bench extends WakeupMode {
  Bench(Opts o) {
    super(o);
  }

  static String usage() {
    return Opts.usage();
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
    out.put("params", params());

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
      Snapshot[] window = runThroughput(out);
      s0 = window[0];
      s1 = window[1];
    }
    putOutcome(out);
    putResources(out, s0, s1, delivered.get());
    return out;
  }

  /** The parameters of the run, as its JSON line reports them. */
  private JsonObject params() {
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
    return params;
  }

  /** The throughput modes ({@code push}, {@code popack}, {@code fanout}): the loops, the window and its counts. */
  private Snapshot[] runThroughput(JsonObject out) throws Exception {
    if (o.mode.equals("popack") && o.prefill > 0) out.put("prefill_s", round2(prefill(o.prefill)));
    if (o.idle > 0) measureIdle(o.idle);
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
    Snapshot s0 = snapshot();
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
    Snapshot s1 = snapshot();
    stopping = true;
    double secs = (windowEnd - windowStart) / 1e9;
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
    return new Snapshot[] {s0, s1};
  }

  /** Latencies, errors: the end of every mode's JSON line. */
  private void putOutcome(JsonObject out) {
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
  }

  static void sleepUntil(long nanoDeadline) throws InterruptedException {
    long d;
    while ((d = nanoDeadline - System.nanoTime()) > 0) TimeUnit.NANOSECONDS.sleep(Math.min(d, 500_000_000L));
  }

  public static void main(String[] args) throws Exception {
    Opts o = Opts.parse(args);
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
