package io.queenvertx.groups;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.TestNode.Reply;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Seeking a consumer group (API.md §5.11) over real HTTP and PostgreSQL: back to a timestamp redelivers exactly the
 * messages at or after it, in order; toEnd skips everything stored; the partition route treats an empty body as
 * toEnd; a live lease is released; a parked long poll of the group is woken; another tenant's queue is not found.
 * The node re-polls parked pops only every {@link #REPOLL_MS} ms, so a prompt answer after a seek is the wake.
 */
class ConsumerGroupSeekIT {
  static final long REPOLL_MS = 20_000;
  static final String HEADER = "x-queen-tenant";

  @NodeFixture(env = {"QUEEN_TENANCY_HEADER=true", "QUEEN_KV_TRUSTED_PROXY=true",
      "POP_WAIT_INITIAL_INTERVAL_MS=" + REPOLL_MS, "POP_WAIT_MAX_INTERVAL_MS=" + REPOLL_MS})
  static TestNode node;

  static final ExecutorService exec = Executors.newFixedThreadPool(2);

  @AfterAll
  static void stop() {
    exec.shutdownNow();
  }

  /** Pushes one message per request (so each is its own segment with its own createdAt) to partition p. */
  static void pushEach(String q, String partition, String... txns) {
    for (String t : txns) Wire.pushOne(node, q, partition, new JsonObject().put("t", t), t);
  }

  static Reply pop(String q, String partition, String group) {
    return Wire.pop(node, Wire.NONE, q, partition, group, null);
  }

  static List<String> txns(Reply r) {
    assertThat(r.status()).as("pop answered %s", r.body()).isEqualTo(200);
    return Wire.messages(r.json()).stream().map(m -> m.getString("transactionId")).toList();
  }

  /** Acks every message of a pop answer under its lease. */
  static void ackAll(JsonObject pop, String group) {
    ackAll(pop, group, Wire.NONE);
  }

  static void ackAll(JsonObject pop, String group, Map<String, String> h) {
    JsonArray acks = new JsonArray();
    for (JsonObject m : Wire.messages(pop)) {
      acks.add(Wire.ack(m.getString("transactionId"), m.getString("partitionId"), "completed",
          pop.getString("leaseId")));
    }
    Reply r = node.post("/api/v1/ack/batch",
        new JsonObject().put("consumerGroup", group).put("acknowledgments", acks), h);
    assertThat(r.status()).isEqualTo(200);
    for (Object o : r.array()) assertThat(((JsonObject) o).getBoolean("success")).as(r.body()).isTrue();
  }

  /** Pops everything for the group (batch=10) and acks it; returns the transaction ids in delivery order. */
  static List<String> drain(String q, String partition, String group) {
    List<String> seen = new ArrayList<>();
    Reply r;
    while ((r = pop(q, partition, group)).status() == 200) {
      seen.addAll(txns(r));
      ackAll(r.json(), group);
    }
    assertThat(r.status()).isEqualTo(204);
    return seen;
  }

  static Reply seek(String group, String q, Object body, Map<String, String> h) {
    return node.post("/api/v1/consumer-groups/" + group + "/queues/" + q + "/seek", body, h);
  }

  static Reply seek(String group, String q, Object body) {
    return seek(group, q, body, Wire.NONE);
  }

  static JsonObject timestamp(String iso) {
    return new JsonObject().put("timestamp", iso);
  }

  /** createdAt of every message of the group's first delivery, by transaction id. */
  static Map<String, String> createdAt(Reply r) {
    var out = new java.util.HashMap<String, String>();
    for (JsonObject m : Wire.messages(r.json())) out.put(m.getString("transactionId"), m.getString("createdAt"));
    return out;
  }

  @Test
  void seekingBackToATimestampRedeliversExactlyTheMessagesAtOrAfterItInOrder() {
    String q = Wire.queue("seek-ts");
    pushEach(q, "p", "m1", "m2", "m3", "m4");
    Reply first = pop(q, "p", "g");
    assertThat(txns(first)).containsExactly("m1", "m2", "m3", "m4");
    Map<String, String> at = createdAt(first);
    ackAll(first.json(), "g");
    assertThat(pop(q, "p", "g").status()).isEqualTo(204);

    Reply s = seek("g", q, timestamp(at.get("m3")));
    assertThat(s.status()).as(s.body()).isEqualTo(200);
    assertThat(s.json().getBoolean("success")).isTrue();
    assertThat(s.json().getString("consumerGroup")).isEqualTo("g");
    assertThat(s.json().getString("queueName")).isEqualTo(q);
    assertThat(s.json().getInteger("partitionsUpdated")).isEqualTo(1);
    assertThat(s.json().getBoolean("seekToEnd")).isFalse();
    assertThat(drain(q, "p", "g")).as("at the timestamp is included").containsExactly("m3", "m4");

    String justAfterM2 = Instant.parse(at.get("m2")).plusNanos(1000).toString();
    assertThat(seek("g", q, timestamp(justAfterM2)).status()).isEqualTo(200);
    assertThat(drain(q, "p", "g")).as("one microsecond after m2 starts at m3").containsExactly("m3", "m4");

    assertThat(seek("g", q, timestamp("2000-01-01T00:00:00Z")).status()).isEqualTo(200);
    assertThat(drain(q, "p", "g")).containsExactly("m1", "m2", "m3", "m4");

    assertThat(seek("g", q, timestamp(Instant.parse(at.get("m4")).plusSeconds(3600).toString())).status())
        .isEqualTo(200);
    assertThat(pop(q, "p", "g").status()).as("a time after everything stored skips it all").isEqualTo(204);
    assertThat(pop(q, "p", "other").status()).as("another group is untouched").isEqualTo(200);
  }

  @Test
  void aSeekReleasesTheGroupsLiveLeaseSoTheNextPopGetsTheRewoundMessagesAtOnce() {
    String q = Wire.queue("seek-lease");
    pushEach(q, "p", "a1", "a2");
    Reply held = pop(q, "p", "g");
    assertThat(txns(held)).containsExactly("a1", "a2");
    assertThat(pop(q, "p", "g").status()).as("the lease holds the partition").isEqualTo(204);

    String pid = Wire.partitionId(q, "p");
    assertThat(seek("g", q, timestamp(createdAt(held).get("a1"))).status()).isEqualTo(200);
    assertThat(Wire.cursor(pid, "g").get("worker_id")).as("lease released").isNull();
    assertThat(txns(pop(q, "p", "g"))).containsExactly("a1", "a2");
  }

  @Test
  void toEndSkipsEverythingAlreadyStoredOnEveryPartition() {
    String q = Wire.queue("seek-end");
    pushEach(q, "a", "a1", "a2");
    pushEach(q, "b", "b1");
    Reply s = seek("g", q, new JsonObject().put("toEnd", true));
    assertThat(s.status()).as(s.body()).isEqualTo(200);
    assertThat(s.json().getBoolean("seekToEnd")).isTrue();
    assertThat(s.json().getValue("targetTimestamp")).isNull();
    assertThat(s.json().getInteger("partitionsUpdated")).isEqualTo(2);
    assertThat(pop(q, null, "g").status()).isEqualTo(204);

    pushEach(q, "a", "a3");
    assertThat(drain(q, null, "g")).containsExactly("a3");
  }

  @Test
  void thePartitionRouteTakesAnEmptyBodyAsToEndAndTouchesOnlyThatPartition() {
    String q = Wire.queue("seek-part");
    pushEach(q, "a", "a1");
    pushEach(q, "b", "b1");
    assertThat(drain(q, "a", "g")).containsExactly("a1");
    assertThat(drain(q, "b", "g")).containsExactly("b1");

    Reply back = node.post("/api/v1/consumer-groups/g/queues/" + q + "/partitions/a/seek",
        timestamp("2000-01-01T00:00:00Z"));
    assertThat(back.status()).as(back.body()).isEqualTo(200);
    assertThat(back.json().getString("partitionName")).isEqualTo("a");
    assertThat(back.json().getBoolean("updated")).isTrue();
    assertThat(pop(q, "b", "g").status()).as("partition b keeps its cursor").isEqualTo(204);

    Reply end = node.send(java.net.http.HttpRequest.newBuilder(
            java.net.URI.create(node.baseUrl() + "/api/v1/consumer-groups/g/queues/" + q + "/partitions/a/seek"))
        .POST(java.net.http.HttpRequest.BodyPublishers.noBody()), Wire.NONE);
    assertThat(end.status()).as(end.body()).isEqualTo(200);
    assertThat(end.json().getBoolean("seekToEnd")).isTrue();
    assertThat(pop(q, "a", "g").status()).as("empty body = toEnd").isEqualTo(204);
  }

  @Test
  void aLongPollParkedForTheGroupIsWokenBySeek() {
    String q = Wire.queue("seek-wake");
    pushEach(q, "p", "w1");
    assertThat(drain(q, "p", "g")).containsExactly("w1");

    double before = node.metric("queen_parked_long_polls");
    CompletableFuture<Reply> parked = CompletableFuture.supplyAsync(() -> node.get(
        Wire.popPath(q, "p", "g", "wait=true&timeout=" + (REPOLL_MS + 10_000))), exec);
    await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
        .until(() -> parked.isDone() || node.metric("queen_parked_long_polls") > before);
    assertThat(parked).as("parked, not answered").isNotDone();

    assertThat(seek("g", q, timestamp("2000-01-01T00:00:00Z")).status()).isEqualTo(200);
    assertThat(parked).as("woken well before the %d ms re-poll", REPOLL_MS).succeedsWithin(Duration.ofSeconds(5));
    assertThat(txns(parked.join())).containsExactly("w1");
  }

  @Test
  void anotherTenantsQueueIsNotFoundAndItsCursorsAreUntouched() {
    var a = Map.of(HEADER, UUID.randomUUID().toString());
    var b = Map.of(HEADER, UUID.randomUUID().toString());
    String q = Wire.queue("seek-ten");
    Wire.pushOne(node, a, q, "p", 1, "t1");
    Reply popped = Wire.pop(node, a, q, "p", "g", null);
    assertThat(popped.status()).isEqualTo(200);
    ackAll(popped.json(), "g", a);

    Reply foreign = seek("g", q, timestamp("2000-01-01T00:00:00Z"), b);
    assertThat(foreign.status()).as(foreign.body()).isEqualTo(404);
    assertThat(foreign.json().getString("error")).isEqualTo("Queue not found or has no partitions");
    assertThat(foreign.json().getBoolean("success")).isFalse();
    Reply foreignPart = node.post("/api/v1/consumer-groups/g/queues/" + q + "/partitions/p/seek",
        new JsonObject().put("toEnd", true), b);
    assertThat(foreignPart.status()).isEqualTo(404);
    assertThat(foreignPart.json().getString("error")).isEqualTo("Partition not found");
    Reply missingPart = node.post("/api/v1/consumer-groups/g/queues/" + q + "/partitions/nope/seek",
        new JsonObject().put("toEnd", true), a);
    assertThat(missingPart.status()).isEqualTo(404);

    Reply del = node.delete("/api/v1/consumer-groups/g/queues/" + q, b);
    assertThat(del.status()).isEqualTo(200);
    assertThat(del.json().getInteger("deletedPartitions")).isZero();
    Reply delAll = node.delete("/api/v1/consumer-groups/g", b);
    assertThat(delAll.json().getInteger("deletedPartitions")).isZero();
    assertThat(Wire.pop(node, a, q, "p", "g", null).status()).as("tenant a's group still sits at the end")
        .isEqualTo(204);
  }

  @Test
  void badSeekBodiesAre400sWithTheContractsMessages() {
    String q = Wire.queue("seek-bad");
    pushEach(q, "p", "x1");
    assertError(seek("g", q, new JsonObject()), "Must specify toEnd=true or a timestamp");
    assertError(seek("g", q, new JsonObject().put("toEnd", false)), "Must specify toEnd=true or a timestamp");
    assertError(seek("g", q, "{not json"), "bad body");
    assertError(seek("g", q, "[1]"), "bad body");
    assertError(seek("g", q, ""), "bad body");
    assertError(node.post("/api/v1/consumer-groups/g/queues/" + q + "/partitions/p/seek", "nope"), "bad body");
    Reply badTime = seek("g", q, timestamp("yesterday"));
    assertThat(badTime.status()).isEqualTo(400);
    assertThat(badTime.json().getString("error")).startsWith("timestamp must be an ISO-8601 date-time");
    Reply badEnd = seek("g", q, new JsonObject().put("toEnd", "yes"));
    assertThat(badEnd.status()).isEqualTo(400);
    assertThat(badEnd.json().getString("error")).isEqualTo("toEnd must be a boolean");
    assertThat(Wire.cursor(Wire.partitionId(q, "p"), "g")).as("no refused seek created a cursor").isNull();
  }

  static void assertError(Reply r, String error) {
    assertThat(r.status()).as(r.body()).isEqualTo(400);
    assertThat(r.json()).isEqualTo(io.queenvertx.testing.Wire.error(400, error));
  }
}
