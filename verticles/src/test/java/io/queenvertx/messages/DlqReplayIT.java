package io.queenvertx.messages;

import static io.queenvertx.testing.Wire.NONE;
import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.codec.TxnHash;
import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.TestNode.Reply;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpRequest;
import java.sql.Connection;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * POST /api/v1/dlq/:id/replay (seed "POST /api/v1/dlq/:id/replay" and "The verdicts", API.md §5.10, ENGINE.md §7.3):
 * the optional body, destination overrides, the gone and duplicate verdicts, the row lock that serialises two movers,
 * and the landing announcement that wakes a parked long poll.
 *
 * <p>The node's long-poll re-poll interval is pinned at 6 s, so a parked pop that answers within 2 s of a replay was
 * woken by the replay's announcement, not by its own re-poll (ENGINE.md §7.3 "dlq_move_semantics" 1).
 */
class DlqReplayIT {
  static final Set<String> VERDICT_KEYS = MessageRetryIT.VERDICT_KEYS;
  static final String BAD_BODY = "bad body: expected {} or {\"queue\":\"...\",\"partition\":\"...\"}";

  @NodeFixture(env = {"POP_WAIT_INITIAL_INTERVAL_MS=6000", "POP_WAIT_MAX_INTERVAL_MS=6000"})
  static TestNode node;

  static Reply replay(String id, String body) {
    return node.post("/api/v1/dlq/" + id + "/replay", body);
  }

  static Reply replayWithoutBody(String id) {
    return node.send(HttpRequest.newBuilder(URI.create(node.baseUrl() + "/api/v1/dlq/" + id + "/replay"))
        .POST(HttpRequest.BodyPublishers.noBody()), Map.of());
  }

  static JsonObject gone(String id) {
    return new JsonObject().put("success", false).put("result", "gone").put("dlqId", id)
        .put("error", "Message not found").put("message", Wire.GONE_ID_MESSAGE).put("code", "not_found");
  }

  /** A retryLimit-0 queue with one dead-lettered message; returns the row id. */
  static String deadLettered(String q, String partition, Object payload, String txn) {
    String pid = Wire.deadLettered(node, q, partition, payload, txn, null, "boom");
    return (String) Wire.rows("SELECT id::text AS id FROM queen.log_dlq WHERE partition_id = '" + pid
        + "' AND transaction_id = '" + txn + "'").get(0).get("id");
  }

  static JsonObject moved(Reply r) {
    assertThat(r.status()).as("replay answered %s", r.body()).isEqualTo(200);
    JsonObject v = r.json();
    assertThat(v.fieldNames()).as("%s", v.encode()).containsExactlyInAnyOrderElementsOf(VERDICT_KEYS);
    assertThat(v.getString("result")).isEqualTo("moved");
    assertThat(v.getBoolean("dlqRowRemoved")).isTrue();
    return v;
  }

  // ---- the optional body -----------------------------------------------------------------------------------------

  @Test
  void anAbsentEmptyWhitespaceOrEmptyObjectBodyReplaysInPlace() {
    String q = Wire.queue("replay-inplace");
    String pid = null;
    String[] bodies = {null, "", "  \n\t ", "{}"};
    for (int i = 0; i < bodies.length; i++) {
      String id = deadLettered(q, "eu-1", new JsonObject().put("i", i), "ip-" + i);
      pid = Wire.partitionId(q, "eu-1");
      long expected = Wire.count("SELECT last_offset FROM queen.log_partitions WHERE id = '" + pid + "'") + 1;
      Reply r = bodies[i] == null ? replayWithoutBody(id) : replay(id, bodies[i]);
      JsonObject v = moved(r);
      assertThat(v.getString("queue")).as("body %s", bodies[i]).isEqualTo(q);
      assertThat(v.getString("partition")).as("body %s", bodies[i]).isEqualTo("eu-1");
      assertThat(v.getString("dlqId")).isEqualTo(id);
      assertThat(v.getString("consumerGroup")).isEqualTo(Wire.QUEUE_MODE);
      assertThat(v.getString("originalTransactionId")).isEqualTo("ip-" + i);
      JsonObject as = v.getJsonObject("replayedAs");
      assertThat(as.getString("transaction_id")).isEqualTo("dlq:" + id);
      assertThat(as.getString("queueName")).isEqualTo(q);
      assertThat(as.getLong("offset")).isEqualTo(expected);
      assertThat(Wire.dlqRowExists(id)).isFalse();
      // the replayed frame is the next thing queue mode pops
      JsonObject m = Wire.popSome(node, NONE, q, "eu-1", null).getJsonArray("messages").getJsonObject(0);
      assertThat(m.getString("transactionId")).isEqualTo("dlq:" + id);
      assertThat(m.getValue("data")).isEqualTo(new JsonObject().put("i", i));
      Wire.ack(node, NONE, new JsonObject().put("transactionId", "dlq:" + id).put("partitionId", pid)
          .put("leaseId", m.getString("leaseId")).put("status", "completed"));
    }
  }

  @Test
  void aQueueOverrideMovesTheMessageToAnotherQueueKeepingThePartitionNameAndCreatesIt() {
    String q = Wire.queue("replay-src");
    String dest = Wire.queue("replay-dest");
    JsonObject payload = new JsonObject().put("amount", 41);
    String id = deadLettered(q, "eu-1", payload, "ov-1");
    String srcPid = Wire.partitionId(q, "eu-1");
    long srcFrames = Wire.frames(srcPid);
    assertThat(Wire.count("SELECT count(*) FROM queen.queues WHERE name = '" + dest + "'")).isZero();

    JsonObject v = moved(replay(id, new JsonObject().put("queue", dest).encode()));
    assertThat(v.getString("queue")).isEqualTo(dest);
    assertThat(v.getString("partition")).as("the omitted half keeps the source row's value").isEqualTo("eu-1");
    assertThat(v.getJsonObject("replayedAs").getString("queueName")).isEqualTo(dest);
    assertThat(v.getJsonObject("replayedAs").getLong("offset")).as("first frame of a new partition").isZero();
    assertThat(Wire.partitionId(dest, "eu-1")).as("destination queue and partition were created").isNotNull();
    assertThat(Wire.frames(srcPid)).as("nothing lands in the source").isEqualTo(srcFrames);

    JsonObject m = Wire.popSome(node, NONE, dest, "eu-1", null).getJsonArray("messages").getJsonObject(0);
    assertThat(m.getString("transactionId")).isEqualTo("dlq:" + id);
    assertThat(m.getValue("data")).isEqualTo(payload);
    assertThat(replay(id, "{}").json()).as("a second replay of the id").isEqualTo(gone(id));
  }

  @Test
  void overrideNamesAreTrimmed() {
    String q = Wire.queue("replay-trim");
    String dest = Wire.queue("replay-trim-dest");
    String id = deadLettered(q, null, 1, "tr-1");
    JsonObject v = moved(replay(id, new JsonObject().put("queue", "  " + dest + "\t").put("partition", " eu-2 ")
        .encode()));
    assertThat(v.getString("queue")).isEqualTo(dest);
    assertThat(v.getString("partition")).isEqualTo("eu-2");
    assertThat(Wire.partitionId(dest, "eu-2")).isNotNull();
    assertThat(Wire.count("SELECT count(*) FROM queen.queues WHERE name LIKE '% " + dest + "%' OR name LIKE '%"
        + dest + "\t%'")).as("no padded queue name was provisioned").isZero();
    assertThat(Wire.count("SELECT count(*) FROM queen.log_partitions WHERE name = ' eu-2 '")).isZero();
  }

  @Test
  void aBlankOverrideIs400AndTheRowStays() {
    String q = Wire.queue("replay-blank");
    String id = deadLettered(q, null, 1, "bl-1");
    for (String body : new String[] {"{\"queue\":\"   \"}", "{\"queue\":\"\"}"}) {
      Reply r = replay(id, body);
      assertThat(r.status()).as("%s answered %s", body, r.body()).isEqualTo(400);
      JsonObject j = r.json();
      assertThat(j.fieldNames()).containsExactlyInAnyOrder("success", "error", "message", "code");
      assertThat(j.getBoolean("success")).isFalse();
      assertThat(j.getString("error")).isEqualTo("queue override must be a non-empty name");
      assertThat(j.getString("message")).isNotBlank();
    }
    for (String body : new String[] {"{\"partition\":\" \"}", "{\"queue\":\"" + q + "\",\"partition\":\"\"}"}) {
      Reply r = replay(id, body);
      assertThat(r.status()).as("%s answered %s", body, r.body()).isEqualTo(400);
      assertThat(r.json().getString("error")).isEqualTo("partition override must be a non-empty name");
      assertThat(r.json().getBoolean("success")).isFalse();
    }
    assertThat(Wire.dlqRowExists(id)).isTrue();
    moved(replay(id, "{}"));
  }

  @Test
  void aBodyThatIsNotAnObjectIs400AndTheRowStays() {
    String q = Wire.queue("replay-nonobject");
    String id = deadLettered(q, null, 1, "no-1");
    for (String body : new String[] {"[1,2]", "\"orders\"", "42", "not json", "{\"queue\":"}) {
      Reply r = replay(id, body);
      assertThat(r.status()).as("%s answered %s", body, r.body()).isEqualTo(400);
      assertThat(r.json().getBoolean("success")).isFalse();
      assertThat(r.json().getString("error")).as("body %s", body).isEqualTo(BAD_BODY);
      assertThat(r.json().getString("message")).isNotBlank();
    }
    assertThat(Wire.dlqRowExists(id)).isTrue();
  }

  // ---- verdicts --------------------------------------------------------------------------------------------------

  @Test
  void aMalformedOrUnknownIdIs404GoneNot500() {
    for (String id : new String[] {"not-a-uuid", "1234", UUID.randomUUID().toString()}) {
      Reply r = replay(id, "");
      assertThat(r.status()).as("replay of %s answered %s", id, r.body()).isEqualTo(404);
      assertThat(r.json()).isEqualTo(gone(id));
    }
  }

  @Test
  void aSecondReplayOfTheSameIdIs404GoneAndLandsNoSecondFrame() {
    String q = Wire.queue("replay-twice");
    String id = deadLettered(q, null, 1, "tw-1");
    String pid = Wire.partitionId(q, "Default");
    moved(replay(id, ""));
    long frames = Wire.frames(pid);
    Reply again = replay(id, "");
    assertThat(again.status()).isEqualTo(404);
    assertThat(again.json()).isEqualTo(gone(id));
    assertThat(Wire.frames(pid)).isEqualTo(frames);
  }

  @Test
  void replayingOneGroupsRowByIdKeepsTheOtherGroupsRow() {
    String q = Wire.queue("replay-one-row");
    Wire.retryLimitZero(node, NONE, q);
    Wire.pushOne(node, q, null, 1, "two-groups");
    Wire.failUnder(node, NONE, q, null, "two-groups", "ga", "boom");
    Wire.failUnder(node, NONE, q, null, "two-groups", "gb", "boom");
    String pid = Wire.partitionId(q, "Default");
    var rows = Wire.dlqRows(pid);
    String older = rows.stream().filter(x -> "ga".equals(x.get("consumer_group"))).findFirst().orElseThrow()
        .get("id").toString();
    String newer = rows.stream().filter(x -> "gb".equals(x.get("consumer_group"))).findFirst().orElseThrow()
        .get("id").toString();
    JsonObject v = moved(replay(older, "{}"));
    assertThat(v.getString("consumerGroup")).as("the verdict names the moved group").isEqualTo("ga");
    assertThat(Wire.dlqRowExists(older)).isFalse();
    assertThat(Wire.dlqRowExists(newer)).isTrue();
  }

  @Test
  void aReplayWhoseTransactionIdIsAlreadyInTheDedupWindowIsADuplicateAndKeepsTheRow() {
    String q = Wire.queue("replay-dup");
    String id = deadLettered(q, null, new JsonObject().put("real", true), "dp-1");
    String pid = Wire.partitionId(q, "Default");
    // a decoy under the derivable replay id lands first
    Wire.pushOne(node, q, null, new JsonObject().put("decoy", true), "dlq:" + id);
    long decoyOffset = Wire.count("SELECT last_offset FROM queen.log_partitions WHERE id = '" + pid + "'");
    long frames = Wire.frames(pid);

    Reply r = replay(id, "{}");
    assertThat(r.status()).as("replay answered %s", r.body()).isEqualTo(200);
    JsonObject v = r.json();
    assertThat(v.fieldNames()).containsExactlyInAnyOrderElementsOf(VERDICT_KEYS);
    assertThat(v.getBoolean("success")).isTrue();
    assertThat(v.getString("result")).isEqualTo("duplicate");
    assertThat(v.getBoolean("dlqRowRemoved")).isFalse();
    assertThat(v.getString("dlqId")).isEqualTo(id);
    assertThat(v.getString("originalTransactionId")).isEqualTo("dp-1");
    JsonObject as = v.getJsonObject("replayedAs");
    assertThat(as.getString("status")).isEqualTo("duplicate");
    assertThat(as.getString("message_id")).isEqualTo(Wire.ZERO_UUID);
    assertThat(as.getString("transaction_id")).isEqualTo("dlq:" + id);
    assertThat(as.getLong("offset")).as("where the existing frame is").isEqualTo(decoyOffset);
    assertThat(Wire.dlqRowExists(id)).as("the row is kept on a duplicate").isTrue();
    assertThat(Wire.frames(pid)).as("the push wrote nothing").isEqualTo(frames);
  }

  @Test
  void whilePushMaintenanceIsOnBothReplayRoutesAnswer503AndTheRowStaysForALaterReplay() {
    String q = Wire.queue("replay-maint");
    String id = deadLettered(q, null, new JsonObject().put("m", 1), "mt-1");
    String pid = Wire.partitionId(q, "Default");
    long frames = Wire.frames(pid);
    Reply on = node.post("/api/v1/system/maintenance", "{\"enabled\":true}");
    assertThat(on.status()).as("maintenance on answered %s", on.body()).isEqualTo(200);
    try {
      Reply byId = replay(id, "{}");
      Reply byAddress = node.post("/api/v1/messages/" + pid + "/mt-1/retry", "{}");
      for (Reply r : new Reply[] {byId, byAddress}) {
        assertThat(r.status()).as("replay under maintenance answered %s", r.body()).isEqualTo(503);
        JsonObject j = r.json();
        assertThat(j.fieldNames()).containsExactlyInAnyOrder("success", "result", "error", "dlqRowRemoved", "message",
            "code");
        assertThat(j.getBoolean("success")).isFalse();
        assertThat(j.getString("result")).isEqualTo("maintenance");
        assertThat(j.getString("error")).isEqualTo("push maintenance is on");
        assertThat(j.getBoolean("dlqRowRemoved")).isFalse();
        assertThat(j.getString("message")).startsWith("Push maintenance is on, so nothing may be written to the log.");
      }
      assertThat(byId.body()).as("the two routes answer the same 503").isEqualTo(byAddress.body());
      assertThat(Wire.dlqRowExists(id)).as("a move is refused, not spooled").isTrue();
      assertThat(Wire.frames(pid)).isEqualTo(frames);
    } finally {
      assertThat(node.post("/api/v1/system/maintenance", "{\"enabled\":false}").status()).isEqualTo(200);
    }
    moved(replay(id, "{}"));
  }

  // ---- concurrency and wake-ups ----------------------------------------------------------------------------------

  @Test
  void twoConcurrentReplaysOfOneRowProduceExactlyOneMessageAndOneGone() throws Exception {
    String q = Wire.queue("replay-race");
    String id = deadLettered(q, null, new JsonObject().put("race", 1), "rc-1");
    String pid = Wire.partitionId(q, "Default");
    long frames = Wire.frames(pid);
    try (Connection c = Wire.connect()) {
      byte[] blob;
      try (var st = c.prepareStatement("SELECT blob FROM queen.log_segments WHERE partition_id = ?::uuid LIMIT 1")) {
        st.setString(1, pid);
        try (var rs = st.executeQuery()) {
          assertThat(rs.next()).isTrue();
          blob = rs.getBytes(1);
        }
      }
      c.setAutoCommit(false);
      String verdict;
      try (var st = c.prepareStatement("SELECT queen.log_dlq_move(?::uuid, ?::uuid, ?, ?, ?, ?)::text")) {
        st.setString(1, Wire.DEFAULT_TENANT);
        st.setString(2, id);
        st.setString(3, q);
        st.setString(4, "Default");
        st.setBytes(5, TxnHash.of("dlq:" + id));
        st.setBytes(6, blob);
        try (var rs = st.executeQuery()) {
          assertThat(rs.next()).isTrue();
          verdict = rs.getString(1);
        }
      }
      assertThat(new JsonObject(verdict).getString("result")).as("the first mover: %s", verdict).isEqualTo("moved");

      CompletableFuture<Reply> second = CompletableFuture.supplyAsync(() -> replay(id, ""));
      // the node's move is seen waiting on a lock in PostgreSQL (the row this transaction holds)
      org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
          .pollInterval(java.time.Duration.ofMillis(50))
          .until(() -> second.isDone() || Wire.count("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = "
              + "'Lock' AND query LIKE '%log_dlq_move%' AND pid <> pg_backend_pid()") > 0);
      assertThat(second.isDone()).as("the second mover waits on the row lock; it answered early: %s",
          second.isDone() ? second.join().body() : "").isFalse();
      c.commit();
      Reply r = second.get(20, TimeUnit.SECONDS);
      assertThat(r.status()).as("the loser answered %s", r.body()).isEqualTo(404);
      assertThat(r.json()).isEqualTo(gone(id));
    }
    assertThat(Wire.frames(pid)).as("exactly one new frame landed").isEqualTo(frames + 1);
    assertThat(Wire.dlqRowExists(id)).isFalse();
  }

  @Test
  void aReplayWakesALongPollParkedBeforeIt() throws Exception {
    String q = Wire.queue("replay-wake");
    JsonObject payload = new JsonObject().put("wake", "up");
    String id = deadLettered(q, null, payload, "wk-1");
    record Timed(Reply reply, long at) {}
    double parkedBefore = node.metric("queen_parked_long_polls");
    long parkedAt = System.nanoTime();
    CompletableFuture<Timed> pop = CompletableFuture.supplyAsync(() -> {
      Reply r = node.get("/api/v1/pop/queue/" + q + "?batch=10&wait=true&timeout=10000");
      return new Timed(r, System.nanoTime());
    });
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
        .pollInterval(java.time.Duration.ofMillis(20))
        .until(() -> pop.isDone() || node.metric("queen_parked_long_polls") > parkedBefore);
    assertThat(pop.isDone()).as("the pop is parked: nothing is poppable yet").isFalse();
    moved(replay(id, ""));
    long replayed = System.nanoTime();
    Timed t = pop.get(20, TimeUnit.SECONDS);
    assertThat(t.reply().status()).as("the parked pop answered %s", t.reply().body()).isEqualTo(200);
    JsonObject m = t.reply().json().getJsonArray("messages").getJsonObject(0);
    assertThat(m.getString("transactionId")).isEqualTo("dlq:" + id);
    assertThat(m.getValue("data")).isEqualTo(payload);
    long afterReplayMs = TimeUnit.NANOSECONDS.toMillis(t.at() - replayed);
    assertThat(afterReplayMs).as("delivered %d ms after the replay (re-poll floor 6000 ms, parked %d ms before)",
        afterReplayMs, TimeUnit.NANOSECONDS.toMillis(replayed - parkedAt)).isLessThan(2000);
  }
}
