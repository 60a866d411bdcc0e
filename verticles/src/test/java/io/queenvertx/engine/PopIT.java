package io.queenvertx.engine;

import static io.queenvertx.testing.Wire.item;
import static io.queenvertx.testing.Wire.pop;
import static io.queenvertx.testing.Wire.popSome;
import static io.queenvertx.testing.Wire.push;
import static io.queenvertx.testing.Wire.pushQueued;
import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.TestNode.Reply;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** The three pop routes (API.md §5.4, ENGINE.md §4): order, shape, modes and parameter errors. */
class PopIT {
  @NodeFixture
  static TestNode node;

  @Test
  void aPartitionIsDeliveredInFifoOrderAcrossPushes() {
    String q = Wire.queue("pop-fifo");
    assertThat(push(node, item(q, null, n(0), "f0"), item(q, null, n(1), "f1")).status()).isEqualTo(201);
    assertThat(push(node, item(q, null, n(2), "f2")).status()).isEqualTo(201);
    assertThat(push(node, item(q, null, n(3), "f3"), item(q, null, n(4), "f4")).status()).isEqualTo(201);
    var msgs = Wire.messages(popSome(node, q, "batch=10"));
    assertThat(msgs).extracting(m -> m.getString("transactionId")).containsExactly("f0", "f1", "f2", "f3", "f4");
    assertThat(msgs).extracting(m -> m.getJsonObject("data").getInteger("n")).containsExactly(0, 1, 2, 3, 4);
  }

  @Test
  void theBatchParameterCapsTheMessagesOfOnePop() {
    String q = Wire.queue("pop-batch");
    push(node, item(q, null, n(0), "b0"), item(q, null, n(1), "b1"), item(q, null, n(2), "b2"));
    var first = popSome(node, q, "batch=2");
    assertThat(Wire.messages(first)).extracting(m -> m.getString("transactionId")).containsExactly("b0", "b1");
  }

  @Test
  void theDefaultBatchIs200Messages() {
    String q = Wire.queue("pop-default-batch");
    JsonObject[] items = new JsonObject[250];
    for (int i = 0; i < items.length; i++) items[i] = item(q, null, i, "d" + i);
    assertThat(push(node, items).status()).isEqualTo(201);
    var msgs = Wire.messages(popSome(node, q, ""));
    assertThat(msgs).hasSize(200);
    assertThat(msgs.get(199).getString("transactionId")).isEqualTo("d199");
  }

  @Test
  void payloadsOfEveryJsonTypeComeBackAsPushed() {
    String q = Wire.queue("pop-types");
    var payloads = new JsonArray().addNull().add(new JsonArray().add(1).add("a").add(new JsonObject().putNull("b")))
        .add("\u00e9\ud83d\ude00 \"quoted\" \\ back\nline").add(42).add(-7.25).add(true)
        .add(new JsonObject().put("nested", new JsonObject().put("deep", new JsonArray().add(false))));
    JsonObject[] items = new JsonObject[payloads.size()];
    for (int i = 0; i < items.length; i++) items[i] = item(q, null, payloads.getValue(i), "ty" + i);
    assertThat(push(node, items).status()).isEqualTo(201);
    var msgs = Wire.messages(popSome(node, q, "batch=20"));
    assertThat(msgs).hasSize(payloads.size());
    for (int i = 0; i < payloads.size(); i++) {
      assertThat(msgs.get(i).getValue("data")).as("payload %d", i).isEqualTo(payloads.getValue(i));
    }
  }

  @Test
  void aPayloadComesBackVerbatimWithoutLosingNumericPrecision() {
    // ENGINE.md §3.1 "payload is kept as raw JSON text"; API.md §5.4 "data is the payload spliced back verbatim"
    String q = Wire.queue("pop-verbatim");
    String payload = "{\"amount\":12345678901234567.89,\"pi\":3.141592653589793238462643383279}";
    Reply r = node.post("/api/v1/push",
        "{\"items\":[{\"queue\":\"" + q + "\",\"transactionId\":\"v0\",\"payload\":" + payload + "}]}");
    assertThat(r.status()).isEqualTo(201);
    Reply p = pop(node, q, "batch=1");
    assertThat(p.status()).isEqualTo(200);
    assertThat(p.body()).as("the popped body carries the pushed payload text").contains("\"data\":" + payload);
  }

  @Test
  void anEmptyPopIs204WithNoBodyAndNoContentLength() {
    String q = Wire.queue("pop-empty");
    Reply r = pop(node, q, "");
    assertThat(r.status()).isEqualTo(204);
    assertThat(r.body()).isEmpty();
    assertThat(r.header("content-length")).as("a 204 announces no Content-Length, not even 0").isNull();
    Reply g = pop(node, q, "consumerGroup=g1&subscriptionMode=all");
    assertThat(g.status()).isEqualTo(204);
    assertThat(g.header("content-length")).isNull();
  }

  @Test
  void anUnparseableTypedQueryParameterIs400() {
    String q = Wire.queue("pop-typed");
    for (String query : List.of("batch=abc", "wait=1", "autoAck=yes", "timeout=-5", "leaseSeconds=1.5",
        "partitions=x")) {
      Reply r = pop(node, q, query);
      assertThat(r.status()).as(query).isEqualTo(400);
    }
  }

  @Test
  void aDiscoveryPopWithoutNamespaceOrTaskIs400WithTheFixedBody() {
    for (String path : List.of("/api/v1/pop", "/api/v1/pop?namespace=&task=", "/api/v1/pop?batch=5")) {
      Reply r = node.get(path);
      assertThat(r.status()).as(path).isEqualTo(400);
      assertThat(r.json()).isEqualTo(new JsonObject().put("success", false)
          .put("error", "namespace or task is required").put("messages", new JsonArray()).put("code", "bad_request"));
    }
  }

  @Test
  void aDiscoveryPopByNamespaceFindsAQueueNamedNamespaceDotTask() {
    String ns = "ns" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    String q = ns + ".billing";
    JsonObject pushed = pushQueued(node, q, null, n(7), "disc-1");
    JsonObject j = popPath("/api/v1/pop?namespace=" + ns);
    assertThat(j.getString("queue")).as("a discovery pop answers queue \"\"").isEmpty();
    var m = Wire.messages(j).get(0);
    assertThat(m.getString("id")).isEqualTo(pushed.getString("message_id"));
    assertThat(m.getString("partitionId")).isEqualTo(Wire.partitionId(q, "Default"));
    assertThat(m.getJsonObject("data")).isEqualTo(n(7));
  }

  @Test
  void aDiscoveryPopByTaskFindsAQueueWhoseSecondDotPartIsTheTask() {
    String task = "task" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    String q = "anyns." + task + ".x";
    pushQueued(node, q, null, n(8), "disc-2");
    JsonObject j = popPath("/api/v1/pop?task=" + task);
    assertThat(Wire.messages(j)).extracting(m -> m.getString("transactionId")).containsExactly("disc-2");
  }

  @Test
  void thePinnedPartitionRouteDeliversOnlyThatPartition() {
    String q = Wire.queue("pop-pinned");
    pushQueued(node, q, "p1", n(1), "in-p1");
    pushQueued(node, q, "p2", n(2), "in-p2");
    Reply r = node.get("/api/v1/pop/queue/" + q + "/partition/p2?batch=10");
    assertThat(r.status()).isEqualTo(200);
    JsonObject j = r.json();
    assertThat(j.getString("partition")).isEqualTo("p2");
    assertThat(j.getString("partitionId")).isEqualTo(Wire.partitionId(q, "p2"));
    assertThat(Wire.messages(j)).extracting(m -> m.getString("transactionId")).containsExactly("in-p2");
    assertThat(node.get("/api/v1/pop/queue/" + q + "/partition/p3").status())
        .as("a pinned pop on a partition with nothing is 204").isEqualTo(204);
  }

  @Test
  void aPopCarriesTheContractFieldSet() {
    String q = Wire.queue("pop-shape");
    JsonObject pushed = pushQueued(node, q, null, new JsonObject().put("hello", "world"), "shape-1");
    JsonObject j = popSome(node, q, "batch=5");
    assertThat(j.fieldNames()).contains("success", "queue", "partition", "partitionId", "leaseId", "consumerGroup",
        "messages", "partitionsClaimed");
    String pid = Wire.partitionId(q, "Default");
    assertThat(j.getBoolean("success")).isTrue();
    assertThat(j.getString("queue")).isEqualTo(q);
    assertThat(j.getString("partition")).isEqualTo("Default");
    assertThat(j.getString("partitionId")).isEqualTo(pid);
    assertThat(j.getString("leaseId")).matches(PushIT.UUID_RE);
    assertThat(j.getString("consumerGroup")).isEqualTo(Wire.QUEUE_MODE);
    assertThat(j.getInteger("partitionsClaimed")).isEqualTo(1);
    JsonObject m = Wire.messages(j).get(0);
    assertThat(m.fieldNames()).contains("id", "transactionId", "traceId", "data", "producerSub", "createdAt",
        "partitionId", "partition", "leaseId", "consumerGroup");
    assertThat(m.getString("id")).isEqualTo(pushed.getString("message_id"));
    assertThat(m.getString("transactionId")).isEqualTo("shape-1");
    assertThat(m.getValue("traceId")).as("plain pushes carry no traceId").isNull();
    assertThat(m.getValue("producerSub")).isNull();
    assertThat(m.getJsonObject("data")).isEqualTo(new JsonObject().put("hello", "world"));
    assertThat(m.getString("partitionId")).isEqualTo(pid);
    assertThat(m.getString("partition")).isEqualTo("Default");
    assertThat(m.getString("leaseId")).isEqualTo(j.getString("leaseId"));
    assertThat(m.getString("consumerGroup")).isEqualTo(Wire.QUEUE_MODE);
    String createdAt = m.getString("createdAt");
    assertThat(createdAt).endsWith("Z");
    assertThat(Instant.parse(createdAt)).isBetween(Instant.now().minusSeconds(120), Instant.now().plusSeconds(5));
  }

  @Test
  void messagesOfOneFlushShareTheSegmentCreatedAt() {
    String q = Wire.queue("pop-created");
    push(node, item(q, null, 1, "c1"), item(q, null, 2, "c2"));
    var msgs = Wire.messages(popSome(node, q, "batch=5"));
    assertThat(msgs).hasSize(2);
    assertThat(msgs.get(1).getString("createdAt")).isEqualTo(msgs.get(0).getString("createdAt"));
  }

  @Test
  void anAutoAckPopAnswersAnEmptyLeaseIdAndNeverRedelivers() {
    String q = Wire.queue("pop-autoack");
    pushQueued(node, q, null, n(1), "aa-1");
    JsonObject j = popSome(node, q, "autoAck=true&leaseSeconds=1");
    assertThat(j.getString("leaseId")).isEmpty();
    assertThat(Wire.messages(j).get(0).getString("leaseId")).isEmpty();
    String pid = Wire.partitionId(q, "Default");
    var cursor = Wire.cursor(pid, Wire.QUEUE_MODE);
    assertThat(cursor.get("committed")).as("autoAck commits inside the pop").isEqualTo(0L);
    assertThat(cursor.get("batch_end")).isNull();
    assertThat(pop(node, q, "").status()).isEqualTo(204);
    // were aa-1 merely leased, this pop would find the partition held and answer 204, or redeliver aa-1
    pushQueued(node, q, null, n(2), "aa-2");
    var next = Wire.messages(popSome(node, q, "batch=10"));
    assertThat(next).extracting(m -> m.getString("transactionId")).containsExactly("aa-2");
  }

  @Test
  void twoNamedGroupsEachReceiveEveryMessage() {
    String q = Wire.queue("pop-bus");
    push(node, item(q, null, n(0), "g0"), item(q, null, n(1), "g1"), item(q, null, n(2), "g2"));
    for (String group : List.of("billing", "audit")) {
      JsonObject j = popSome(node, q, "batch=10&consumerGroup=" + group + "&subscriptionMode=all");
      assertThat(j.getString("consumerGroup")).isEqualTo(group);
      var msgs = Wire.messages(j);
      assertThat(msgs).extracting(m -> m.getString("transactionId")).containsExactly("g0", "g1", "g2");
      assertThat(msgs).extracting(m -> m.getString("consumerGroup")).containsOnly(group);
    }
    assertThat(pop(node, q, "batch=10").status()).as("queue mode has its own cursor too").isEqualTo(200);
  }

  @Test
  void queueModeConsumersCompeteSoALeasedMessageIsNotDeliveredTwice() {
    String q = Wire.queue("pop-compete");
    pushQueued(node, q, "p1", n(1), "c-p1");
    pushQueued(node, q, "p2", n(2), "c-p2");
    JsonObject a = popSome(node, q, "batch=10");
    JsonObject b = popSome(node, q, "batch=10");
    assertThat(Wire.messages(a)).hasSize(1);
    assertThat(Wire.messages(b)).hasSize(1);
    assertThat(Wire.messages(b).get(0).getString("transactionId"))
        .isNotEqualTo(Wire.messages(a).get(0).getString("transactionId"));
    assertThat(b.getString("leaseId")).isNotEqualTo(a.getString("leaseId"));
    assertThat(pop(node, q, "batch=10").status()).as("both partitions are leased").isEqualTo(204);
  }

  @Test
  void aLeasedPartitionIsNotDeliveredToASecondQueueModeConsumer() {
    String q = Wire.queue("pop-one-lease");
    push(node, item(q, null, n(0), "l0"), item(q, null, n(1), "l1"));
    assertThat(Wire.messages(popSome(node, q, "batch=1"))).extracting(m -> m.getString("transactionId"))
        .containsExactly("l0");
    assertThat(pop(node, q, "batch=1").status()).as("one live lease per (partition, group)").isEqualTo(204);
  }

  @Test
  void concurrentQueueModePopsNeverShareAMessage() throws Exception {
    String q = Wire.queue("pop-race");
    int partitions = 8;
    int perPartition = 5;
    for (int p = 0; p < partitions; p++) {
      JsonObject[] items = new JsonObject[perPartition];
      for (int i = 0; i < perPartition; i++) items[i] = item(q, "p" + p, n(i), "r-" + p + "-" + i);
      assertThat(push(node, items).status()).isEqualTo(201);
    }
    int consumers = 16;
    var pool = Executors.newFixedThreadPool(consumers);
    try {
      var go = new CountDownLatch(1);
      List<Future<Reply>> replies = new ArrayList<>();
      for (int c = 0; c < consumers; c++) {
        replies.add(pool.submit(() -> {
          go.await();
          return pop(node, q, "batch=100");
        }));
      }
      go.countDown();
      List<String> delivered = new ArrayList<>();
      Set<String> partitionsSeen = new HashSet<>();
      for (Future<Reply> f : replies) {
        Reply r = f.get();
        assertThat(r.status()).isIn(200, 204);
        if (r.status() == 200) {
          JsonObject j = r.json();
          assertThat(partitionsSeen.add(j.getString("partition")))
              .as("partition %s leased twice at once", j.getString("partition")).isTrue();
          Wire.messages(j).forEach(m -> delivered.add(m.getString("transactionId")));
        }
      }
      assertThat(delivered).as("no message went to two consumers").doesNotHaveDuplicates();
      assertThat(delivered.size() % perPartition).as("each claim took a whole partition").isZero();
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void partitionsZeroClaimsEveryPartitionWithData() {
    String q = Wire.queue("pop-nocap");
    push(node, item(q, "a", n(0), "pa"), item(q, "b", n(1), "pb"), item(q, "c", n(2), "pc"));
    JsonObject j = popSome(node, q, "batch=10&partitions=0");
    assertThat(j.getInteger("partitionsClaimed")).isEqualTo(3);
    assertThat(Wire.messages(j)).extracting(m -> m.getString("transactionId")).containsExactlyInAnyOrder("pa", "pb",
        "pc");
    assertThat(Wire.messages(j)).extracting(m -> m.getString("leaseId")).containsOnly(j.getString("leaseId"));
  }

  @Test
  void theDefaultPopClaimsOnePartition() {
    String q = Wire.queue("pop-onecap");
    push(node, item(q, "a", n(0), "oa"), item(q, "b", n(1), "ob"));
    JsonObject j = popSome(node, q, "batch=10");
    assertThat(j.getInteger("partitionsClaimed")).isEqualTo(1);
    assertThat(Wire.messages(j)).hasSize(1);
  }

  @Test
  void aNewGroupWithSubscriptionModeNewSkipsTheBacklog() {
    String q = Wire.queue("pop-new");
    push(node, item(q, null, n(0), "old-0"), item(q, null, n(1), "old-1"));
    assertThat(pop(node, q, "consumerGroup=late&subscriptionMode=new").status()).isEqualTo(204);
    pushQueued(node, q, null, n(2), "fresh");
    var msgs = Wire.messages(popSome(node, q, "batch=10&consumerGroup=late&subscriptionMode=new"));
    assertThat(msgs).extracting(m -> m.getString("transactionId")).containsExactly("fresh");
  }

  @Test
  void aNamedGroupWithoutASubscriptionModeSkipsTheBacklogByDefault() {
    String q = Wire.queue("pop-default-new");
    pushQueued(node, q, null, n(0), "backlog");
    assertThat(pop(node, q, "consumerGroup=implicit").status()).isEqualTo(204);
    pushQueued(node, q, null, n(1), "after");
    assertThat(Wire.messages(popSome(node, q, "consumerGroup=implicit"))).extracting(m -> m.getString("transactionId"))
        .containsExactly("after");
  }

  @Test
  void subscriptionFromNowSkipsTheBacklogLikeNew() {
    String q = Wire.queue("pop-from-now");
    pushQueued(node, q, null, n(0), "before-now");
    assertThat(pop(node, q, "consumerGroup=nowers&subscriptionMode=all&subscriptionFrom=now").status())
        .isEqualTo(204);
    pushQueued(node, q, null, n(1), "after-now");
    assertThat(Wire.messages(popSome(node, q, "consumerGroup=nowers"))).extracting(m -> m.getString("transactionId"))
        .containsExactly("after-now");
  }

  @Test
  void aGroupKeepsTheStartingPointOfItsFirstPop() {
    String q = Wire.queue("pop-sticky");
    pushQueued(node, q, null, n(0), "s0");
    assertThat(Wire.messages(popSome(node, q, "consumerGroup=sticky&subscriptionMode=all")))
        .extracting(m -> m.getString("transactionId")).containsExactly("s0");
    // a later pop asking for "new" does not re-seed an existing cursor: the lease still holds s0
    assertThat(pop(node, q, "consumerGroup=sticky&subscriptionMode=new").status()).isEqualTo(204);
    assertThat(Wire.cursor(Wire.partitionId(q, "Default"), "sticky").get("committed")).isEqualTo(-1L);
  }

  @Test
  void queueModeAlwaysStartsAtTheOldestMessage() {
    String q = Wire.queue("pop-qm-all");
    pushQueued(node, q, null, n(0), "first");
    assertThat(Wire.messages(popSome(node, q, "subscriptionMode=new"))).extracting(m -> m.getString("transactionId"))
        .containsExactly("first");
  }

  @Test
  void aPopLargerThanTheInlineDecodeLimitComesBackWhole() {
    // incompressible payloads, so the pop's blobs exceed FrameDecoder.INLINE_MAX_BYTES and go to the decoder verticle
    String q = Wire.queue("pop-large");
    var rnd = new java.util.Random(7);
    List<JsonObject> items = new ArrayList<>();
    for (int i = 0; i < 60; i++) {
      byte[] b = new byte[1500];
      rnd.nextBytes(b);
      items.add(item(q, null, new JsonObject().put("n", i).put("r", java.util.Base64.getEncoder().encodeToString(b)),
          "large-" + i));
    }
    for (int from = 0; from < items.size(); from += 10) {
      assertThat(push(node, items.subList(from, from + 10).toArray(JsonObject[]::new)).status()).isEqualTo(201);
    }
    assertThat(count("SELECT sum(octet_length(blob)) FROM queen.log_segments WHERE partition_id = '"
        + Wire.partitionId(q, "Default") + "'")).isGreaterThan(io.queenvertx.decoder.FrameDecoder.INLINE_MAX_BYTES);
    var msgs = Wire.messages(popSome(node, q, "batch=100"));
    assertThat(msgs).hasSize(60);
    for (int i = 0; i < 60; i++) {
      assertThat(msgs.get(i).getString("transactionId")).isEqualTo("large-" + i);
      assertThat(msgs.get(i).getJsonObject("data")).isEqualTo(items.get(i).getJsonObject("payload"));
    }
  }

  @Test
  void aCorruptSegmentFailsThePopWhetherDecodedInlineOrByTheDecoder() {
    String small = Wire.queue("pop-corrupt-small");
    pushQueued(node, small, null, n(1), "cs-1");
    corrupt(Wire.partitionId(small, "Default"));
    Reply r = pop(node, small, "batch=10");
    assertThat(r.status()).as("small pop over a corrupt blob: %s", r.body()).isEqualTo(500);
    assertThat(r.json()).isEqualTo(new JsonObject().put("error", "pop failed").put("code", "internal"));

    String big = Wire.queue("pop-corrupt-big");
    var rnd = new java.util.Random(11);
    for (int i = 0; i < 60; i++) {
      byte[] b = new byte[1500];
      rnd.nextBytes(b);
      pushQueued(node, big, null, new JsonObject().put("r", java.util.Base64.getEncoder().encodeToString(b)), "cb-" + i);
    }
    TestDatabase.execute(Wire.db(), "UPDATE queen.log_segments SET blob = '\\x00'::bytea WHERE partition_id = '"
        + Wire.partitionId(big, "Default") + "' AND base_offset = 30");
    Reply rb = pop(node, big, "batch=100");
    assertThat(rb.status()).as("large pop with one corrupt blob: %s", rb.body()).isEqualTo(500);
    assertThat(rb.json()).isEqualTo(io.queenvertx.testing.Wire.error(500, "pop failed"));
  }

  @Test
  void aPopCommitsWithoutWaitingForTheWalFlushAndNothingElseDoes() {
    String q = Wire.queue("pop-async");
    pushQueued(node, q, null, n(1), "pa-1");
    // The broker's database commits synchronously (the test database's default is off, so the session says on).
    // Inside the pop's transaction synchronous_commit is off; on the same connection afterwards it is on again.
    var pop = TestDatabase.inTransaction(Wire.db(), "SET synchronous_commit = on", List.of(
        "SELECT count(*) FROM queen.log_pop(NULL, '" + q + "', NULL, NULL, 10, 1, 0, 'w-async', false, 'all', NULL)",
        "SHOW synchronous_commit"), "SHOW synchronous_commit");
    assertThat(pop).containsExactly("1", "off", "on");
    // a push keeps the synchronous commit its "queued" promises
    var push = TestDatabase.inTransaction(Wire.db(), "SET synchronous_commit = on", List.of(
        "SELECT count(*) FROM queen.log_push_multi(ARRAY[NULL]::uuid[], ARRAY['" + q + "'], ARRAY['Default'], "
            + "ARRAY[1], ARRAY['\\x0000000000000000000000000000000f'::bytea], ARRAY['\\x00'::bytea], "
            + "NULL, NULL, NULL, NULL)",
        "SHOW synchronous_commit"), "SHOW synchronous_commit");
    assertThat(push).containsExactly("1", "on", "on");
  }

  private static void corrupt(String pid) {
    TestDatabase.execute(Wire.db(), "UPDATE queen.log_segments SET blob = '\\x00'::bytea WHERE partition_id = '" + pid + "'");
  }

  private static long count(String sql) {
    return TestDatabase.queryLong(Wire.db(), sql);
  }

  private static JsonObject popPath(String path) {
    Reply r = node.get(path);
    assertThat(r.status()).as("%s answered %s", path, r.body()).isEqualTo(200);
    JsonObject j = r.json();
    assertThat(j.getJsonArray("messages")).isNotEmpty();
    return j;
  }

  private static JsonObject n(int n) {
    return new JsonObject().put("n", n);
  }
}
