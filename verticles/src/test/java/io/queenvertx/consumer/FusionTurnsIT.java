package io.queenvertx.consumer;

import static io.queenvertx.testing.Wire.ack;
import static io.queenvertx.testing.Wire.item;
import static io.queenvertx.testing.Wire.push;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queenvertx.db.PopFusion;
import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonObject;
import java.sql.Connection;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Small pops and acks take turns at the database (db.FusionTurns), and a turn is bounded: an ack statement stuck on
 * a row lock holds a small pop of another queue only for the bound (tens of milliseconds), never until the lock goes.
 */
class FusionTurnsIT {
  @NodeFixture
  static TestNode node;

  @Test
  void aSmallPopIsNotHeldBehindAnAckStuckOnARowLock() throws Exception {
    String q1 = Wire.queue("turns-stuck");
    String q2 = Wire.queue("turns-free");
    assertThat(push(node, item(q1, "p", 1, q1 + "-1")).status()).isEqualTo(201);
    assertThat(push(node, item(q2, "p", 2, q2 + "-1")).status()).isEqualTo(201);
    JsonObject popped = Wire.popSome(node, q1, "batch=1");
    String pid = popped.getString("partitionId");
    String lease = popped.getString("leaseId");
    try (Connection holder = Wire.connect()) {
      holder.setAutoCommit(false);
      try (var st = holder.createStatement()) {
        st.execute("SELECT 1 FROM queen.log_consumers WHERE partition_id = '" + pid + "' FOR UPDATE");
      }
      // the ack's statement waits on the cursor row's lock, held above
      CompletableFuture<JsonObject> acked = CompletableFuture.supplyAsync(
          () -> Wire.ackOne(node, ack(q1 + "-1", pid, "completed", lease)));
      await().atMost(Duration.ofSeconds(10)).until(() -> Wire.count(
          "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%log_ack%'") > 0);
      // a batch-1 pop of another queue still answers, after at most the turn's bound, not when the lock goes
      PopFusion fusion = PopFusion.of(node.node().vertx(), node.node().pool(), node.node().config().pop().maxBytes());
      long heldBefore = fusion.heldForAcks();
      long t0 = System.nanoTime();
      CompletableFuture<TestNode.Reply> other = CompletableFuture.supplyAsync(() -> Wire.pop(node, q2, "batch=1"));
      TestNode.Reply r = other.get(5, TimeUnit.SECONDS);
      assertThat(r.status()).as("pop of %s answered %s", q2, r.body()).isEqualTo(200);
      assertThat(Wire.messages(r.json())).hasSize(1);
      assertThat((System.nanoTime() - t0) / 1_000_000).as("ms to answer").isLessThan(5_000);
      assertThat(acked).isNotDone();
      // and it did wait for the acks' turn: both fusions consult the turns (an ack statement was out, so the pop was
      // held until the bound let it go)
      assertThat(fusion.heldForAcks()).as("small-pop statements held for the acks' turn").isGreaterThan(heldBefore);
      holder.rollback();
      assertThat(acked.get(10, TimeUnit.SECONDS).getBoolean("success")).isTrue();
    }
  }
}
