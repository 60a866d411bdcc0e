package io.queenvertx.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.kernel.Config;
import io.queenvertx.codec.Frame;
import io.queenvertx.codec.Segment;
import io.queenvertx.testing.TestCluster;
import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.TestNode;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * Issue 18 item 6: once {@code configure {encryptionEnabled:true}} has answered, no node stores a plaintext frame for
 * that queue, whether its cached flag is stale (another node configured it, clustered or not), its flag lookup fails,
 * or it has no key at all. Frames are read back from PostgreSQL and decoded, so "encrypted" means the stored frame.
 */
class EncryptionRaceIT {
  static final String KEY = EncryptionIT.KEY;
  static final String DEFAULT_TENANT = "00000000-0000-0000-0000-000000000001";

  static JsonObject secret(int n) {
    return new JsonObject().put("card", "4111-1111-1111-1111").put("n", n);
  }

  static JsonObject items(String q, String txnPrefix, int count, int partitions) {
    var arr = new JsonArray();
    for (int i = 0; i < count; i++) {
      arr.add(new JsonObject().put("queue", q).put("partition", "p" + (i % partitions))
          .put("transactionId", txnPrefix + i).put("payload", secret(i)));
    }
    return new JsonObject().put("items", arr);
  }

  static void configure(TestNode n, String q, boolean enc) {
    var r = n.post("/api/v1/configure", new JsonObject().put("queue", q)
        .put("options", new JsonObject().put("encryptionEnabled", enc)));
    assertThat(r.status()).isEqualTo(200);
  }

  /** Every frame stored for {@code q} (default tenant), decoded from its segments. */
  static List<Frame> stored(Config.Database db, String q) {
    String url = "jdbc:postgresql://" + db.host() + ":" + db.port() + "/" + db.database();
    List<Frame> out = new ArrayList<>();
    try (var c = DriverManager.getConnection(url, db.user(), db.password());
         var ps = c.prepareStatement("SELECT s.blob FROM queen.log_segments s "
             + "JOIN queen.log_partitions p ON p.id = s.partition_id JOIN queen.queues q ON q.id = p.queue_id "
             + "WHERE q.name = ? ORDER BY p.name, s.base_offset")) {
      ps.setString(1, q);
      try (var rs = ps.executeQuery()) {
        while (rs.next()) {
          var seg = Segment.decode(rs.getBytes(1));
          out.addAll(seg.frames(0, seg.frameCount()));
        }
      }
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
    return out;
  }

  static List<Frame> storedWithPrefix(Config.Database db, String q, String prefix) {
    return stored(db, q).stream().filter(f -> f.transactionId().startsWith(prefix)).toList();
  }

  /** Makes the broker's flag lookup fail for {@code queues} only (the push transaction's own check is untouched). */
  static void breakLookup(Config.Database db, String... queues) {
    String names = String.join("','", queues);
    TestDatabase.execute(db, "CREATE OR REPLACE FUNCTION queen.queue_encryption(p_tenant uuid, p_queue text) "
        + "RETURNS boolean LANGUAGE plpgsql AS $f$ BEGIN IF p_queue IN ('" + names + "') THEN "
        + "RAISE EXCEPTION 'lookup broken by the test'; END IF; RETURN COALESCE((SELECT x.encryption_enabled "
        + "FROM queen.queues x WHERE x.tenant_id = COALESCE(p_tenant, '" + DEFAULT_TENANT + "') "
        + "AND x.name = p_queue), false); END $f$");
  }

  static void restoreLookup(Config.Database db) {
    TestDatabase.execute(db, "CREATE OR REPLACE FUNCTION queen.queue_encryption(p_tenant uuid, p_queue text) "
        + "RETURNS boolean LANGUAGE sql STABLE AS $f$ SELECT COALESCE((SELECT x.encryption_enabled "
        + "FROM queen.queues x WHERE x.tenant_id = COALESCE(p_tenant, '" + DEFAULT_TENANT + "') "
        + "AND x.name = p_queue), false) $f$");
  }

  static List<String> statuses(TestNode.Reply r) {
    List<String> out = new ArrayList<>();
    for (Object o : r.array()) out.add(((JsonObject) o).getString("status"));
    return out;
  }

  /** Pushes {@code requests} requests of {@code perRequest} items through {@code n} at once; all must be queued. */
  static void pushConcurrently(TestNode n, String q, String prefix, int requests, int perRequest) {
    List<CompletableFuture<TestNode.Reply>> calls = new ArrayList<>();
    for (int r = 0; r < requests; r++) {
      var body = items(q, prefix + r + "-", perRequest, 3);
      calls.add(CompletableFuture.supplyAsync(() -> n.post("/api/v1/push", body)));
    }
    for (var c : calls) {
      var reply = c.join();
      assertThat(reply.status()).isEqualTo(201);
      assertThat(statuses(reply)).containsOnly("queued");
    }
  }

  @Test
  void pushesStartedAfterAConfigureAnsweredOnAnotherUnclusteredNodeAreAllEncrypted() {
    var db = TestDatabase.get().fresh();
    try (var a = TestNode.start(Map.of("QUEEN_ENCRYPTION_KEY", KEY), db);
         var b = TestNode.start(Map.of("QUEEN_ENCRYPTION_KEY", KEY), db)) {
      String q = "race-" + UUID.randomUUID();
      // node A reads and caches "not encrypted"
      assertThat(statuses(a.post("/api/v1/push", items(q, "before-", 3, 3)))).containsOnly("queued");
      assertThat(storedWithPrefix(db, q, "before-")).hasSize(3).noneMatch(Frame::encrypted);

      // node B configures; the nodes share only the database, so A hears nothing of it
      configure(b, q, true);
      pushConcurrently(a, q, "after-", 5, 11);

      var after = storedWithPrefix(db, q, "after-");
      assertThat(after).hasSize(55);
      assertThat(after).as("frames pushed after the configure answered").allMatch(Frame::encrypted);
      // and the client never noticed: every one pops back as plaintext
      int seen = 0;
      for (int p = 0; p < 3; p++) {
        var pop = a.get("/api/v1/pop/queue/" + q + "/partition/p" + p + "?batch=100&wait=false").json();
        for (Object o : pop.getJsonArray("messages")) {
          var m = (JsonObject) o;
          if (!m.getString("transactionId").startsWith("after-")) continue;
          assertThat(m.getJsonObject("data").getString("card")).isEqualTo("4111-1111-1111-1111");
          seen++;
        }
      }
      assertThat(seen).isEqualTo(55);
    }
  }

  @Test
  void inAClusterNoPushAfterTheConfigureAnsweredIsStoredInPlaintext() throws Exception {
    var db = TestDatabase.get().fresh();
    var env = TestCluster.with(TestCluster.settings("queen-crypt-" + UUID.randomUUID(), TestNode.freePort()),
        "QUEEN_ENCRYPTION_KEY", KEY);
    try (var cluster = TestCluster.start(env, env, db)) {
      TestNode a = cluster.a();
      TestNode b = cluster.b();
      for (int round = 0; round < 5; round++) {
        String q = "race-cl-" + round + "-" + UUID.randomUUID();
        assertThat(statuses(a.post("/api/v1/push", items(q, "before-", 3, 3)))).containsOnly("queued");
        configure(b, q, true);
        // right after the 200: the announcement to A is still on its way
        pushConcurrently(a, q, "after-", 5, 11);
        var after = storedWithPrefix(db, q, "after-");
        assertThat(after).hasSize(55);
        assertThat(after).as("round %d: frames pushed after the configure answered", round)
            .allMatch(Frame::encrypted);
      }
    }
  }

  @Test
  void aNodeWithoutTheKeyFailsItsItemsForAnEncryptedQueueInsteadOfStoringPlaintext() {
    var db = TestDatabase.get().fresh();
    try (var keyed = TestNode.start(Map.of("QUEEN_ENCRYPTION_KEY", KEY), db);
         var keyless = TestNode.start(Map.of(), db)) {
      String q = "nokey-" + UUID.randomUUID();
      String plain = "nokey-plain-" + UUID.randomUUID();
      configure(keyed, q, true);
      var r = keyless.post("/api/v1/push", new JsonObject().put("items", new JsonArray()
          .add(new JsonObject().put("queue", q).put("transactionId", "k-0").put("payload", secret(0)))
          .add(new JsonObject().put("queue", plain).put("transactionId", "k-1").put("payload", secret(1)))));
      assertThat(r.status()).isEqualTo(201);
      assertThat(statuses(r)).containsExactly("failed", "queued");
      assertThat(stored(db, q)).isEmpty();
      assertThat(stored(db, plain)).hasSize(1).noneMatch(Frame::encrypted);
    }
  }

  @Test
  void aFailedFlagLookupEncryptsThatQueuesItemsInsteadOfRiskingPlaintext() {
    var db = TestDatabase.get().fresh();
    try (var node = TestNode.start(Map.of("QUEEN_ENCRYPTION_KEY", KEY), db)) {
      String q = "lookup-" + UUID.randomUUID();
      String unknown = "lookup-unknown-" + UUID.randomUUID();
      String plain = "lookup-plain-" + UUID.randomUUID();
      configure(node, q, true);
      breakLookup(db, q, unknown);
      var r = node.post("/api/v1/push", new JsonObject().put("items", new JsonArray()
          .add(new JsonObject().put("queue", q).put("transactionId", "l-0").put("payload", secret(0)))
          .add(new JsonObject().put("queue", plain).put("transactionId", "l-1").put("payload", secret(1)))
          .add(new JsonObject().put("queue", unknown).put("transactionId", "l-2").put("payload", secret(2)))));
      assertThat(r.status()).isEqualTo(201);
      assertThat(statuses(r)).containsExactly("queued", "queued", "queued");
      // the encrypted queue and the queue whose flag could not be read are both stored encrypted
      assertThat(stored(db, q)).hasSize(1).allMatch(Frame::encrypted);
      assertThat(stored(db, unknown)).hasSize(1).allMatch(Frame::encrypted);
      assertThat(stored(db, plain)).hasSize(1).noneMatch(Frame::encrypted);
      // an encrypted frame on a queue that is not encrypted still reads back as the plaintext that was pushed
      var pop = node.get("/api/v1/pop/queue/" + unknown + "?batch=10&wait=false").json().getJsonArray("messages");
      assertThat(pop).hasSize(1);
      assertThat(pop.getJsonObject(0).getJsonObject("data")).isEqualTo(secret(2));
    }
  }

  @Test
  void underPushMaintenanceAFailedFlagLookupSpoolsTheItemEncrypted() throws Exception {
    var db = TestDatabase.get().fresh();
    var spool = java.nio.file.Files.createTempDirectory("queen-spool-crypt");
    try (var node = TestNode.start(Map.of("QUEEN_ENCRYPTION_KEY", KEY, "FILE_BUFFER_DIR", spool.toString(),
        "FILE_BUFFER_FLUSH_MS", "50"), db)) {
      String q = "spool-lookup-" + UUID.randomUUID();
      String plain = "spool-plain-" + UUID.randomUUID();
      configure(node, q, true);
      breakLookup(db, q);
      assertThat(node.post("/api/v1/system/maintenance", new JsonObject().put("enabled", true)).status())
          .isEqualTo(200);
      var r = node.post("/api/v1/push", new JsonObject().put("items", new JsonArray()
          .add(new JsonObject().put("queue", q).put("transactionId", "s-0")
              .put("payload", new JsonObject().put("marker", "spool-secret-7731")))
          .add(new JsonObject().put("queue", plain).put("transactionId", "s-1").put("payload", secret(1)))));
      assertThat(statuses(r)).containsExactly("buffered", "buffered");
      // the encrypted queue's payload is not in the spool files in clear (the plain queue's is, as it should be)
      String all = "";
      try (var files = java.nio.file.Files.walk(spool)) {
        for (var f : files.filter(java.nio.file.Files::isRegularFile).toList()) {
          all += new String(java.nio.file.Files.readAllBytes(f), java.nio.charset.StandardCharsets.ISO_8859_1);
        }
      }
      assertThat(all).contains("4111-1111-1111-1111").doesNotContain("spool-secret-7731");
      restoreLookup(db);
      node.post("/api/v1/system/maintenance", new JsonObject().put("enabled", false));
      Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> stored(db, plain).size() == 1
          && stored(db, q).size() == 1);
      assertThat(stored(db, q)).allMatch(Frame::encrypted);
    }
  }

  @Test
  void aSpooledItemWhoseQueueBecameEncryptedMeanwhileIsStoredEncrypted() throws Exception {
    var db = TestDatabase.get().fresh();
    var spool = java.nio.file.Files.createTempDirectory("queen-spool-crypt").toString();
    try (var node = TestNode.start(Map.of("QUEEN_ENCRYPTION_KEY", KEY, "FILE_BUFFER_DIR", spool,
        "FILE_BUFFER_FLUSH_MS", "50"), db)) {
      String q = "spool-enc-" + UUID.randomUUID();
      node.post("/api/v1/system/maintenance", new JsonObject().put("enabled", true));
      var r = node.post("/api/v1/push", items(q, "sp-", 4, 2));
      assertThat(statuses(r)).containsOnly("buffered");
      // accepted (in plaintext) before the queue was encrypted; the replay comes after the configure
      configure(node, q, true);
      node.post("/api/v1/system/maintenance", new JsonObject().put("enabled", false));
      Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> stored(db, q).size() == 4);
      assertThat(stored(db, q)).allMatch(Frame::encrypted);
      var pop = node.get("/api/v1/pop/queue/" + q + "?batch=10&wait=false").json().getJsonArray("messages");
      assertThat(pop).hasSize(2); // one partition's worth per pop
      assertThat(pop.getJsonObject(0).getJsonObject("data").getString("card")).isEqualTo("4111-1111-1111-1111");
    }
  }

  static JsonObject txnPush(String q, String txn, int n) {
    return new JsonObject().put("operations", new JsonArray().add(new JsonObject().put("type", "push")
        .put("items", new JsonArray().add(new JsonObject().put("queue", q).put("payload", secret(n))
            .put("transactionId", txn)))));
  }

  @Test
  void aTransactionStartedAfterAConfigureAnsweredOnAnotherNodeIsEncrypted() {
    var db = TestDatabase.get().fresh();
    try (var a = TestNode.start(Map.of("QUEEN_ENCRYPTION_KEY", KEY), db);
         var b = TestNode.start(Map.of("QUEEN_ENCRYPTION_KEY", KEY), db)) {
      String q = "txn-race-" + UUID.randomUUID();
      var first = a.post("/api/v1/transaction", txnPush(q, "t-before", 0)).json();
      assertThat(first.getBoolean("success")).as(first.encode()).isTrue();
      assertThat(storedWithPrefix(db, q, "t-before")).hasSize(1).noneMatch(Frame::encrypted);
      configure(b, q, true);
      var r = a.post("/api/v1/transaction", txnPush(q, "t-after", 1)).json();
      assertThat(r.getBoolean("success")).as(r.encode()).isTrue();
      assertThat(storedWithPrefix(db, q, "t-after")).hasSize(1).allMatch(Frame::encrypted);
    }
  }

  @Test
  void aTransactionWhoseFlagLookupFailsIsRefusedAndStoresNothing() {
    var db = TestDatabase.get().fresh();
    try (var node = TestNode.start(Map.of("QUEEN_ENCRYPTION_KEY", KEY), db)) {
      String q = "txn-lookup-" + UUID.randomUUID();
      configure(node, q, true);
      breakLookup(db, q);
      var r = node.post("/api/v1/transaction", txnPush(q, "t-0", 0));
      assertThat(r.status()).isEqualTo(200);
      assertThat(r.json().getBoolean("success")).isFalse();
      assertThat(r.json().getString("error")).contains("encryption flag lookup", q);
      assertThat(stored(db, q)).isEmpty();
    }
  }
}
