package io.queenvertx.groups;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.auth.AccessLevel;
import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.TestNode.Reply;
import io.queenvertx.testing.Wire;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Deleting a consumer group and its durable subscription (API.md §5.11, §6) over real HTTP and PostgreSQL: a deleted
 * group starts over from its subscription start (the stored one when the metadata is kept, the next pop's mode
 * otherwise); the subscription timestamp overrides what pops carry; the 200 bodies and 400s of the contract.
 */
class ConsumerGroupDeleteIT {
  @NodeFixture
  static TestNode node;

  static void pushEach(String q, String... txns) {
    for (String t : txns) Wire.pushOne(node, q, "p", new JsonObject().put("t", t), t);
  }

  /** Pops (batch=10, given subscription mode) and acks until empty; the transaction ids in delivery order. */
  static List<String> drain(String q, String group, String mode) {
    List<String> seen = new ArrayList<>();
    while (true) {
      Reply r = node.get("/api/v1/pop/queue/" + q + "?batch=10&consumerGroup=" + group + "&subscriptionMode=" + mode);
      if (r.status() == 204) return seen;
      assertThat(r.status()).as(r.body()).isEqualTo(200);
      JsonArray acks = new JsonArray();
      for (JsonObject m : Wire.messages(r.json())) {
        seen.add(m.getString("transactionId"));
        acks.add(Wire.ack(m.getString("transactionId"), m.getString("partitionId"), "completed",
            r.json().getString("leaseId")));
      }
      assertThat(node.post("/api/v1/ack/batch", new JsonObject().put("consumerGroup", group)
          .put("acknowledgments", acks)).status()).isEqualTo(200);
    }
  }

  /** The createdAt of the segment at a base offset, as pops render it (microseconds, Z). */
  static String segmentTime(String q, long base) {
    return (String) Wire.rows("SELECT queen._log_ts(created_at) AS t FROM queen.log_segments WHERE partition_id = '"
        + Wire.partitionId(q, "p") + "' AND base_offset = " + base).get(0).get("t");
  }

  @Test
  void deletingAGroupMakesItStartOverFromItsSubscriptionStart() {
    String q = Wire.queue("cg-del");
    pushEach(q, "m1", "m2", "m3");
    String g = "g-" + Wire.shortId();
    assertThat(drain(q, g, "all")).containsExactly("m1", "m2", "m3");
    assertThat(drain(q, g, "all")).isEmpty();

    Reply d = node.delete("/api/v1/consumer-groups/" + g);
    assertThat(d.status()).as(d.body()).isEqualTo(200);
    assertThat(d.json().getBoolean("success")).isTrue();
    assertThat(d.json().getString("consumerGroup")).isEqualTo(g);
    assertThat(d.json().getInteger("deletedPartitions")).isEqualTo(1);
    assertThat(d.json().getBoolean("metadataDeleted")).isTrue();
    assertThat(d.json().fieldNames()).containsExactlyInAnyOrder("success", "consumerGroup", "deletedPartitions",
        "metadataDeleted");
    assertThat(Wire.cursor(Wire.partitionId(q, "p"), g)).isNull();
    assertThat(drain(q, g, "all")).as("mode all starts over at the oldest message").containsExactly("m1", "m2", "m3");

    assertThat(node.delete("/api/v1/consumer-groups/" + g + "?deleteMetadata=true").status()).isEqualTo(200);
    assertThat(drain(q, g, "new")).as("mode new starts over at the tail").isEmpty();
    pushEach(q, "m4");
    assertThat(drain(q, g, "new")).containsExactly("m4");
  }

  @Test
  void deletingTheGroupOnOneQueueLeavesItsOtherQueuesAlone() {
    String q1 = Wire.queue("cg-delq1");
    String q2 = Wire.queue("cg-delq2");
    pushEach(q1, "a1");
    pushEach(q2, "b1");
    String group = "g-" + Wire.shortId();
    assertThat(drain(q1, group, "all")).containsExactly("a1");
    assertThat(drain(q2, group, "all")).containsExactly("b1");

    Reply d = node.delete("/api/v1/consumer-groups/" + group + "/queues/" + q1);
    assertThat(d.status()).as(d.body()).isEqualTo(200);
    assertThat(d.json()).isEqualTo(new JsonObject().put("success", true).put("consumerGroup", group)
        .put("queueName", q1).put("deletedPartitions", 1).put("metadataDeleted", true));
    assertThat(drain(q1, group, "all")).containsExactly("a1");
    assertThat(drain(q2, group, "all")).isEmpty();
  }

  @Test
  void keepingTheMetadataRestartsFromTheStoredSubscriptionNotFromThePopsMode() {
    String q = Wire.queue("cg-keep");
    pushEach(q, "old");
    String group = "g-" + Wire.shortId();
    assertThat(drain(q, group, "new")).as("registered as new: the backlog is skipped").isEmpty();
    pushEach(q, "n1", "n2");
    assertThat(drain(q, group, "new")).containsExactly("n1", "n2");

    Reply keep = node.delete("/api/v1/consumer-groups/" + group + "/queues/" + q + "?deleteMetadata=false");
    assertThat(keep.json().getBoolean("metadataDeleted")).isFalse();
    assertThat(drain(q, group, "all")).as("the stored subscription (registration time) wins over mode all")
        .containsExactly("n1", "n2");

    assertThat(node.delete("/api/v1/consumer-groups/" + group + "/queues/" + q + "?deleteMetadata=1").status())
        .isEqualTo(200);
    assertThat(drain(q, group, "all")).containsExactly("old", "n1", "n2");
  }

  @Test
  void theSubscriptionTimestampOverridesWhatPopsCarry() {
    String q = Wire.queue("cg-sub");
    pushEach(q, "s1", "s2", "s3");
    String fresh = "g-" + Wire.shortId();
    assertThat(node.post("/api/v1/consumer-groups/" + fresh + "/subscription",
        new JsonObject().put("subscriptionTimestamp", segmentTime(q, 0))).status()).isEqualTo(200);
    Reply sub = node.post("/api/v1/consumer-groups/" + fresh + "/subscription",
        new JsonObject().put("subscriptionTimestamp", segmentTime(q, 1)));
    assertThat(sub.status()).as(sub.body()).isEqualTo(200);
    assertThat(sub.json().getBoolean("success")).isTrue();
    assertThat(sub.json().getString("consumerGroup")).isEqualTo(fresh);
    assertThat(sub.json().getString("subscriptionTimestamp")).isEqualTo(segmentTime(q, 1));
    assertThat(drain(q, fresh, "new")).as("a group never seen starts at the (last) stored time, not at the tail")
        .containsExactly("s2", "s3");

    String known = "g-" + Wire.shortId();
    assertThat(drain(q, known, "all")).containsExactly("s1", "s2", "s3");
    Reply moved = node.post("/api/v1/consumer-groups/" + known + "/subscription",
        new JsonObject().put("subscriptionTimestamp", segmentTime(q, 2)));
    assertThat(moved.json().getInteger("queuesUpdated")).isEqualTo(1);
    assertThat(drain(q, known, "all")).as("existing cursors do not move").isEmpty();
    node.delete("/api/v1/consumer-groups/" + known + "/queues/" + q + "?deleteMetadata=false");
    assertThat(drain(q, known, "all")).as("after a reset the stored time beats mode all").containsExactly("s3");
  }

  @Test
  void subscriptionRefusals() {
    String group = "g-" + Wire.shortId();
    for (Object body : new Object[] {new JsonObject(), new JsonObject().put("subscriptionTimestamp", ""),
        new JsonObject().putNull("subscriptionTimestamp"), ""}) {
      Reply r = node.post("/api/v1/consumer-groups/" + group + "/subscription", body);
      assertThat(r.status()).as("%s answered %s", body, r.body()).isEqualTo(400);
      assertThat(r.json()).isEqualTo(io.queenvertx.testing.Wire.error(400, "subscriptionTimestamp is required"));
    }
    Reply bad = node.post("/api/v1/consumer-groups/" + group + "/subscription",
        new JsonObject().put("subscriptionTimestamp", "not a time"));
    assertThat(bad.status()).isEqualTo(400);
    assertThat(bad.json().getString("error")).startsWith("subscriptionTimestamp must be an ISO-8601 date-time");
    assertThat(Wire.count("SELECT count(*) FROM queen.consumer_groups_metadata WHERE consumer_group = '" + group
        + "'")).isZero();
  }

  @Test
  void deleteIsAdminAndTheRestFollowTheAccessTableOfTheContract() {
    assertThat(AccessLevel.of(HttpMethod.DELETE, "/api/v1/consumer-groups/:group")).isEqualTo(AccessLevel.ADMIN);
    assertThat(AccessLevel.of(HttpMethod.DELETE, "/api/v1/consumer-groups/:group/queues/:queue"))
        .isEqualTo(AccessLevel.ADMIN);
    assertThat(AccessLevel.of(HttpMethod.POST, "/api/v1/consumer-groups/:group/subscription"))
        .isEqualTo(AccessLevel.READ_WRITE);
    assertThat(AccessLevel.of(HttpMethod.POST, "/api/v1/consumer-groups/:group/queues/:queue/seek"))
        .isEqualTo(AccessLevel.READ_WRITE);
    assertThat(AccessLevel.of(HttpMethod.POST, "/api/v1/traces")).isEqualTo(AccessLevel.READ_WRITE);
    assertThat(AccessLevel.of(HttpMethod.GET, "/api/v1/traces/names")).isEqualTo(AccessLevel.READ_ONLY);
  }
}
