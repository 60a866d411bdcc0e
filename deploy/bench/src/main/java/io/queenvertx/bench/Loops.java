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
/** The push and pop+ack loops of the throughput modes ({@code push}, {@code popack}, {@code fanout}). */
abstract class Loops extends Measured {
  Loops(Opts o) {
    super(o);
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

  void drainAck(Future<Resp> popF) {
    try {
      Resp p = await(popF);
      if (p.statusCode() == 200) await(ack(a, null, Wire.popped(p.body())));
    } catch (Exception ignored) {
      // best effort
    }
  }
}
