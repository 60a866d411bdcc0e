package io.queenvertx.engine;

import static io.queenvertx.testing.Wire.item;
import static io.queenvertx.testing.Wire.pop;
import static io.queenvertx.testing.Wire.popSome;
import static io.queenvertx.testing.Wire.push;
import static io.queenvertx.testing.Wire.pushQueued;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.TestNode.Reply;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Leases (API.md §5.4 end, §5.7; ENGINE.md §4.2, §5.5): expiry redelivers, extension renews, budgets are untouched. */
class LeaseIT {
  @NodeFixture
  static TestNode node;

  @Test
  void anExpiredLeaseRedeliversTheSameMessagesWithDeliveryAttemptTwo() throws Exception {
    String q = Wire.queue("lease-expire");
    push(node, item(q, null, 0, "e0"), item(q, null, 1, "e1"));
    JsonObject first = popSome(node, q, "batch=10&leaseSeconds=1");
    var firstMsgs = Wire.messages(first);
    assertThat(firstMsgs).extracting(m -> m.getInteger("deliveryAttempt")).containsOnly(1);
    assertThat(pop(node, q, "batch=10").status()).as("held while the lease lives").isEqualTo(204);
    awaitLeaseExpired(first.getString("partitionId"));
    JsonObject again = popSome(node, q, "batch=10&leaseSeconds=30");
    var againMsgs = Wire.messages(again);
    assertThat(againMsgs).extracting(m -> m.getString("id"))
        .containsExactlyElementsOf(firstMsgs.stream().map(m -> m.getString("id")).toList());
    assertThat(againMsgs).extracting(m -> m.getInteger("deliveryAttempt")).containsOnly(2);
    assertThat(again.getString("leaseId")).isNotEqualTo(first.getString("leaseId"));
    var cursor = Wire.cursor(again.getString("partitionId"), Wire.QUEUE_MODE);
    assertThat(cursor.get("batch_retry_count")).as("lease expiry never charges the retry budget").isEqualTo(0);
    assertThat(cursor.get("attempt_count")).isEqualTo(2);
  }

  @Test
  void anAckWithTheExpiredLeaseIsRejectedOnceTheBatchWasRedelivered() throws Exception {
    String q = Wire.queue("lease-stale-ack");
    pushQueued(node, q, null, 0, "s0");
    JsonObject first = popSome(node, q, "batch=1&leaseSeconds=1");
    awaitLeaseExpired(first.getString("partitionId"));
    JsonObject again = popSome(node, q, "batch=1&leaseSeconds=30");
    JsonObject r = Wire.ackOne(node, Wire.ack("s0", again.getString("partitionId"), "completed",
        first.getString("leaseId")));
    assertThat(r.getBoolean("success")).isFalse();
    assertThat(r.getString("error")).isEqualTo("invalid or expired lease");
    assertThat(Wire.ackOne(node, Wire.ack("s0", again.getString("partitionId"), "completed",
        again.getString("leaseId"))).getBoolean("success")).isTrue();
  }

  @Test
  void extendingALiveLeaseRenewsItWithThreeEqualExpiryKeys() {
    String q = Wire.queue("lease-extend");
    pushQueued(node, q, null, 0, "x0");
    JsonObject p = popSome(node, q, "batch=1&leaseSeconds=10");
    String lease = p.getString("leaseId");
    Instant before = Instant.now();
    Reply r = node.post("/api/v1/lease/" + lease + "/extend", new JsonObject().put("seconds", 120));
    assertThat(r.status()).isEqualTo(200);
    JsonObject j = r.json();
    assertThat(j.getString("leaseId")).isEqualTo(lease);
    assertThat(j.getBoolean("success")).isTrue();
    assertThat(j.getInteger("renewed")).isEqualTo(1);
    String exp = j.getString("newExpiresAt");
    assertThat(exp).isNotNull();
    assertThat(j.getString("expiresAt")).isEqualTo(exp);
    assertThat(j.getString("lease_expires_at")).isEqualTo(exp);
    assertThat(Instant.parse(exp)).isAfter(before.plusSeconds(100)).isBefore(before.plusSeconds(140));
    assertThat(Wire.count("SELECT count(*) FROM queen.log_consumers WHERE worker_id = '" + lease
        + "' AND lease_expires_at > now() + interval '100 seconds'")).isEqualTo(1);
  }

  @Test
  void anExtendedLeaseOutlivesItsOriginalExpiry() throws Exception {
    String q = Wire.queue("lease-outlive");
    pushQueued(node, q, null, 0, "o0");
    JsonObject p = popSome(node, q, "batch=1&leaseSeconds=1");
    String pid = p.getString("partitionId");
    String originalExpiry = (String) Wire.rows("SELECT lease_expires_at::text AS e FROM queen.log_consumers WHERE "
        + "partition_id = '" + pid + "' AND consumer_group = '" + Wire.QUEUE_MODE + "'").get(0).get("e");
    assertThat(node.post("/api/v1/lease/" + p.getString("leaseId") + "/extend", "{\"seconds\":30}").json()
        .getInteger("renewed")).isEqualTo(1);
    // wait until the database clock is past the lease's original 1 s expiry, then the renewed lease must still hold
    await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100))
        .until(() -> Wire.count("SELECT (now() > '" + originalExpiry + "'::timestamptz)::int") == 1);
    assertThat(pop(node, q, "batch=1").status()).as("the renewed lease still holds the partition").isEqualTo(204);
  }

  @Test
  void extendingAnUnknownLeaseAnswersRenewedZeroAndNullExpiries() {
    String lease = UUID.randomUUID().toString();
    Reply r = node.post("/api/v1/lease/" + lease + "/extend", "{}");
    assertThat(r.status()).isEqualTo(200);
    JsonObject j = r.json();
    assertThat(j.getString("leaseId")).isEqualTo(lease);
    assertThat(j.getBoolean("success")).isFalse();
    assertThat(j.getInteger("renewed")).isZero();
    for (String k : new String[] {"newExpiresAt", "expiresAt", "lease_expires_at"}) {
      assertThat(j.containsKey(k)).as("key %s is present", k).isTrue();
      assertThat(j.getValue(k)).as(k).isNull();
    }
  }

  @Test
  void extendingAnExpiredLeaseRenewsNothing() throws Exception {
    String q = Wire.queue("lease-expired-extend");
    pushQueued(node, q, null, 0, "ex0");
    JsonObject p = popSome(node, q, "batch=1&leaseSeconds=1");
    awaitLeaseExpired(p.getString("partitionId"));
    JsonObject j = node.post("/api/v1/lease/" + p.getString("leaseId") + "/extend", "{}").json();
    assertThat(j.getBoolean("success")).isFalse();
    assertThat(j.getInteger("renewed")).isZero();
    assertThat(j.getValue("newExpiresAt")).isNull();
    assertThat(Wire.messages(popSome(node, q, "batch=1"))).as("the expired batch is free to redeliver")
        .extracting(m -> m.getString("transactionId")).containsExactly("ex0");
  }

  @Test
  void anEmptyOrNonJsonExtendBodyMeans60Seconds() {
    for (String body : new String[] {"", "{}", "not json"}) {
      String q = Wire.queue("lease-60");
      pushQueued(node, q, null, 0, "d0");
      JsonObject p = popSome(node, q, "batch=1&leaseSeconds=5");
      Instant before = Instant.now();
      Reply r = node.post("/api/v1/lease/" + p.getString("leaseId") + "/extend", body);
      assertThat(r.status()).as("body %s", body).isEqualTo(200);
      JsonObject j = r.json();
      assertThat(j.getInteger("renewed")).as("body '%s'", body).isEqualTo(1);
      assertThat(Instant.parse(j.getString("newExpiresAt"))).as("body '%s'", body)
          .isAfter(before.plusSeconds(50)).isBefore(before.plusSeconds(70));
    }
  }

  @Test
  void extendingNeverShortensALease() {
    String q = Wire.queue("lease-noshorten");
    pushQueued(node, q, null, 0, "ns0");
    JsonObject p = popSome(node, q, "batch=1&leaseSeconds=300");
    Instant before = Instant.now();
    JsonObject j = node.post("/api/v1/lease/" + p.getString("leaseId") + "/extend", "{\"seconds\":5}").json();
    assertThat(j.getInteger("renewed")).isEqualTo(1);
    assertThat(Instant.parse(j.getString("newExpiresAt"))).isAfter(before.plusSeconds(250));
  }

  @Test
  void oneLeaseCoversEveryPartitionOfAPopAndExtendRenewsThemAll() {
    String q = Wire.queue("lease-multi");
    pushQueued(node, q, "p1", 0, "m1");
    pushQueued(node, q, "p2", 0, "m2");
    JsonObject p = popSome(node, q, "batch=10&partitions=2");
    assertThat(p.getInteger("partitionsClaimed")).isEqualTo(2);
    var msgs = Wire.messages(p);
    assertThat(msgs).hasSize(2);
    assertThat(msgs).extracting(m -> m.getString("leaseId")).containsOnly(p.getString("leaseId"));
    JsonObject j = node.post("/api/v1/lease/" + p.getString("leaseId") + "/extend", "{}").json();
    assertThat(j.getInteger("renewed")).isEqualTo(2);
  }

  @Test
  void aPopWithoutLeaseSecondsUsesTheQueueLeaseTime() {
    String configured = Wire.queue("lease-cfg");
    Wire.configure(node, new JsonObject().put("queue", configured)
        .put("options", new JsonObject().put("leaseTime", 1234)));
    pushQueued(node, configured, null, 0, "c0");
    popSome(node, configured, "batch=1");
    assertThat(leaseSpanSeconds(Wire.partitionId(configured, "Default"))).isEqualTo(1234);

    String pushed = Wire.queue("lease-col");
    pushQueued(node, pushed, null, 0, "c1");
    popSome(node, pushed, "batch=1");
    assertThat(leaseSpanSeconds(Wire.partitionId(pushed, "Default")))
        .as("a push-created queue has the column default, 60 s").isEqualTo(60);

    pushQueued(node, configured, "other", 0, "c2");
    popSome(node, configured + "/partition/other", "leaseSeconds=7");
    assertThat(leaseSpanSeconds(Wire.partitionId(configured, "other"))).as("leaseSeconds wins").isEqualTo(7);
  }

  private static long leaseSpanSeconds(String pid) {
    return Wire.count("SELECT round(extract(epoch FROM lease_expires_at - lease_acquired_at))::bigint "
        + "FROM queen.log_consumers WHERE partition_id = '" + pid + "' AND consumer_group = '__QUEUE_MODE__'");
  }

  /** Waits until the database holds the partition's queue-mode lease as run out: the observable lease expiry. */
  private static void awaitLeaseExpired(String partitionId) {
    await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100)).until(() -> Wire.count(
        "SELECT count(*) FROM queen.log_consumers WHERE partition_id = '" + partitionId + "' AND consumer_group = '"
            + Wire.QUEUE_MODE + "' AND lease_expires_at <= now()") == 1);
  }
}
