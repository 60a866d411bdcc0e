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
/** The {@code wakeup} mode: cross-node wake-up of a parked long poll. */
abstract class WakeupMode extends Loops {
  WakeupMode(Opts o) {
    super(o);
  }

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
}
