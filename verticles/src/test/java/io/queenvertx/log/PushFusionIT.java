package io.queenvertx.log;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.kernel.Config;
import io.queenvertx.bus.Addresses;
import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.TestNode;
import io.vertx.core.Handler;
import io.vertx.core.eventbus.DeliveryContext;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The log writer's adaptive fusion window (FusionGate): concurrent single-item pushes share commits, each still gets
 * its own correct result and lands exactly once, and a lone push is never held. The hold is set far above any write
 * (10 s), so a held lone push would show as a request of 10 s, and concurrent pushes are released only by the writes in
 * flight completing or by enough frames being ready.
 */
class PushFusionIT {
  static final int CLIENTS = 32;
  static final int PER_CLIENT = 15;
  static Config.Database db;
  static TestNode node;
  static ExecutorService pool;

  @BeforeAll
  static void start() {
    db = TestDatabase.get().fresh();
    node = TestNode.start(Map.of("QUEEN_PUSH_FUSION_HOLD_US", "10000000"), db);
    pool = Executors.newFixedThreadPool(CLIENTS);
  }

  @AfterAll
  static void stop() {
    pool.shutdownNow();
    node.close();
  }

  static JsonObject push(String queue, String partition, String txn) {
    var item = new JsonObject().put("queue", queue).put("partition", partition).put("transactionId", txn)
        .put("payload", new JsonObject().put("txn", txn));
    var r = node.post("/api/v1/push", new JsonObject().put("items", new JsonArray().add(item)));
    assertThat(r.status()).as(r.body()).isEqualTo(201);
    JsonArray out = r.array();
    assertThat(out).hasSize(1);
    return out.getJsonObject(0);
  }

  static long stored(String queue) {
    return TestDatabase.queryLong(db, "SELECT COALESCE(sum(s.end_offset - s.base_offset + 1), 0) FROM queen.log_segments s"
        + " JOIN queen.log_partitions p ON p.id = s.partition_id JOIN queen.queues q ON q.id = p.queue_id"
        + " WHERE q.name = '" + queue + "'");
  }

  /** Runs one task per client at once and returns every result, in client order. */
  static <T> List<T> concurrently(List<Callable<T>> tasks) throws Exception {
    List<Future<T>> fs = new ArrayList<>();
    for (Callable<T> t : tasks) fs.add(pool.submit(t));
    List<T> out = new ArrayList<>();
    for (Future<T> f : fs) out.add(f.get(120, TimeUnit.SECONDS));
    return out;
  }

  @Test
  void concurrentSinglePushesShareCommitsAndEachGetsItsOwnResult() throws Exception {
    String q = "fusion-" + UUID.randomUUID();
    push(q, "warm", "warm-up"); // the queue exists before the measured traffic
    double writes0 = node.metric("queen_push_write_seconds_count");
    double requests0 = node.metric("queen_push_requests_total");

    // Every client its own partition: without the window, each push would leave in a bundle of its own.
    List<Callable<List<JsonObject>>> unique = new ArrayList<>();
    for (int c = 0; c < CLIENTS; c++) {
      int client = c;
      unique.add(() -> {
        List<JsonObject> mine = new ArrayList<>();
        for (int i = 0; i < PER_CLIENT; i++) mine.add(push(q, "p" + client, "t-" + client + "-" + i));
        return mine;
      });
    }
    List<List<JsonObject>> first = concurrently(unique);
    double writes = node.metric("queen_push_write_seconds_count") - writes0;
    double requests = node.metric("queen_push_requests_total") - requests0;
    int total = CLIENTS * PER_CLIENT;
    assertThat(requests).isEqualTo(total);
    assertThat(writes).as("log writes for %s concurrent single-item pushes", total).isLessThan(total / 4.0);

    Set<String> ids = new HashSet<>();
    for (int c = 0; c < CLIENTS; c++) {
      for (int i = 0; i < PER_CLIENT; i++) {
        JsonObject r = first.get(c).get(i);
        assertThat(r.getString("status")).isEqualTo("queued");
        assertThat(r.getString("transaction_id")).isEqualTo("t-" + c + "-" + i);
        assertThat(r.getInteger("index")).isZero();
        ids.add(r.getString("message_id"));
      }
    }
    assertThat(ids).hasSize(total);
    assertThat(stored(q)).isEqualTo(total + 1);

    // The same transaction ids again, concurrently: each answered duplicate with its own original id, nothing stored.
    List<Callable<List<JsonObject>>> again = new ArrayList<>();
    for (int c = 0; c < CLIENTS; c++) {
      int client = c;
      again.add(() -> {
        List<JsonObject> mine = new ArrayList<>();
        for (int i = 0; i < PER_CLIENT; i++) mine.add(push(q, "p" + client, "t-" + client + "-" + i));
        return mine;
      });
    }
    List<List<JsonObject>> second = concurrently(again);
    for (int c = 0; c < CLIENTS; c++) {
      for (int i = 0; i < PER_CLIENT; i++) {
        assertThat(second.get(c).get(i).getString("status")).isEqualTo("duplicate");
        assertThat(second.get(c).get(i).getString("message_id")).isEqualTo(first.get(c).get(i).getString("message_id"));
      }
    }
    assertThat(stored(q)).isEqualTo(total + 1);

    // Two clients race with the same new transaction id on one partition: one is queued, the other its duplicate.
    List<Callable<JsonObject>> race = new ArrayList<>();
    for (int c = 0; c < CLIENTS; c++) {
      int pair = c / 2;
      race.add(() -> push(q, "race", "race-" + pair));
    }
    List<JsonObject> raced = concurrently(race);
    for (int pair = 0; pair < CLIENTS / 2; pair++) {
      JsonObject a = raced.get(2 * pair);
      JsonObject b = raced.get(2 * pair + 1);
      assertThat(List.of(a.getString("status"), b.getString("status"))).containsExactlyInAnyOrder("queued", "duplicate");
      assertThat(a.getString("message_id")).isEqualTo(b.getString("message_id"));
    }
    assertThat(stored(q)).isEqualTo(total + 1 + CLIENTS / 2);
  }

  @Test
  void httpPushesReachTheWriterThroughItsInboxNotAnEventBusRequest() throws Exception {
    String q = "fusion-inbox-" + UUID.randomUUID();
    AtomicInteger busPushes = new AtomicInteger();
    Handler<DeliveryContext<Object>> count = dc -> {
      if (Addresses.PUSH.equals(dc.message().address())) busPushes.incrementAndGet();
      dc.next();
    };
    node.node().vertx().eventBus().addOutboundInterceptor(count);
    try {
      List<Callable<JsonObject>> pushes = new ArrayList<>();
      for (int c = 0; c < CLIENTS; c++) {
        int client = c;
        pushes.add(() -> push(q, "p" + (client % 4), "inbox-" + client));
      }
      List<JsonObject> out = concurrently(pushes);
      for (int c = 0; c < CLIENTS; c++) {
        assertThat(out.get(c).getString("status")).isEqualTo("queued");
        assertThat(out.get(c).getString("transaction_id")).isEqualTo("inbox-" + c);
      }
      assertThat(busPushes).hasValue(0);
      assertThat(stored(q)).isEqualTo(CLIENTS);
    } finally {
      node.node().vertx().eventBus().removeOutboundInterceptor(count);
    }
  }

  @Test
  void aLonePushIsNeverHeld() {
    String q = "fusion-lone-" + UUID.randomUUID();
    for (int i = 0; i < 5; i++) {
      long t0 = System.nanoTime();
      assertThat(push(q, "Default", "lone-" + i).getString("status")).isEqualTo("queued");
      // The hold is 10 s: a lone push that waited for it would take that long; unheld it takes milliseconds.
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).isLessThan(5_000);
    }
    assertThat(stored(q)).isEqualTo(5);
  }
}
