package io.queenvertx.engine;

import static io.queenvertx.testing.Wire.item;
import static io.queenvertx.testing.Wire.push;
import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.TestNode.Reply;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A pop stops taking messages once its answer would pass about {@code QUEEN_POP_MAX_BYTES} (issue 34 item 9: a pop's
 * count cap alone still lets 10,000 large messages make a response of gigabytes). The budget is applied where SQL
 * chooses the slices, before the lease or the autoAck commit, so what a pop leaves comes with the next one: nothing is
 * lost, repeated or held under a lease. The node's budget is 20,000 bytes; the messages carry about 1 KB each of
 * incompressible text (the measure is the uncompressed frames).
 */
class PopBytesIT {
  static final int BUDGET = 20_000;
  static final Random RANDOM = new Random(34);

  @NodeFixture(env = {"QUEEN_POP_MAX_BYTES=" + BUDGET})
  static TestNode node;

  static JsonObject payload(int n, int bytes) {
    byte[] b = new byte[bytes * 3 / 4];
    RANDOM.nextBytes(b);
    return new JsonObject().put("n", n).put("r", Base64.getEncoder().encodeToString(b));
  }

  /**
   * Pops (batch 1000, any number of partitions) until the queue is empty, acking the last message of each leased pop
   * (or none with autoAck); every pop's answer stays within the budget plus one message. The transaction ids in
   * delivery order.
   */
  static List<String> drain(String q, boolean autoAck, int messageBytes) {
    List<String> seen = new ArrayList<>();
    int pops = 0;
    while (true) {
      Reply r = Wire.pop(node, q, "batch=1000&partitions=0&autoAck=" + autoAck);
      if (r.status() == 204) break;
      assertThat(r.status()).as(r.body()).isEqualTo(200);
      assertThat(r.body().length()).as("answer of pop %d", pops).isLessThan(BUDGET + messageBytes + 2048);
      List<JsonObject> msgs = Wire.messages(r.json());
      assertThat(msgs).isNotEmpty();
      for (JsonObject m : msgs) seen.add(m.getString("transactionId"));
      if (!autoAck) {
        for (JsonObject m : lastOfEachPartition(msgs)) {
          assertThat(Wire.ackOne(node, Wire.ack(m.getString("transactionId"), m.getString("partitionId"),
              "completed", m.getString("leaseId"))).getBoolean("success")).isTrue();
        }
      }
      pops++;
      assertThat(pops).as("pops to drain").isLessThan(200);
    }
    return seen;
  }

  static List<JsonObject> lastOfEachPartition(List<JsonObject> msgs) {
    List<JsonObject> out = new ArrayList<>();
    for (int i = 0; i < msgs.size(); i++) {
      boolean last = i == msgs.size() - 1
          || !msgs.get(i + 1).getString("partitionId").equals(msgs.get(i).getString("partitionId"));
      if (last) out.add(msgs.get(i));
    }
    return out;
  }

  static List<String> txns(String prefix, int n) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < n; i++) out.add(prefix + i);
    return out;
  }

  @Test
  void oneSegmentIsCutByTheBudgetAndTheRestComesNextWithAutoAck() {
    String q = Wire.queue("pop-bytes-one");
    List<JsonObject> items = new ArrayList<>();
    for (int i = 0; i < 100; i++) items.add(item(q, null, payload(i, 1000), "a" + i));
    assertThat(push(node, items.toArray(JsonObject[]::new)).status()).isEqualTo(201);

    List<JsonObject> first = Wire.messages(Wire.popSome(node, q, "batch=100&autoAck=true"));
    assertThat(first.size()).as("about 20,000 / (1,000 + 256 + framing) messages").isBetween(10, 18);
    List<String> seen = new ArrayList<>();
    for (JsonObject m : first) seen.add(m.getString("transactionId"));
    seen.addAll(drain(q, true, 1000));
    assertThat(seen).as("every message once, in order").isEqualTo(txns("a", 100));
  }

  @Test
  void manySegmentsAreCutByTheBudgetUnderLeases() {
    String q = Wire.queue("pop-bytes-many");
    for (int i = 0; i < 40; i++) Wire.pushQueued(node, q, null, payload(i, 1000), "b" + i);
    assertThat(drain(q, false, 1000)).isEqualTo(txns("b", 40));
  }

  @Test
  void theBudgetIsSharedAcrossPartitions() {
    String q = Wire.queue("pop-bytes-parts");
    List<JsonObject> items = new ArrayList<>();
    for (int p = 0; p < 10; p++) {
      for (int i = 0; i < 5; i++) items.add(item(q, "p" + p, payload(i, 1000), "p" + p + "-" + i));
    }
    assertThat(push(node, items.toArray(JsonObject[]::new)).status()).isEqualTo(201);
    JsonObject first = Wire.popSome(node, q, "batch=1000&partitions=0&autoAck=true");
    assertThat(first.getInteger("partitionsClaimed")).as("stopped claiming once the budget ran out").isLessThan(10);
    List<String> seen = new ArrayList<>();
    for (JsonObject m : Wire.messages(first)) seen.add(m.getString("transactionId"));
    seen.addAll(drain(q, true, 1000));
    assertThat(seen).hasSize(50).doesNotHaveDuplicates();
    for (int p = 0; p < 10; p++) {
      String prefix = "p" + p + "-";
      assertThat(seen.stream().filter(t -> t.startsWith(prefix)).toList()).as("partition %d in order", p)
          .isEqualTo(txns(prefix, 5));
    }
  }

  @Test
  void aMessageLargerThanTheBudgetStillComesAlone() {
    String q = Wire.queue("pop-bytes-big");
    assertThat(push(node, item(q, null, payload(0, 30_000), "big"), item(q, null, payload(1, 100), "small"))
        .status()).isEqualTo(201);
    List<JsonObject> first = Wire.messages(Wire.popSome(node, q, "batch=10&autoAck=true"));
    assertThat(first).extracting(m -> m.getString("transactionId")).containsExactly("big");
    assertThat(Wire.messages(Wire.popSome(node, q, "batch=10&autoAck=true")))
        .extracting(m -> m.getString("transactionId")).containsExactly("small");
  }
}
