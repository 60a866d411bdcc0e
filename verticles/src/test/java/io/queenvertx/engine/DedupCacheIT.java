package io.queenvertx.engine;

import static io.queenvertx.testing.Wire.item;
import static io.queenvertx.testing.Wire.push;
import static io.queenvertx.testing.Wire.pushQueued;
import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.codec.TxnHash;
import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.HexFormat;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * The broker dedup cache (ENGINE.md §3.6) only ever narrows the SQL dedup probe; these tests write transaction ids
 * where a wrong promise would let a duplicate through: behind the node's back by a second node, across a node
 * restart (warm-up), and into a queue deleted and re-created under the cache.
 */
class DedupCacheIT {
  static final String TENANT = "00000000-0000-0000-0000-000000000001";
  static final Pattern FINGERPRINTS = Pattern.compile("(?m)^queen_dedup_cache_fingerprints(\\{[^}]*})? ([0-9.eE+]+)$");
  @NodeFixture
  static TestNode a;
  @NodeFixture
  static TestNode b;

  static String status(TestNode node, String q, String p, String txn) {
    var r = push(node, item(q, p, new JsonObject().put("t", txn), txn));
    assertThat(r.status()).as("%s", r.body()).isEqualTo(201);
    return r.array().getJsonObject(0).getString("status");
  }

  static double fingerprints(TestNode node) {
    Matcher m = FINGERPRINTS.matcher(node.get("/metrics/prometheus").body());
    return m.find() ? Double.parseDouble(m.group(2)) : -1;
  }

  @Test
  void aRepeatedTransactionIdIsADuplicateOfTheStoredMessage() {
    String q = Wire.queue("dc-repeat");
    String firstId = null;
    for (int i = 0; i < 5; i++) {
      JsonObject r = pushQueued(a, q, "p", new JsonObject().put("i", i), "r-" + i);
      if (i == 2) firstId = r.getString("message_id");
    }
    assertThat(fingerprints(a)).as("the cache holds this node's writes").isGreaterThanOrEqualTo(5);
    var again = push(a, item(q, "p", new JsonObject(), "r-2")).array().getJsonObject(0);
    assertThat(again.getString("status")).isEqualTo("duplicate");
    assertThat(again.getString("message_id")).isEqualTo(firstId);
    assertThat(status(a, q, "p", "r-5")).isEqualTo("queued");
    assertThat(Wire.frames(Wire.partitionId(q, "p"))).isEqualTo(6);
  }

  @Test
  void anIdWrittenByAnotherNodeBehindTheCachesBackIsStillADuplicate() {
    String q = Wire.queue("dc-behind");
    assertThat(status(a, q, "p", "mine-1")).isEqualTo("queued");
    assertThat(status(a, q, "p", "mine-2")).isEqualTo("queued");
    // node b writes the next offsets; node a's cache does not know them
    assertThat(status(b, q, "p", "theirs-1")).isEqualTo("queued");
    assertThat(status(b, q, "p", "theirs-2")).isEqualTo("queued");
    assertThat(status(a, q, "p", "theirs-1")).isEqualTo("duplicate");
    assertThat(status(a, q, "p", "mine-3")).isEqualTo("queued"); // a gap fill follows this write
    assertThat(status(a, q, "p", "theirs-2")).isEqualTo("duplicate");
    assertThat(status(b, q, "p", "mine-3")).isEqualTo("duplicate");
    // and interleaved, many times
    for (int i = 0; i < 20; i++) {
      TestNode writer = i % 2 == 0 ? a : b;
      TestNode other = i % 2 == 0 ? b : a;
      assertThat(status(writer, q, "p", "x-" + i)).isEqualTo("queued");
      assertThat(status(other, q, "p", "x-" + i)).as("x-%d repeated on the other node", i).isEqualTo("duplicate");
      if (i > 0) assertThat(status(writer, q, "p", "x-" + (i - 1))).isEqualTo("duplicate");
    }
    assertThat(Wire.frames(Wire.partitionId(q, "p"))).isEqualTo(25);
  }

  @Test
  void aNodeThatStartsOnAnExistingPartitionLearnsItsWindowBeforePromisingAnything() {
    String q = Wire.queue("dc-warm");
    for (int i = 0; i < 30; i++) pushQueued(a, q, "p", new JsonObject().put("i", i), "old-" + i);
    try (TestNode fresh = TestNode.start()) {
      double before = fingerprints(fresh);
      // the first write to a partition it never saw: probed in full, and it starts the warm-up read
      assertThat(status(fresh, q, "p", "new-0")).isEqualTo("queued");
      Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> fingerprints(fresh) >= before + 31);
      // now the cache covers the partition: every old id must still be found
      for (int i = 0; i < 30; i += 7) {
        assertThat(status(fresh, q, "p", "old-" + i)).as("old-%d after warm-up", i).isEqualTo("duplicate");
      }
      assertThat(status(fresh, q, "p", "new-1")).isEqualTo("queued");
      assertThat(status(fresh, q, "p", "new-0")).isEqualTo("duplicate");
    }
    assertThat(Wire.frames(Wire.partitionId(q, "p"))).isEqualTo(32);
  }

  @Test
  void aWarmUpReadsAWindowOfMoreSegmentsThanOnePage() {
    String q = Wire.queue("dc-warm-big");
    pushQueued(a, q, "p", new JsonObject().put("i", 0), "early-0");
    // 5,000 one-frame segments written straight through SQL: more hashed segment rows than one warm-up page (4,096). The
    // promise past the top offset keeps SQL from probing 5,000 times; the hashes are distinct md5 values.
    int n = 5000;
    TestDatabase.execute(Wire.db(), "SELECT count(*) FROM queen.log_push_multi(array_fill('" + TENANT
        + "'::uuid, ARRAY[" + n + "]), array_fill('" + q + "'::text, ARRAY[" + n + "]), "
        + "array_fill('p'::text, ARRAY[" + n + "]), array_fill(1, ARRAY[" + n + "]), "
        + "(SELECT array_agg(decode(md5('bulk-' || i), 'hex') ORDER BY i) FROM generate_series(1, " + n + ") i), "
        + "array_fill('\\x00'::bytea, ARRAY[" + n + "]), "
        + "array_fill(1000000000000::bigint, ARRAY[" + n + "]), NULL, NULL, NULL)");
    pushQueued(a, q, "p", new JsonObject().put("i", 1), "late-1");
    try (TestNode fresh = TestNode.start()) {
      double before = fingerprints(fresh);
      assertThat(status(fresh, q, "p", "new-0")).isEqualTo("queued");
      // every page is read: the cache ends up holding the whole window (a single-page read would give up)
      Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> fingerprints(fresh) >= before + n + 3);
      assertThat(status(fresh, q, "p", "early-0")).as("an id of the first page").isEqualTo("duplicate");
      assertThat(status(fresh, q, "p", "late-1")).as("an id past the first page").isEqualTo("duplicate");
      assertThat(status(fresh, q, "p", "new-0")).isEqualTo("duplicate");
      assertThat(status(fresh, q, "p", "new-1")).isEqualTo("queued");
    }
    assertThat(Wire.frames(Wire.partitionId(q, "p"))).isEqualTo(n + 4);
  }

  @Test
  void aQueueDeletedAndRecreatedUnderTheCacheStartsAFreshWindow() {
    String q = Wire.queue("dc-recreate");
    for (int i = 0; i < 3; i++) pushQueued(a, q, "p", new JsonObject(), "d-" + i);
    assertThat(a.delete("/api/v1/resources/queues/" + q).status()).isEqualTo(200);
    assertThat(status(a, q, "p", "d-0")).as("a new queue: the old window is gone").isEqualTo("queued");
    assertThat(status(a, q, "p", "d-0")).isEqualTo("duplicate");
    // recreated from another node, which the first node's cache cannot see
    assertThat(b.delete("/api/v1/resources/queues/" + q).status()).isEqualTo(200);
    assertThat(status(b, q, "p", "e-0")).isEqualTo("queued");
    assertThat(status(b, q, "p", "e-1")).isEqualTo("queued");
    assertThat(status(a, q, "p", "e-1")).isEqualTo("duplicate");
    assertThat(status(a, q, "p", "d-0")).isEqualTo("queued");
  }

  @Test
  void sqlHonoursAPromiseOnlyForThePartitionItWasMadeAbout() {
    String q = Wire.queue("dc-sql");
    pushQueued(a, q, "p", new JsonObject(), "s-1");
    String pid = Wire.partitionId(q, "p");
    String hash = "'\\x" + HexFormat.of().formatHex(TxnHash.of("s-1")) + "'::bytea";
    String call = "SELECT status FROM queen.log_push_multi(ARRAY['" + TENANT + "']::uuid[], ARRAY['" + q + "'], "
        + "ARRAY['p'], ARRAY[1], ARRAY[" + hash + "], ARRAY['\\x00'::bytea], ARRAY[100]::bigint[], ARRAY[%s]::uuid[], "
        + "NULL, NULL)";
    // a promise about another partition id: ignored, the window is probed, the id is found
    assertThat(TestDatabase.queryString(Wire.db(), String.format(call, "gen_random_uuid()"))).isEqualTo("duplicate");
    assertThat(TestDatabase.queryString(Wire.db(), String.format(call, "NULL"))).isEqualTo("duplicate");
    assertThat(Wire.frames(pid)).isEqualTo(1);
    // the same promise about this partition is taken at its word: that is what lets the probe be skipped
    assertThat(TestDatabase.queryString(Wire.db(), String.format(call, "'" + pid + "'"))).isEqualTo("queued");
    assertThat(TestDatabase.queryLong(Wire.db(), "SELECT window_seconds::bigint FROM queen.log_push_multi(ARRAY['"
        + TENANT + "']::uuid[], ARRAY['" + q + "'], ARRAY['p'], ARRAY[1], "
        + "ARRAY['\\x00000000000000000000000000000001'::bytea], ARRAY['\\x00'::bytea], NULL, NULL, NULL, NULL)"))
        .as("the window is reported").isEqualTo(3600);
  }
}
