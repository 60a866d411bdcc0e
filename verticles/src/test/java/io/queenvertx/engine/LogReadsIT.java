package io.queenvertx.engine;

import static io.queenvertx.testing.Wire.item;
import static io.queenvertx.testing.Wire.pop;
import static io.queenvertx.testing.Wire.push;
import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.TestNode.Reply;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The reads of the 2.x clients and dashboards (queen2-contract.md §7): partitions, sizes, changed, offsets, positions. */
class LogReadsIT {
  @NodeFixture
  static TestNode node;

  /** A queue with 3 messages in p1 (two pushes) and 1 in p2. */
  private static String fixture(String prefix) {
    String q = Wire.queue(prefix);
    assertThat(push(node, item(q, "p1", 1, "a1"), item(q, "p1", 2, "a2")).status()).isEqualTo(201);
    assertThat(push(node, item(q, "p1", 3, "a3"), item(q, "p2", 4, "b1")).status()).isEqualTo(201);
    return q;
  }

  private static JsonObject ok(Reply r) {
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    return r.json();
  }

  private static void refused(Reply r, String field) {
    assertThat(r.status()).as(r.body()).isEqualTo(400);
    assertThat(r.body()).contains(field);
  }

  @Test
  void partitionsAreListedMostPendingFirstWithProcessingAndLag() {
    String q = fixture("reads-parts");
    // no group has met the queue: no cursor, no lag
    assertThat(ok(node.get("/api/v1/resources/partitions?queue=" + q)).getJsonArray("partitions"))
        .allSatisfy(o -> assertThat(((JsonObject) o).getValue("lagSeconds")).isNull());
    JsonObject p = ok(pop(node, q, "batch=2"));                 // queue mode: 2 of p1's 3 under a lease
    assertThat(p.getString("partition")).isIn("p1", "p2");
    JsonArray parts = ok(node.get("/api/v1/resources/partitions?queue=" + q)).getJsonArray("partitions");
    assertThat(parts).hasSize(2);
    JsonObject first = parts.getJsonObject(0);
    JsonObject leased = "p1".equals(p.getString("partition")) ? first : parts.getJsonObject(1);
    assertThat(first.getLong("pending")).isGreaterThanOrEqualTo(parts.getJsonObject(1).getLong("pending"));
    assertThat(leased.getString("queue")).isEqualTo(q);
    assertThat(leased.getString("partitionId")).isEqualTo(Wire.partitionId(q, p.getString("partition")));
    assertThat(leased.getLong("processing")).isEqualTo(Math.min(2, Wire.messages(p).size()));
    // the pop registered the queue-mode group on every partition: its cursors are behind the oldest messages
    assertThat(parts).allSatisfy(o -> assertThat(((JsonObject) o).getValue("lagSeconds")).isNotNull());
    assertThat(ok(node.get("/api/v1/resources/partitions?queue=" + q + "&limit=1")).getJsonArray("partitions"))
        .hasSize(1);
    refused(node.get("/api/v1/resources/partitions?queue=" + q + "&limit=x"), "limit");
    assertThat(node.get("/api/v1/resources/partitions?queue=" + Wire.queue("nope")).status()).isEqualTo(404);
  }

  @Test
  void sizesSumTheQueue() {
    String q = fixture("reads-sizes");
    JsonObject s = ok(node.get("/api/v1/resources/queues/" + q + "/sizes"));
    assertThat(s.getString("queue")).isEqualTo(q);
    assertThat(s.getLong("partitions")).isEqualTo(2);
    assertThat(s.getLong("messages")).isEqualTo(4);
    assertThat(s.getLong("bytes")).isPositive();
    assertThat(s.getString("oldestAt")).isNotNull().isLessThanOrEqualTo(s.getString("newestAt"));
    Reply missing = node.get("/api/v1/resources/queues/" + Wire.queue("nope") + "/sizes");
    assertThat(missing.status()).isEqualTo(404);
    assertThat(missing.json().getString("error")).isEqualTo("Queue not found");
  }

  @Test
  void changedPartitionsArePagedByAnOpaqueCursor() {
    String q = fixture("reads-changed");
    JsonObject all = ok(node.post("/api/v1/partitions/changed", new JsonObject().put("entries",
        new JsonArray().add(new JsonObject().put("queue", q)).add(new JsonObject().put("queue", Wire.queue("no"))))));
    assertThat(all.getString("safeTime")).matches("\\d{4}-\\d\\d-\\d\\dT.*Z");
    assertThat(all.getBoolean("safeTimeDegraded")).isNotNull();
    JsonObject e0 = all.getJsonArray("entries").getJsonObject(0);
    assertThat(e0.getJsonArray("partitions")).extracting(o -> ((JsonObject) o).getString("name"))
        .containsExactlyInAnyOrder("p1", "p2");
    JsonObject p1 = Wire.list(e0.getJsonArray("partitions")).stream()
        .filter(o -> o.getString("name").equals("p1")).findFirst().orElseThrow();
    assertThat(p1.getLong("lastOffset")).isEqualTo(2);
    assertThat(p1.getLong("logStart")).isZero();
    assertThat(e0.getValue("next")).isNull();
    assertThat(all.getJsonArray("entries").getJsonObject(1).getString("error")).isEqualTo("UNKNOWN_TOPIC_OR_PARTITION");

    // one at a time: the cursor walks both, then the page comes back empty
    List<String> seen = new java.util.ArrayList<>();
    Object after = null;
    for (int i = 0; i < 3; i++) {
      JsonObject e = new JsonObject().put("queue", q).put("limit", 1).put("after", after);
      JsonObject page = ok(node.post("/api/v1/partitions/changed",
          new JsonObject().put("entries", new JsonArray().add(e)))).getJsonArray("entries").getJsonObject(0);
      for (Object o : page.getJsonArray("partitions")) seen.add(((JsonObject) o).getString("name"));
      after = page.getValue("next");
      if (after == null) break;
    }
    assertThat(seen).containsExactlyInAnyOrder("p1", "p2");
    assertThat(ok(node.post("/api/v1/partitions/changed", new JsonObject().put("entries", new JsonArray().add(
        new JsonObject().put("queue", q).put("since", "2999-01-01T00:00:00Z"))))).getJsonArray("entries")
        .getJsonObject(0).getJsonArray("partitions")).isEmpty();
    JsonObject bad = ok(node.post("/api/v1/partitions/changed", new JsonObject().put("entries", new JsonArray().add(
        new JsonObject().put("queue", q).put("after", "not a cursor")))));
    assertThat(bad.getJsonArray("entries").getJsonObject(0).getString("error")).isEqualTo("BAD_CURSOR");
    refused(node.post("/api/v1/partitions/changed", new JsonObject().put("entries", new JsonArray().add(
        new JsonObject().put("queue", q).put("since", "yesterday")))), "entries[0].since");
    refused(node.post("/api/v1/partitions/changed", new JsonObject()), "entries");
    refused(node.post("/api/v1/partitions/changed", new JsonObject().put("entries", new JsonArray().add(
        new JsonObject()))), "entries[0].queue");
  }

  @Test
  void offsetsOfATimeAndPositionsOfAGroupMoveNoCursor() {
    String q = fixture("reads-offsets");
    String group = "g" + Wire.shortId();
    JsonObject p = ok(node.get("/api/v1/pop/queue/" + q + "/partition/p1?batch=2&consumerGroup=" + group
        + "&subscriptionMode=all"));
    for (JsonObject m : Wire.messages(p)) {
      Wire.ackOne(node, Wire.ack(m.getString("transactionId"), m.getString("partitionId"), null,
          m.getString("leaseId")).put("consumerGroup", group));
    }
    String pid = Wire.partitionId(q, "p1");
    var before = Wire.cursor(pid, group);

    JsonArray offs = ok(node.post("/api/v1/fetch/offsets", new JsonObject().put("entries", new JsonArray()
        .add(new JsonObject().put("queue", q).put("partition", "p1").put("timestamp", 0))
        .add(new JsonObject().put("queue", q).put("partition", "p1").put("timestamp", "2999-01-01T00:00:00Z"))
        .add(new JsonObject().put("queue", q).put("partition", "p9").put("timestamp", 0))))).getJsonArray("entries");
    assertThat(offs.getJsonObject(0).getLong("offset")).isZero();
    assertThat(offs.getJsonObject(0).getLong("highWatermark")).isEqualTo(3);
    assertThat(offs.getJsonObject(0).getLong("logStartOffset")).isZero();
    assertThat(offs.getJsonObject(1).getValue("offset")).isNull();
    assertThat(offs.getJsonObject(2).getString("error")).isEqualTo("UNKNOWN_TOPIC_OR_PARTITION");
    refused(node.post("/api/v1/fetch/offsets", new JsonObject().put("entries", new JsonArray().add(
        new JsonObject().put("queue", q)))), "entries[0].timestamp");

    JsonObject pos = ok(node.post("/api/v1/consumer-groups/positions", new JsonObject().put("consumerGroup", group)
        .put("entries", new JsonArray().add(new JsonObject().put("queue", q).put("partition", "p1"))
            .add(new JsonObject().put("queue", q).put("partition", "p2"))
            .add(new JsonObject().put("queue", q).put("partition", "p9")))));
    assertThat(pos.getString("consumerGroup")).isEqualTo(group);
    assertThat(pos.getJsonArray("entries").getJsonObject(0).getLong("offset")).isEqualTo(2);
    assertThat(pos.getJsonArray("entries").getJsonObject(0).getString("metadata")).isEmpty();
    // p2's cursor was seeded when the group met the queue (subscriptionMode all): it reads from 0; p9 has none
    assertThat(pos.getJsonArray("entries").getJsonObject(1).getLong("offset")).isZero();
    assertThat(pos.getJsonArray("entries").getJsonObject(2).getValue("offset")).isNull();
    JsonArray every = ok(node.post("/api/v1/consumer-groups/positions", new JsonObject().put("consumerGroup", group)))
        .getJsonArray("entries");
    assertThat(every).extracting(o -> ((JsonObject) o).getString("partition")).containsExactly("p1", "p2");
    refused(node.post("/api/v1/consumer-groups/positions", new JsonObject()), "consumerGroup");

    assertThat(Wire.cursor(pid, group)).as("reads move no cursor").isEqualTo(before);
  }

  @Test
  void fetchReadsRecordsByOffsetWithoutMovingACursor() {
    String q = fixture("reads-fetch");
    String group = "g" + Wire.shortId();
    // a group that read nothing yet: its cursor must not move through a fetch
    assertThat(node.get("/api/v1/pop/queue/" + q + "/partition/p2?consumerGroup=" + group
        + "&subscriptionMode=all&commitOnDelivery=true").status()).isEqualTo(200);
    String pid = Wire.partitionId(q, "p1");
    var before = Wire.cursor(pid, group);
    JsonArray got = ok(node.post("/api/v1/fetch", new JsonObject().put("maxWaitMs", 0).put("entries", new JsonArray()
        .add(new JsonObject().put("queue", q).put("partition", "p1").put("offset", 1))
        .add(new JsonObject().put("queue", q).put("partition", "p1").put("offset", 3))
        .add(new JsonObject().put("queue", q).put("partition", "p1").put("offset", 4))
        .add(new JsonObject().put("queue", q).put("partition", "p9").put("offset", 0))))).getJsonArray("entries");
    JsonObject e0 = got.getJsonObject(0);
    assertThat(e0.getLong("highWatermark")).isEqualTo(3);
    assertThat(e0.getLong("logStartOffset")).isZero();
    assertThat(e0.getJsonArray("records")).extracting(o -> ((JsonObject) o).getLong("offset")).containsExactly(1L, 2L);
    assertThat(e0.getJsonArray("records")).extracting(o -> ((JsonObject) o).getString("transactionId"))
        .containsExactly("a2", "a3");
    assertThat(e0.getJsonArray("records").getJsonObject(1).getValue("payload")).isEqualTo(3);
    assertThat(e0.getJsonArray("records").getJsonObject(0).getString("ts")).endsWith("Z");
    assertThat(e0.containsKey("error")).isFalse();
    assertThat(got.getJsonObject(1).getJsonArray("records")).as("offset = highWatermark: valid, empty").isEmpty();
    assertThat(got.getJsonObject(1).containsKey("error")).isFalse();
    assertThat(got.getJsonObject(2).getString("error")).isEqualTo("OFFSET_OUT_OF_RANGE");
    assertThat(got.getJsonObject(3).getString("error")).isEqualTo("UNKNOWN_TOPIC_OR_PARTITION");
    // maxBytes of 1: the first segment is still delivered, and only it (the pushes made two segments)
    JsonArray small = ok(node.post("/api/v1/fetch", new JsonObject().put("entries", new JsonArray().add(
        new JsonObject().put("queue", q).put("partition", "p1").put("offset", 0).put("maxBytes", 1)))))
        .getJsonArray("entries").getJsonObject(0).getJsonArray("records");
    assertThat(small).extracting(o -> ((JsonObject) o).getString("transactionId")).containsExactly("a1", "a2");
    refused(node.post("/api/v1/fetch", new JsonObject().put("entries", new JsonArray().add(
        new JsonObject().put("queue", q).put("offset", -1)))), "entries[0].offset");
    refused(node.post("/api/v1/fetch", new JsonObject().put("maxWaitMs", "soon").put("entries", new JsonArray().add(
        new JsonObject().put("queue", q).put("offset", 0)))), "maxWaitMs");
    assertThat(Wire.cursor(pid, group)).as("a fetch moves no cursor").isEqualTo(before);
  }

  @Test
  void aFetchAtTheHighWatermarkWaitsUpToMaxWaitMsForARecord() throws Exception {
    String q = fixture("reads-fetch-wait");
    var later = java.util.concurrent.CompletableFuture.runAsync(() -> {
      org.awaitility.Awaitility.await().pollDelay(java.time.Duration.ofMillis(300)).until(() -> true);
      assertThat(push(node, item(q, "p1", 9, "late")).status()).isEqualTo(201);
    });
    long t0 = System.nanoTime();
    JsonObject e = ok(node.post("/api/v1/fetch", new JsonObject().put("maxWaitMs", 10_000).put("entries",
        new JsonArray().add(new JsonObject().put("queue", q).put("partition", "p1").put("offset", 3)))))
        .getJsonArray("entries").getJsonObject(0);
    later.get();
    assertThat(e.getJsonArray("records")).extracting(o -> ((JsonObject) o).getString("transactionId"))
        .containsExactly("late");
    assertThat((System.nanoTime() - t0) / 1_000_000).as("answered once the record came").isLessThan(9_000);
    // without maxWaitMs the same empty read answers at once
    assertThat(ok(node.post("/api/v1/fetch", new JsonObject().put("entries", new JsonArray().add(
        new JsonObject().put("queue", q).put("partition", "p1").put("offset", 4))))).getJsonArray("entries")
        .getJsonObject(0).getJsonArray("records")).isEmpty();
  }
}
