package io.queenvertx.state;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.TestNode.Reply;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/** Locks and semaphores over HTTP (docs/design/queen2-contract.md §4), and the sweeps and gauges of §9. */
class LocksIT {
  @NodeFixture(env = {"RETENTION_INTERVAL=200"})
  static TestNode node;

  static JsonObject acquire(String name, String owner, int ttl, int limit) {
    return new JsonObject().put("op", "acquire").put("name", name).put("owner", owner).put("ttlSeconds", ttl)
        .put("limit", limit);
  }

  static JsonArray locks(JsonObject... ops) {
    Reply r = call(ops);
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    return r.json().getJsonArray("results");
  }

  static Reply call(JsonObject... ops) {
    JsonArray a = new JsonArray();
    for (JsonObject o : ops) a.add(o);
    return node.post("/api/v1/locks", new JsonObject().put("operations", a));
  }

  static <T> List<T> concurrently(int n, java.util.function.IntFunction<Callable<T>> task) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(n);
    try {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<T>> fs = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        Callable<T> c = task.apply(i);
        fs.add(pool.submit(() -> {
          start.await();
          return c.call();
        }));
      }
      start.countDown();
      List<T> out = new ArrayList<>();
      for (Future<T> f : fs) out.add(f.get(120, TimeUnit.SECONDS));
      return out;
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void twentyConcurrentAcquirersNeverHoldTheLockTogether() throws Exception {
    String name = "mx-" + Wire.shortId();
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger overlaps = new AtomicInteger();
    AtomicInteger sections = new AtomicInteger();
    List<Long> tokens = java.util.Collections.synchronizedList(new ArrayList<>());
    concurrently(20, i -> () -> {
      String owner = "w" + i;
      for (int round = 0; round < 2; round++) {
        JsonObject got;
        do {
          got = locks(acquire(name, owner, 30, 1)).getJsonObject(0);
        } while (!got.getBoolean("acquired"));
        if (inside.incrementAndGet() != 1) overlaps.incrementAndGet();
        sections.incrementAndGet();
        tokens.add(got.getLong("token"));
        inside.decrementAndGet();
        JsonObject rel = locks(new JsonObject().put("op", "release").put("name", name)
            .put("token", got.getLong("token"))).getJsonObject(0);
        assertThat(rel.getBoolean("released")).as(rel.encode()).isTrue();
      }
      return null;
    });
    assertThat(overlaps.get()).as("two holders at once").isZero();
    assertThat(sections.get()).isEqualTo(40);
    assertThat(new TreeSet<>(tokens)).as("every grant a new token").hasSize(40);
  }

  @Test
  void aSemaphoreGrantsAtMostItsLimit() throws Exception {
    String name = "sem-" + Wire.shortId();
    List<JsonObject> got = concurrently(10, i -> () -> locks(acquire(name, "o" + i, 60, 3)).getJsonObject(0));
    List<JsonObject> granted = got.stream().filter(g -> g.getBoolean("acquired")).toList();
    assertThat(granted).hasSize(3);
    Set<Integer> slots = new TreeSet<>();
    for (JsonObject g : granted) slots.add(g.getInteger("slot"));
    assertThat(slots).containsExactly(0, 1, 2);
    JsonObject refused = got.stream().filter(g -> !g.getBoolean("acquired")).findFirst().orElseThrow();
    assertThat(refused.getString("reason")).isEqualTo("held");
    assertThat(refused.getJsonArray("holders")).hasSize(3);
    JsonObject get = locks(new JsonObject().put("op", "get").put("name", name)).getJsonObject(0);
    assertThat(get.getBoolean("held")).isTrue();
    assertThat(get.getJsonArray("holders")).hasSize(3);
    JsonObject again = locks(acquire(name, granted.get(0).getString("owner"), 60, 3)).getJsonObject(0);
    assertThat(again.getBoolean("already")).as("a retried acquire converges").isTrue();
    assertThat(again.getLong("token")).isEqualTo(granted.get(0).getLong("token"));
    assertThat(locks(acquire("big-" + Wire.shortId(), "o", 60, 1024)).getJsonObject(0).getBoolean("acquired")).isTrue();
    Reply over = call(acquire(name, "o", 60, 1025));
    KvIT.assertRefused(over, 400, "locks_bad_request", "locks_bad_limit");
  }

  @Test
  void theTokenGrowsAcrossExpiryAndAStaleTokenLoses() {
    String name = "exp-" + Wire.shortId();
    JsonObject first = locks(acquire(name, "a", 1, 1)).getJsonObject(0);
    assertThat(first.getBoolean("acquired")).isTrue();
    long t1 = first.getLong("token");
    JsonObject guard = first.getJsonObject("guard");
    assertThat(guard.getString("ns")).isEqualTo("queen-locks");
    assertThat(guard.getString("key")).isEqualTo(name + "#0");
    assertThat(guard.getLong("expect")).isEqualTo(t1);
    JsonObject renewed = locks(new JsonObject().put("op", "renew").put("name", name).put("token", t1)
        .put("ttlSeconds", 1)).getJsonObject(0);
    assertThat(renewed.getBoolean("renewed")).isTrue();
    long t2 = renewed.getLong("token");
    assertThat(t2).isGreaterThan(t1);
    Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).until(() ->
        !locks(new JsonObject().put("op", "get").put("name", name)).getJsonObject(0).getBoolean("held"));
    JsonObject taken = locks(acquire(name, "b", 30, 1)).getJsonObject(0);
    assertThat(taken.getBoolean("acquired")).as("an expired permit is free").isTrue();
    assertThat(taken.getLong("token")).isGreaterThan(t2);
    JsonObject late = locks(new JsonObject().put("op", "renew").put("name", name).put("token", t2)
        .put("ttlSeconds", 30)).getJsonObject(0);
    assertThat(late.getBoolean("renewed")).isFalse();
    assertThat(late.getString("reason")).isEqualTo("lost");
    JsonObject rel = locks(new JsonObject().put("op", "release").put("name", name).put("token", t2)).getJsonObject(0);
    assertThat(rel.getBoolean("released")).isFalse();
    // the old holder's guard is stale: a kv call carrying it is refused with kv_precondition
    Reply guarded = node.post("/api/v1/kv", new JsonObject().put("operations", new JsonArray()
        .add(new JsonObject().put("op", "put").put("ns", "fenced").put("key", name).put("value", 1).put("forever", true))
        .add(renewed.getJsonObject("guard"))));
    assertThat(guarded.json().getString("reason")).isEqualTo("kv_precondition");
    assertThat(guarded.json().getString("kvReason")).isEqualTo("version");
    Reply fresh = node.post("/api/v1/kv", new JsonObject().put("operations", new JsonArray()
        .add(taken.getJsonObject("guard"))));
    assertThat(fresh.json().getJsonArray("results").getJsonObject(0).getBoolean("applied")).isTrue();
  }

  @Test
  void badInputIs400NamingTheField() {
    KvIT.assertRefused(call(new JsonObject().put("op", "acquire").put("name", "x").put("ttlSeconds", "long")), 400,
        "locks_bad_request", "locks_bad_ttl");
    KvIT.assertRefused(call(new JsonObject().put("op", "acquire").put("name", "a#b").put("ttlSeconds", 5)), 400,
        "locks_bad_request", "locks_bad_name");
    KvIT.assertRefused(call(new JsonObject().put("op", "renew").put("name", "x").put("ttlSeconds", 5)), 400,
        "locks_bad_request", "locks_token_required");
    KvIT.assertRefused(call(new JsonObject().put("op", "get").put("name", "x").put("tenantId", "t")), 400,
        "locks_bad_request", "locks_tenant_not_an_input");
  }

  @Test
  void theCountersAndGaugesMove() {
    String name = "m-" + Wire.shortId();
    locks(acquire(name, "a", 60, 1));
    String held = "queen_locks_ops_total{op=\"acquire\",result=\"held\"}";
    double before = KvIT.metricOrZero(node, held);
    locks(acquire(name, "b", 60, 1));
    assertThat(node.metric(held)).isEqualTo(before + 1);
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> node.metric("queen_lock_fences") >= 1);

    double expired = node.metric("queen_kv_expired_total");
    node.post("/api/v1/kv", new JsonObject().put("operations", new JsonArray().add(new JsonObject().put("op", "put")
        .put("ns", "sweep").put("key", Wire.shortId()).put("value", 1).put("ttlSeconds", 1))));
    Awaitility.await().atMost(Duration.ofSeconds(15)).until(() -> node.metric("queen_kv_expired_total") > expired);
    Wire.execute("ANALYZE queen.kv_entries");
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> node.metric("queen_kv_entries") > 0);
  }

  @Test
  void theKeyValueRoutesCannotMintAPermit() {
    String name = "forge-" + Wire.shortId();
    JsonObject held = locks(acquire(name, "holder", 60, 2)).getJsonObject(0);
    long token = held.getLong("token");
    // a forged second permit, by every write the KV routes have: each a 400 naming the namespace, nothing written
    JsonObject forged = new JsonObject().put("ns", "queen-locks").put("key", name + "#1")
        .put("value", new JsonObject().put("owner", "forger")).put("forever", true);
    List<Reply> refused = List.of(
        node.post("/api/v1/kv", new JsonObject().put("operations", new JsonArray().add(forged.copy().put("op", "put")))),
        node.post("/api/v1/kv", new JsonObject().put("operations", new JsonArray()
            .add(forged.copy().put("op", "putIfAbsent")))),
        node.post("/api/v1/kv", new JsonObject().put("operations", new JsonArray().add(new JsonObject().put("op", "incr")
            .put("ns", "queen-locks").put("key", name + "#0").put("delta", 1).put("forever", true)))),
        KvIT.send(node, "PUT", "/api/v1/kv/queen-locks/" + name + "%231", new JsonObject().put("value", 1).put("forever", true)));
    for (Reply r : refused) {
      KvIT.assertRefused(r, 400, "kv_bad_request", "kv_reserved_namespace");
      assertThat(r.json().getString("detail")).contains("queen-locks");
    }
    Reply rider = node.post("/api/v1/transaction", new JsonObject().put("kv", new JsonArray()
        .add(forged.copy().put("op", "put"))));
    assertThat(rider.status()).as(rider.body()).isEqualTo(400);
    assertThat(rider.json().getString("code")).isEqualTo("kv_reserved_namespace");
    JsonObject get = locks(new JsonObject().put("op", "get").put("name", name)).getJsonObject(0);
    assertThat(get.getJsonArray("holders")).as("only the real permit").hasSize(1);
    assertThat(get.getJsonArray("holders").getJsonObject(0).getLong("token")).isEqualTo(token);

    // what stays: reading a permit, checking it (the guard), deleting a stuck one; and queen-supervisor is writable
    JsonArray kv = node.post("/api/v1/kv", new JsonObject().put("operations", new JsonArray()
        .add(new JsonObject().put("op", "get").put("ns", "queen-locks").put("key", name + "#0"))
        .add(held.getJsonObject("guard").copy().put("required", false))
        .add(new JsonObject().put("op", "put").put("ns", "queen-supervisor").put("key", name + "/head")
            .put("value", 1).put("ttlSeconds", 60)))).json().getJsonArray("results");
    assertThat(kv.getJsonObject(0).getLong("version")).isEqualTo(token);
    assertThat(kv.getJsonObject(1).getBoolean("applied")).isTrue();
    assertThat(kv.getJsonObject(2).getBoolean("applied")).isTrue();
    JsonObject freed = node.post("/api/v1/kv", new JsonObject().put("operations", new JsonArray()
        .add(new JsonObject().put("op", "delete").put("ns", "queen-locks").put("key", name + "#0").put("expect", token))))
        .json().getJsonArray("results").getJsonObject(0);
    assertThat(freed.getBoolean("applied")).isTrue();
    JsonObject next = locks(acquire(name, "next", 60, 1)).getJsonObject(0);
    assertThat(next.getBoolean("acquired")).isTrue();
    assertThat(next.getLong("token")).isGreaterThan(token);
  }
}
