package io.queenvertx.stats;

import io.queenvertx.metrics.OpStats;
import io.queenvertx.metrics.StatsCounters;
import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.bus.PushOutcome;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The in-memory counters: minute attribution, draining without loss, the key cap, and forgetting old minutes. */
class StatsCountersTest {
  static final UUID TENANT = UUID.fromString("00000000-0000-0000-0000-000000000001");
  final AtomicLong clock = new AtomicLong(1_000L * 60_000 + 5_000);
  final StatsCounters counters = new StatsCounters(clock::get);
  final OpStats stats = new OpStats(counters);

  static PushOutcome outcome(String queue, String status) {
    return new PushOutcome(0, UUID.randomUUID(), "t", queue, status, null, -1);
  }

  static long sum(JsonArray rows, String key) {
    long s = 0;
    for (Object o : rows) s += ((JsonObject) o).getLong(key, 0L);
    return s;
  }

  @Test
  void countsLandInTheMinuteTheyHappenedAndADrainTakesThemOnce() {
    stats.push(TENANT, List.of(outcome("a", "queued"), outcome("b", "queued"), outcome("a", "duplicate"),
        outcome("a", "buffered")), 3_000_000);
    clock.addAndGet(60_000); // minute 1001
    stats.push(TENANT, List.of(outcome("a", "queued")), 9_000_000);

    var closed = counters.drain(1001, false); // minute 1000 only
    assertThat(closed.nodes()).singleElement().satisfies(o -> {
      JsonObject n = (JsonObject) o;
      assertThat(n.getLong("m")).isEqualTo(1000);
      assertThat(n.getLong("push_requests")).isEqualTo(1);
      assertThat(n.getLong("push_messages")).isEqualTo(3);
      assertThat(n.getInteger("push_latency_ms_max")).isEqualTo(3);
    });
    JsonObject a = closed.queues().stream().map(o -> (JsonObject) o).filter(q -> "a".equals(q.getString("queue")))
        .findFirst().orElseThrow();
    // queue a appears twice in the request but is one request of it; a duplicate is a conflated push
    assertThat(a.getLong("push_requests")).isEqualTo(1);
    assertThat(a.getLong("push_messages")).isEqualTo(2);
    assertThat(a.getLong("conflated")).isEqualTo(1);
    assertThat(a.getString("tenant")).isEqualTo(TENANT.toString());
    assertThat(counters.drain(1001, false).isEmpty()).as("taken once").isTrue();

    var all = counters.drain(1001, true);
    assertThat(all.nodes()).singleElement().satisfies(o -> assertThat(((JsonObject) o).getLong("m")).isEqualTo(1001));
    assertThat(sum(all.queues(), "push_messages")).isEqualTo(1);
  }

  @Test
  void minutesAreForgottenOnceDrainedAMinuteAfterTheyClosed() {
    stats.dbError();
    clock.addAndGet(60_000);
    stats.dbError();
    clock.addAndGet(60_000);
    stats.dbError();
    assertThat(counters.bucketCount()).isEqualTo(3);
    var d = counters.drain(counters.minuteNow(), false);
    assertThat(sum(d.nodes(), "db_errors")).isEqualTo(2);
    assertThat(counters.bucketCount()).isEqualTo(2); // minute 1000 gone, 1001 kept for late increments
  }

  @Test
  void queueKeysOfAMinuteAreCappedButNodeFiguresStillCount() {
    for (int i = 0; i < StatsCounters.MAX_KEYS_PER_MINUTE + 50; i++) stats.pop(TENANT, "q" + i, true, 0);
    var d = counters.drain(counters.minuteNow(), true);
    assertThat(d.queues()).hasSize(StatsCounters.MAX_KEYS_PER_MINUTE);
    assertThat(sum(d.nodes(), "pop_requests")).isEqualTo(StatsCounters.MAX_KEYS_PER_MINUTE + 50);
    assertThat(sum(d.nodes(), "pop_empty")).isEqualTo(StatsCounters.MAX_KEYS_PER_MINUTE + 50);
  }

  @Test
  void aNameLongerThanAQueueCanHaveCountsNodeWideOnly() {
    String tooLong = "q".repeat(256);
    String longest = "\uD83D\uDE00".repeat(255); // 255 code points in 510 chars: a queue name can be this
    stats.pop(TENANT, tooLong, true, 0);
    stats.pop(TENANT, longest, true, 0);
    var d = counters.drain(counters.minuteNow(), true);
    assertThat(d.queues()).hasSize(1);
    assertThat(d.queues().getJsonObject(0).getString("queue")).isEqualTo(longest);
    assertThat(sum(d.nodes(), "pop_requests")).isEqualTo(2);
  }

  @Test
  void acksCountByPartitionAndOnlyWhenTheySucceeded() {
    var items = List.of(new io.queenvertx.bus.AckItem("t1", "11111111-1111-1111-1111-111111111111", "completed", null,
            null, "__QUEUE_MODE__"),
        new io.queenvertx.bus.AckItem("t2", "11111111-1111-1111-1111-111111111111", "failed", null, null, "g"),
        new io.queenvertx.bus.AckItem("t3", "not-a-uuid", "completed", null, null, "g"));
    var results = new JsonArray().add(new JsonObject().put("success", true)).add(new JsonObject().put("success", true))
        .add(new JsonObject().put("success", false));
    stats.ack(items, results, 1_000_000);
    var d = counters.drain(counters.minuteNow(), true);
    assertThat(sum(d.nodes(), "ack_success")).isEqualTo(1);
    assertThat(sum(d.nodes(), "ack_failed")).isEqualTo(1);
    assertThat(sum(d.nodes(), "ack_requests")).isEqualTo(1);
    assertThat(d.queues()).singleElement().satisfies(o -> {
      JsonObject q = (JsonObject) o;
      assertThat(q.getString("pid")).isEqualTo("11111111-1111-1111-1111-111111111111");
      assertThat(q.getLong("ack_success")).isEqualTo(1);
      assertThat(q.getLong("ack_failed")).isEqualTo(1);
    });
  }

  @Test
  void incrementsRacingDrainsAreNeverLost() throws Exception {
    var live = new StatsCounters(); // the real clock: threads and drains may cross a minute boundary
    var ops = new OpStats(live);
    int threads = 4;
    int perThread = 50_000;
    var start = new CountDownLatch(1);
    var done = new AtomicBoolean();
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Thread w = new Thread(() -> {
        try {
          start.await();
        } catch (InterruptedException e) {
          return;
        }
        for (int i = 0; i < perThread; i++) ops.pop(TENANT, "race", false, 0);
      });
      w.start();
      workers.add(w);
    }
    long drained = 0;
    long queueDrained = 0;
    start.countDown();
    while (!done.get()) {
      done.set(workers.stream().noneMatch(Thread::isAlive));
      var d = live.drain(live.minuteNow(), true);
      drained += sum(d.nodes(), "pop_requests");
      queueDrained += sum(d.queues(), "pop_requests");
    }
    var d = live.drain(live.minuteNow(), true);
    drained += sum(d.nodes(), "pop_requests");
    queueDrained += sum(d.queues(), "pop_requests");
    assertThat(drained).isEqualTo((long) threads * perThread);
    assertThat(queueDrained).isEqualTo((long) threads * perThread);
  }
}
