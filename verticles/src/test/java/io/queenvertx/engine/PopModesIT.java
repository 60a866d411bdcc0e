package io.queenvertx.engine;

import static io.queenvertx.testing.Wire.item;
import static io.queenvertx.testing.Wire.pop;
import static io.queenvertx.testing.Wire.push;
import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.TestNode.Reply;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The 2.x pop modes (queen2-contract.md §6): commitOnDelivery, conflation with its echo, autopilot with its echo. */
class PopModesIT {
  @NodeFixture
  static TestNode node;

  private static void pushTo(String q, String partition, String... txns) {
    JsonObject[] items = new JsonObject[txns.length];
    for (int i = 0; i < txns.length; i++) items[i] = item(q, partition, new JsonObject().put("t", txns[i]), txns[i]);
    assertThat(push(node, items).status()).isEqualTo(201);
  }

  private static List<String> txns(JsonObject pop) {
    return Wire.messages(pop).stream().map(m -> m.getString("transactionId")).toList();
  }

  private static JsonObject ok(Reply r) {
    assertThat(r.status()).as("answered %s", r.body()).isEqualTo(200);
    return r.json();
  }

  @Test
  void commitOnDeliveryMovesTheCursorAtDeliveryWithoutALease() {
    String q = Wire.queue("cod");
    pushTo(q, null, "a", "b", "c");
    JsonObject first = ok(pop(node, q, "batch=2&commitOnDelivery=true"));
    assertThat(txns(first)).containsExactly("a", "b");
    assertThat(first.getString("leaseId")).isEmpty();
    // nothing to ack: the next pop starts after them at once (a leased pop would find the partition held)
    assertThat(txns(ok(pop(node, q, "batch=10&commitOnDelivery=true")))).containsExactly("c");
    assertThat(pop(node, q, "batch=10").status()).isEqualTo(204);
  }

  @Test
  void conflationDeliversTheNewestMessageOfEachPartitionAndItsAckAcknowledgesTheSuperseded() {
    String q = Wire.queue("conf");
    pushTo(q, "k1", "k1-a", "k1-b");
    pushTo(q, "k1", "k1-c");           // a second segment: the newest is in it
    pushTo(q, "k2", "k2-a", "k2-b");
    String group = "g" + Wire.shortId();
    JsonObject p = ok(pop(node, q, "batch=10&consumerGroup=" + group + "&subscriptionMode=all&conflation=true"));
    assertThat(p.getBoolean("conflation")).isTrue();
    assertThat(p.containsKey("conflationConflict")).isFalse();
    assertThat(txns(p)).containsExactlyInAnyOrder("k1-c", "k2-b");
    for (JsonObject m : Wire.messages(p)) {
      JsonObject a = Wire.ackOne(node, Wire.ack(m.getString("transactionId"), m.getString("partitionId"), null,
          m.getString("leaseId")).put("consumerGroup", group));
      assertThat(a.getBoolean("success")).as("ack %s", a).isTrue();
    }
    // the superseded messages are acknowledged with the newest: the cursor is at the partition's last offset
    assertThat(((Number) Wire.cursor(Wire.partitionId(q, "k1"), group).get("committed")).longValue()).isEqualTo(2);
    assertThat(((Number) Wire.cursor(Wire.partitionId(q, "k2"), group).get("committed")).longValue()).isEqualTo(1);
    // and never delivered again: an empty conflating pop is a 200 with the echo, not a 204
    JsonObject empty = ok(pop(node, q, "batch=10&consumerGroup=" + group + "&conflation=true"));
    assertThat(empty.getJsonArray("messages")).isEmpty();
    assertThat(empty.getBoolean("conflation")).isTrue();
    // the same group without the parameter is served by its stored policy, and told so
    pushTo(q, "k1", "k1-d", "k1-e");
    JsonObject undeclared = ok(pop(node, q, "batch=10&consumerGroup=" + group));
    assertThat(txns(undeclared)).containsExactly("k1-e");
    assertThat(undeclared.getBoolean("conflation")).isTrue();
    assertThat(undeclared.getBoolean("conflationConflict")).isTrue();
  }

  @Test
  void aConflatingPopWithAutopilotKeepsTheBatchTheCallerSet() {
    // what Queen's 2.x client sends for queue(q).group(g).conflation().batch(10).pop(): autopilot with its own batch
    String q = Wire.queue("confap");
    pushTo(q, "s1", "s1-a", "s1-b");
    pushTo(q, "s2", "s2-a");
    String group = "g" + Wire.shortId();
    JsonObject p = ok(pop(node, q, "autopilot=true&batch=10&wait=false&consumerGroup=" + group
        + "&subscriptionMode=all&conflation=true"));
    assertThat(txns(p)).as("the newest of each partition, not one partition").containsExactlyInAnyOrder("s1-b", "s2-a");
    assertThat(p.getJsonObject("autopilot").getInteger("batch")).isEqualTo(10);
  }

  @Test
  void aLeaseThatLapsesRedeliversTheNewestNotTheSuperseded() {
    String q = Wire.queue("conf-lapse");
    pushTo(q, null, "x1", "x2");
    String group = "g" + Wire.shortId();
    String path = "consumerGroup=" + group + "&subscriptionMode=all&conflation=true&leaseSeconds=1";
    assertThat(txns(ok(pop(node, q, path)))).containsExactly("x2");
    pushTo(q, null, "x3");
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).until(() -> {
      Reply r = pop(node, q, path);
      return r.status() == 200 && txns(r.json()).equals(List.of("x3"));
    });
  }

  @Test
  void aGroupRegisteredWithoutConflationKeepsItsPolicyAndSaysSo() {
    String q = Wire.queue("conf-conflict");
    String group = "g" + Wire.shortId();
    assertThat(pop(node, q, "consumerGroup=" + group + "&subscriptionMode=all").status()).isEqualTo(204);
    JsonObject empty = ok(pop(node, q, "consumerGroup=" + group + "&conflation=true"));
    assertThat(empty.getBoolean("conflationConflict")).isTrue();
    assertThat(empty.containsKey("conflation")).isFalse();
    pushTo(q, null, "n1", "n2");
    JsonObject p = ok(pop(node, q, "batch=10&consumerGroup=" + group + "&conflation=true"));
    assertThat(txns(p)).containsExactly("n1", "n2");
    assertThat(p.getBoolean("conflationConflict")).isTrue();
    assertThat(p.containsKey("conflation")).isFalse();
  }

  @Test
  void conflationIsRefusedWithoutAGroupOrWithACommitAtDelivery() {
    String q = Wire.queue("conf-bad");
    Reply noGroup = pop(node, q, "conflation=true");
    assertThat(noGroup.status()).isEqualTo(400);
    assertThat(noGroup.json().getString("error")).contains("consumerGroup");
    Reply cod = pop(node, q, "conflation=true&consumerGroup=g1&commitOnDelivery=true");
    assertThat(cod.status()).isEqualTo(400);
    assertThat(cod.json().getString("error")).contains("autoAck").contains("commitOnDelivery");
  }

  @Test
  void autopilotSizesWhatTheCallerLeftUnsetAndEchoesIt() {
    String q = Wire.queue("ap");
    String[] t = new String[40];
    for (int i = 0; i < t.length; i++) t[i] = "m" + i;
    pushTo(q, null, t);
    // before any measurement: batch 10, partitions 1 (a tenth of it), no wait advice
    JsonObject first = ok(pop(node, q, "autopilot=true"));
    assertThat(first.getJsonObject("autopilot").getMap()).containsExactlyInAnyOrderEntriesOf(
        java.util.Map.of("partitions", 1, "batch", 10, "waitMs", 0));
    assertThat(Wire.messages(first)).hasSize(10);
    // the batch acked at once: its time per message (well under 200 ms) grows the next batch past the first 10
    var acks = new io.vertx.core.json.JsonArray();
    for (JsonObject m : Wire.messages(first)) {
      acks.add(Wire.ack(m.getString("transactionId"), m.getString("partitionId"), null, m.getString("leaseId")));
    }
    assertThat(node.post("/api/v1/ack/batch", new JsonObject().put("acknowledgments", acks)).status())
        .isEqualTo(200);
    // a pinned knob is never changed (committed at delivery: no lease left to hold the partition)
    JsonObject pinned = ok(pop(node, q, "autopilot=true&batch=3&commitOnDelivery=true"));
    assertThat(pinned.getJsonObject("autopilot").getInteger("batch")).isEqualTo(3);
    assertThat(Wire.messages(pinned)).hasSize(3);
    // both set: nothing is left to the broker, nothing is echoed
    assertThat(ok(pop(node, q, "autopilot=true&batch=2&partitions=1&commitOnDelivery=true")).containsKey("autopilot"))
        .isFalse();
    JsonObject sized = ok(pop(node, q, "autopilot=true"));
    int batch = sized.getJsonObject("autopilot").getInteger("batch");
    assertThat(batch).isGreaterThan(10);
    assertThat(sized.getJsonObject("autopilot").getInteger("partitions"))
        .isEqualTo(Math.min((int) Math.ceil(batch / 10.0), 64));
    assertThat(Wire.messages(sized)).hasSize(Math.min(batch, 25));
  }

  @Test
  void autopilotAdvisesAGrowingWaitAfterConsecutiveEmptyAnswers() {
    String q = Wire.queue("ap-wait");
    String group = "g" + Wire.shortId();
    String path = "consumerGroup=" + group + "&conflation=true&autopilot=true";
    assertThat(ok(pop(node, q, path)).getJsonObject("autopilot").getInteger("waitMs")).isEqualTo(100);
    assertThat(ok(pop(node, q, path)).getJsonObject("autopilot").getInteger("waitMs")).isEqualTo(200);
    assertThat(ok(pop(node, q, path + "&wait=true&timeout=1")).getJsonObject("autopilot").getInteger("waitMs"))
        .isZero();
  }
}
