package io.queenvertx.engine;

import static io.queenvertx.testing.Wire.ack;
import static io.queenvertx.testing.Wire.item;
import static io.queenvertx.testing.Wire.popSome;
import static io.queenvertx.testing.Wire.pushQueued;
import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.TestNode.Reply;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * {@code POST /transaction} writes through the same packer and {@code log_push_multi} call as {@code POST /push}, and
 * acks through the same grouping and {@code log_ack} call as {@code POST /ack} (issue 35 item 3): each verdict the two
 * paths can give, queued, duplicate, dead-lettered and stale lease, driven through both routes, comes out the same;
 * and {@link #bothRoutesShareOnePackerAndOneAckCall} reads in the sources that the two routes reach SQL through one
 * class each: the packer {@code log.PackedSegment} and the ack call {@code consumer.AckGroups} (over
 * {@code db.AckProcedures}).
 */
class PushAckPathsIT {
  @NodeFixture
  static TestNode node;

  @Test
  void aQueuedPushLandsTheSameThroughBothRoutes() {
    String q = Wire.queue("paths-queued");
    JsonObject viaPush = pushQueued(node, q, "p", new JsonObject().put("via", "push"), "a1");
    JsonObject tx = transaction(new JsonArray().add(pushOp(q, "p", "a2", new JsonObject().put("via", "tx"))), null);
    assertThat(tx.getBoolean("success")).as(tx.encode()).isTrue();
    JsonObject viaTx = tx.getJsonArray("results").getJsonObject(0);
    assertThat(viaTx.getString("messageId")).matches(PushIT.UUID_RE);
    // one segment each, in one partition, at consecutive offsets, both readable by a pop in push order
    String pid = Wire.partitionId(q, "p");
    assertThat(Wire.segments(pid)).isEqualTo(2);
    JsonObject pop = popSome(node, q, "batch=10");
    assertThat(Wire.messages(pop)).extracting(m -> m.getString("transactionId")).containsExactly("a1", "a2");
    assertThat(Wire.messages(pop)).extracting(m -> m.getString("id"))
        .containsExactly(viaPush.getString("message_id"), viaTx.getString("messageId"));
  }

  @Test
  void aDuplicateIsRecognisedTheSameThroughBothRoutes() {
    String q = Wire.queue("paths-dup");
    Wire.configure(node, Wire.NONE, q, new JsonObject().put("dedupWindowSeconds", 3600));
    pushQueued(node, q, "p", 1, "d1");
    Reply again = Wire.push(node, item(q, "p", 2, "d1"));
    assertThat(again.array().getJsonObject(0).getString("status")).as(again.body()).isEqualTo("duplicate");
    JsonObject tx = transaction(new JsonArray().add(pushOp(q, "p", "d1", 3)), null);
    assertThat(tx.getBoolean("success")).as(tx.encode()).isFalse();
    assertThat(tx.getString("reason")).isEqualTo("duplicate");
    assertThat(Wire.frames(Wire.partitionId(q, "p"))).as("neither duplicate was written").isEqualTo(1);
  }

  @Test
  void aFailedAckDeadLettersTheSameThroughBothRoutes() {
    String q = Wire.queue("paths-dlq");
    Wire.retryLimitZero(node, Wire.NONE, q);
    pushQueued(node, q, "p1", 1, "x1");
    pushQueued(node, q, "p2", 2, "x2");
    JsonObject first = popSome(node, q, "batch=1");
    JsonObject m1 = Wire.messages(first).get(0);
    JsonObject viaAck = ack(node, Wire.NONE, Wire.ack(m1.getString("transactionId"), m1.getString("partitionId"),
        "failed", first.getString("leaseId")).put("error", "boom"));
    JsonObject second = popSome(node, q, "batch=1");
    JsonObject m2 = Wire.messages(second).get(0);
    JsonObject tx = transaction(new JsonArray().add(ackOp(m2, "failed").put("error", "boom")),
        second.getString("leaseId"));
    assertThat(tx.getBoolean("success")).as(tx.encode()).isTrue();
    JsonObject viaTx = tx.getJsonArray("results").getJsonObject(0);
    assertThat(viaAck.getBoolean("success")).as(viaAck.encode()).isTrue();
    assertThat(viaAck.getBoolean("dlq")).isTrue();
    assertThat(viaTx.getBoolean("dlq")).as(viaTx.encode()).isTrue();
    for (JsonObject m : new JsonObject[] {m1, m2}) {
      String pid = m.getString("partitionId");
      assertThat(Wire.dlqRows(pid)).extracting(r -> r.get("transaction_id")).containsExactly(m.getString("transactionId"));
      assertThat(Wire.dlqRows(pid)).extracting(r -> r.get("error")).containsExactly("boom");
      assertThat(Wire.cursor(pid, Wire.QUEUE_MODE).get("committed")).isEqualTo(0L);
    }
  }

  @Test
  void anAckUnderAStaleLeaseIsRefusedTheSameThroughBothRoutes() {
    String q = Wire.queue("paths-lease");
    pushQueued(node, q, "p1", 1, "s1");
    pushQueued(node, q, "p2", 2, "s2");
    JsonObject first = popSome(node, q, "batch=1");
    JsonObject m1 = Wire.messages(first).get(0);
    String stale = java.util.UUID.randomUUID().toString();
    JsonObject viaAck = ack(node, Wire.NONE,
        Wire.ack(m1.getString("transactionId"), m1.getString("partitionId"), "completed", stale));
    JsonObject second = popSome(node, q, "batch=1");
    JsonObject m2 = Wire.messages(second).get(0);
    JsonObject tx = transaction(new JsonArray().add(ackOp(m2, "completed")), stale);
    assertThat(viaAck.getBoolean("success")).as(viaAck.encode()).isFalse();
    assertThat(tx.getBoolean("success")).as(tx.encode()).isFalse();
    assertThat(tx.getString("reason")).isEqualTo("ack_rejected");
    // the same log_ack refusal, word for word
    assertThat(tx.getString("error")).isEqualTo("QTXN ack failed: " + viaAck.getString("error"));
    for (JsonObject m : new JsonObject[] {m1, m2}) {
      assertThat(Wire.cursor(m.getString("partitionId"), Wire.QUEUE_MODE).get("committed")).isEqualTo(-1L);
    }
  }

  @Test
  void bothRoutesShareOnePackerAndOneAckCall() throws IOException {
    String writer = code("log/LogWriterVerticle");
    String transactions = code("log/Transactions");
    String acks = code("consumer/Acks");
    // the packer: both build PackedSegments, compress them and write them with one log_push_multi call
    for (String route : new String[] {writer, transactions}) {
      assertThat(route).contains("PackedSegment.compress(bundle, ").contains("pushMulti(PackedSegment.segments(bundle))");
    }
    assertThat(callers("Segment.pack(", "log")).as("the one packer of the log writer").containsExactly("log/PackedSegment");
    assertThat(callers("queen.log_push_multi(", null)).containsExactly("db/PushProcedures");
    // the ack call: both group with AckGroups, build its AckCall, read its Verdict; one class calls log_ack
    for (String route : new String[] {acks, transactions}) {
      assertThat(route).contains("AckGroups.of(").contains("g.call(tenant, ").contains("AckGroups.Verdict.of(");
    }
    assertThat(transactions).contains("t.acks().ack(call)");
    assertThat(code("db/AckFusion")).contains("new AckProcedures(").contains("procedures.ack(")
        .contains("procedures.ackMany(");
    assertThat(callers("queen.log_ack(", null)).containsExactly("db/AckProcedures");
    assertThat(callers("AckCall.of(", null)).as("an AckCall is built by AckGroups only").containsExactly(
        "consumer/AckGroups");
    assertThat(callers("new AckCall(", null)).containsExactly("db/AckCall");
  }

  private static final Path MAIN = Path.of("src", "main", "java", "io", "queenvertx");

  /** A main class's source without its comments ({@code log/Transactions}). */
  private static String code(String cls) throws IOException {
    return Files.readString(MAIN.resolve(cls + ".java")).replaceAll("(?s)/\\*.*?\\*/", "")
        .replaceAll("(?m)//.*$", "");
  }

  /** The main classes (below {@code pkg}, or all) whose code holds {@code text}. */
  private static List<String> callers(String text, String pkg) throws IOException {
    Path root = pkg == null ? MAIN : MAIN.resolve(pkg);
    try (Stream<Path> s = Files.walk(root)) {
      List<String> out = new ArrayList<>();
      for (Path f : s.filter(p -> p.toString().endsWith(".java")).sorted().toList()) {
        String cls = MAIN.relativize(f).toString().replace('\\', '/').replaceFirst("\\.java$", "");
        if (code(cls).contains(text)) out.add(cls);
      }
      return out;
    }
  }

  private static JsonObject pushOp(String queue, String partition, String txn, Object payload) {
    return new JsonObject().put("type", "push").put("items", new JsonArray().add(item(queue, partition, payload, txn)));
  }

  private static JsonObject ackOp(JsonObject m, String status) {
    return new JsonObject().put("type", "ack").put("transactionId", m.getString("transactionId"))
        .put("partitionId", m.getString("partitionId")).put("status", status);
  }

  private static JsonObject transaction(JsonArray ops, String lease) {
    JsonObject body = new JsonObject().put("operations", ops);
    if (lease != null) body.put("requiredLeases", new JsonArray().add(lease));
    Reply r = node.post("/api/v1/transaction", body);
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    return r.json();
  }
}
