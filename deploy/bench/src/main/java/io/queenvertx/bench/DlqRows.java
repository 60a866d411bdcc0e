package io.queenvertx.bench;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The DLQ and inspection rows of issue 23, driven through the public API only:
 * <ul>
 *   <li>{@code redrive}: make {@code --dead-letters} dead letters (push, pop, ack with status {@code dlq}; not
 *   measured), then start one bulk redrive task for the queue without {@code maxPerSecond} and measure moves per
 *   second from the start request until the task reports it is no longer running.</li>
 *   <li>{@code msgpage}: fill the queue with {@code --fill} messages (the fill time is reported), then run
 *   {@code --clients} loops of {@code GET /api/v1/messages?queue=...&limit=100} pages of the kinds the dashboard
 *   asks for (first page, next page by cursor, offset page, partition filter, status filter, time window) and
 *   report the latency of each kind.</li>
 * </ul>
 */
final class DlqRows {
  static final int PAGE = 100;
  static final List<String> PAGE_KINDS = List.of("first", "cursor", "offset", "partition", "status", "window");

  private final Bench b;
  Bench.Snapshot s0;
  Bench.Snapshot s1;

  DlqRows(Bench b) {
    this.b = b;
  }

  // ---------------------------------------------------------------- redrive

  JsonObject redrive() throws Exception {
    Opts o = b.o;
    JsonObject out = new JsonObject();
    long setup0 = System.nanoTime();
    long dead;
    if (o.deadLetterVia.equals("api")) {
      out.put("prefill_s", Bench.round2(b.prefill(o.deadLetters)));
      double dl = deadLetter(o.deadLetters);
      out.put("dead_letter_s", Bench.round2(dl));
      dead = b.ackedTotal.get();
    } else {
      dead = insertDeadLetters(o.deadLetters);
    }
    out.put("dead_letter_via", o.deadLetterVia);
    out.put("dead_letters", dead);
    out.put("setup_s", Bench.round2((System.nanoTime() - setup0) / 1e9));
    if (dead < o.deadLetters) Bench.log("only " + dead + " of " + o.deadLetters + " messages were dead-lettered");

    b.windowStart = System.nanoTime();
    b.windowEnd = Long.MAX_VALUE;
    s0 = b.snapshot();
    long t0 = System.nanoTime();
    Bench.Resp r = Bench.await(b.a.post("/api/v1/dlq/redrive",
        Buffer.buffer(new JsonObject().put("queue", b.queue).encode()), 30_000));
    if (r.statusCode() != 201) {
      throw new IllegalStateException("redrive start: HTTP " + r.statusCode() + " " + r.bodyAsString());
    }
    String id = new JsonObject(r.body()).getString("taskId");
    Bench.log("redrive task " + id + " started on " + b.queue);
    long deadline = t0 + TimeUnit.SECONDS.toNanos(o.redriveTimeout);
    JsonObject task;
    long lastLog = t0;
    boolean timedOut = false;
    while (true) {
      Bench.Resp g = Bench.await(b.a.get("/api/v1/dlq/redrive/" + id, 30_000));
      if (g.statusCode() != 200) throw new IllegalStateException("redrive get: HTTP " + g.statusCode());
      task = new JsonObject(g.body());
      if (!"running".equals(task.getString("status"))) break;
      long now = System.nanoTime();
      if (now > deadline) {
        timedOut = true;
        task = new JsonObject(Bench.await(b.a.post("/api/v1/dlq/redrive/" + id + "/cancel", Buffer.buffer("{}"),
            30_000)).body());
        Bench.log("redrive did not finish within " + o.redriveTimeout + " s: cancelled");
        break;
      }
      if (now - lastLog > TimeUnit.SECONDS.toNanos(10)) {
        lastLog = now;
        Bench.log(String.format(Locale.ROOT, "redrive: %d moved after %.0f s", task.getLong("moved", 0L),
            (now - t0) / 1e9));
      }
      Bench.sleepUntil(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50));
    }
    long t1 = System.nanoTime();
    b.windowEnd = t1;
    s1 = b.snapshot();
    double secs = (t1 - t0) / 1e9;
    long moved = task.getLong("moved", 0L);
    long handled = moved + task.getLong("duplicate", 0L) + task.getLong("gone", 0L) + task.getLong("failed", 0L);
    out.put("measured_s", Bench.round2(secs));
    b.delivered.set(moved);
    out.put("messages", moved);
    out.put("messages_per_s", Bench.round2(moved / secs));
    out.put("moves_per_s", Bench.round2(moved / secs));
    long created = epochMillis(task.getValue("createdAt"));
    long finished = epochMillis(task.getValue("finishedAt"));
    if (created > 0 && finished > created) {
      out.put("moves_per_s_server", Bench.round2(moved * 1000.0 / (finished - created)));
    }
    out.put("redrive_timed_out", timedOut);
    out.put("task", task);
    if (handled != moved) b.itemErrors.addAndGet(handled - moved);
    if (task.getLong("failed", 0L) > 0) b.sample("redrive failed rows: " + task.getString("lastError"));
    return out;
  }

  /**
   * Creates the queue's partitions through the API (one push of one message per partition), then inserts n dead-letter
   * rows spread over them straight into {@code queen.log_dlq} through the {@code --pg} connection, shaped as the ack
   * path files them (payload snapshot, error, retry count, increasing failed_at). The API files one dead letter per
   * pop+ack round trip (a batch ack acts on its lowest negative signal only), about 70 per second here, which would make
   * this setup take half an hour; {@code --dead-letter-via api} still does it that way.
   */
  private long insertDeadLetters(long n) throws Exception {
    if (b.pgConn == null) throw new IllegalStateException("redrive with --dead-letter-via sql needs --pg");
    Bench.Resp r = Bench.await(b.a.post("/api/v1/push", Buffer.buffer(b.pushBody(0, b.o.partitions)), 30_000));
    if (r.statusCode() != 201) throw new IllegalStateException("push: HTTP " + r.statusCode() + " " + r.bodyAsString());
    String payload = new JsonObject().put("pad", b.pad).encode();
    try (var st = b.pgConn.prepareStatement("INSERT INTO queen.log_dlq(partition_id, consumer_group, \"offset\", "
        + "message_id, transaction_id, payload, error, retry_count, failed_at) "
        + "SELECT p.ids[1 + g % cardinality(p.ids)], '__QUEUE_MODE__', g, gen_random_uuid(), ? || '-dead-' || g, "
        + "jsonb_build_object('n', g) || ?::jsonb, 'bench dead letter', 3, now() - interval '1 hour' + g * interval '10 us' "
        + "FROM (SELECT array_agg(lp.id ORDER BY lp.name) AS ids FROM queen.log_partitions lp "
        + "JOIN queen.queues q ON q.id = lp.queue_id WHERE q.name = ?) p, generate_series(1, ?) g")) {
      st.setString(1, b.runId);
      st.setString(2, payload);
      st.setString(3, b.queue);
      st.setLong(4, n);
      long t0 = System.nanoTime();
      int rows = st.executeUpdate();
      Bench.log(String.format(Locale.ROOT, "inserted %d dead letters in %.1f s", rows, (System.nanoTime() - t0) / 1e9));
      return rows;
    }
  }

  /**
   * Pops the queue and dead-letters every message; returns seconds. An ack batch acts on its lowest negative signal
   * only (API.md §5.5), so each popped message is acked with status dlq in its own request, in offset order, while
   * the batch's lease lasts; the first one that is not dead-lettered ends the batch and the loop pops again.
   */
  private double deadLetter(long n) throws InterruptedException {
    Bench.log("dead-lettering " + n + " messages of " + b.queue);
    long t0 = System.nanoTime();
    int loops = Math.max(1, b.o.clients);
    CountDownLatch done = new CountDownLatch(loops);
    AtomicLong empties = new AtomicLong();
    for (int c = 0; c < loops; c++) {
      b.vertx.runOnContext(v -> deadLetterLoop(n, done, empties));
    }
    done.await(b.o.redriveTimeout, TimeUnit.SECONDS);
    return (System.nanoTime() - t0) / 1e9;
  }

  private void deadLetterLoop(long n, CountDownLatch done, AtomicLong empties) {
    if (b.ackedTotal.get() >= n || empties.get() > 50) {
      done.countDown();
      return;
    }
    String path = "/api/v1/pop/queue/" + b.queue + "?batch=" + b.o.batch + "&wait=true&timeout=1000";
    b.a.get(path, 65_000).onComplete(ar -> {
      if (ar.failed() || ar.result().statusCode() != 200) {
        if (ar.succeeded() && ar.result().statusCode() == 204) empties.incrementAndGet();
        else if (ar.succeeded()) b.httpError(false, "dead-letter pop", ar.result());
        else b.exception(false, "dead-letter pop", ar.cause());
        b.vertx.setTimer(20, x -> deadLetterLoop(n, done, empties));
        return;
      }
      List<Wire.Popped> msgs = Wire.popped(ar.result().body());
      if (msgs.isEmpty()) empties.incrementAndGet();
      deadLetterEach(msgs, 0, n, done, empties);
    });
  }

  private void deadLetterEach(List<Wire.Popped> msgs, int i, long n, CountDownLatch done, AtomicLong empties) {
    if (i >= msgs.size() || b.ackedTotal.get() >= n) {
      deadLetterLoop(n, done, empties);
      return;
    }
    b.a.post("/api/v1/ack/batch", Wire.ackBody(null, List.of(msgs.get(i)), "dlq"), 60_000).onComplete(ak -> {
      int dead = 0;
      if (ak.succeeded() && ak.result().statusCode() == 200) {
        dead = Wire.dlqCount(ak.result().body());
        b.ackedTotal.addAndGet(dead);
        if (dead == 0) b.sample("dead-letter ack not dead-lettered: " + ak.result().bodyAsString());
      } else if (ak.succeeded()) {
        b.httpError(false, "dead-letter ack", ak.result());
      } else {
        b.exception(false, "dead-letter ack", ak.cause());
      }
      if (dead == 0) deadLetterLoop(n, done, empties);
      else deadLetterEach(msgs, i + 1, n, done, empties);
    });
  }

  // ---------------------------------------------------------------- msgpage

  JsonObject msgpage() throws Exception {
    Opts o = b.o;
    JsonObject out = new JsonObject();
    Instant fillStart = Instant.now();
    double fill = b.prefill(o.fill);
    Instant fillEnd = Instant.now();
    out.put("fill_s", Bench.round2(fill));
    out.put("fill_messages", b.pushedTotal.get());
    out.put("fill_per_s", Bench.round2(b.pushedTotal.get() / fill));
    // a one-minute window in the middle of the fill: the dashboard's from/to filter
    Instant mid = fillStart.plusMillis((fillEnd.toEpochMilli() - fillStart.toEpochMilli()) / 2);
    String window = "&from=" + enc(mid.toString()) + "&to=" + enc(mid.plusSeconds(60).toString());

    AtomicLong pages = new AtomicLong();
    AtomicLong shortPages = new AtomicLong();
    long t0 = System.nanoTime();
    b.windowStart = t0 + TimeUnit.SECONDS.toNanos(o.warmup);
    b.windowEnd = b.windowStart + TimeUnit.SECONDS.toNanos(o.duration);
    CountDownLatch done = new CountDownLatch(o.clients);
    for (int c = 0; c < o.clients; c++) {
      b.vertx.runOnContext(v -> pageLoop(window, new String[1], pages, shortPages, done));
    }
    Bench.log("msgpage on " + b.queue + ": warm-up " + o.warmup + " s, then " + o.duration + " s measured");
    Bench.sleepUntil(b.windowStart);
    s0 = b.snapshot();
    Bench.sleepUntil(b.windowEnd);
    s1 = b.snapshot();
    b.stopping = true;
    if (!done.await(70, TimeUnit.SECONDS)) Bench.log("some page loops did not finish in time");
    double secs = (b.windowEnd - b.windowStart) / 1e9;
    out.put("measured_s", Bench.round2(secs));
    out.put("messages", b.delivered.get());
    out.put("messages_per_s", Bench.round2(b.delivered.get() / secs));
    out.put("pages", pages.get());
    out.put("pages_per_s", Bench.round2(pages.get() / secs));
    out.put("short_pages", shortPages.get());
    out.put("requests", b.requests.get());
    out.put("requests_per_s", Bench.round2(b.requests.get() / secs));
    return out;
  }

  /** One page loop: each request is a page of a random kind; cursor pages follow this loop's last nextCursor. */
  private void pageLoop(String window, String[] cursor, AtomicLong pages, AtomicLong shortPages, CountDownLatch done) {
    if (b.stopping) {
      done.countDown();
      return;
    }
    ThreadLocalRandom rnd = ThreadLocalRandom.current();
    String kind = PAGE_KINDS.get(rnd.nextInt(PAGE_KINDS.size()));
    if (kind.equals("cursor") && cursor[0] == null) kind = "first";
    StringBuilder path = new StringBuilder("/api/v1/messages?queue=").append(enc(b.queue)).append("&limit=").append(PAGE);
    switch (kind) {
      case "cursor" -> path.append("&cursor=").append(enc(cursor[0]));
      case "offset" -> path.append("&offset=").append(rnd.nextInt(b.o.maxOffset / PAGE + 1) * PAGE);
      case "partition" -> path.append("&partition=p-").append(rnd.nextInt(b.o.partitions));
      case "status" -> path.append("&status=pending");
      case "window" -> path.append(window);
      default -> { }
    }
    String k = kind;
    long t0 = System.nanoTime();
    b.a.get(path.toString(), 60_000).onComplete(ar -> {
      long t1 = System.nanoTime();
      boolean win = b.inWindow(t1);
      if (ar.failed()) {
        b.exception(win, "page " + k, ar.cause());
        b.vertx.setTimer(50, x -> pageLoop(window, cursor, pages, shortPages, done));
        return;
      }
      Bench.Resp r = ar.result();
      if (r.statusCode() != 200) {
        b.httpError(win, "page " + k, r);
      } else {
        JsonObject body = new JsonObject(r.body());
        JsonArray msgs = body.getJsonArray("messages", new JsonArray());
        Object next = body.getValue("nextCursor");
        cursor[0] = next instanceof String s && !s.isEmpty() ? s : null;
        if (win) {
          b.record(k, t0, t1);
          pages.incrementAndGet();
          b.delivered.addAndGet(msgs.size());
          if (msgs.size() < PAGE) {
            shortPages.incrementAndGet();
            b.sample("short page " + k + ": " + msgs.size() + " messages");
          }
        }
      }
      pageLoop(window, cursor, pages, shortPages, done);
    });
  }

  /** A task timestamp (ISO-8601 text or epoch millis) as epoch millis; 0 when absent or unreadable. */
  private static long epochMillis(Object v) {
    if (v instanceof Number n) return n.longValue();
    if (v instanceof String s) {
      try {
        return Instant.parse(s).toEpochMilli();
      } catch (RuntimeException e) {
        return 0;
      }
    }
    return 0;
  }

  private static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }
}
