package io.queenvertx.timers;

import static io.queenvertx.timers.TimerIT.arm;
import static io.queenvertx.timers.TimerIT.drain;
import static io.queenvertx.timers.TimerIT.schedule;
import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * A timer whose fire fails for a reason of its own does not hold back the timers claimed with it
 * (docs/design/queen2-contract.md §3.3 "Failure"): here its queue is encrypted and this node has no key, so its
 * plaintext push is refused (QCRYPT) on every attempt. The others fire at once; the bad one is backed off, its error
 * kept, and the sweep goes on.
 */
class TimerIsolationIT {
  @NodeFixture
  static TestNode node;

  @Test
  void aTimerThatCannotFireDoesNotHoldBackTheOthersOfItsBatch() {
    String bad = Wire.queue("tmi-bad");
    String good = Wire.queue("tmi-good");
    Wire.configure(node, new JsonObject().put("queue", bad).put("options", new JsonObject()));
    TestDatabase.execute(Wire.db(), "UPDATE queen.queues SET encryption_enabled = true WHERE name = '" + bad + "'");
    // one call: the bad timer first (due soonest), so every batch that claims the good ones claims it too
    arm(node, schedule(bad, "k", -1000, "never"), schedule(good, "a", 0, 1), schedule(good, "b", 0, 2),
        schedule(good, "c", 0, 3));
    List<JsonObject> got = new ArrayList<>();
    Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100)).until(() -> {
      got.addAll(drain(node, good));
      return got.size() >= 3;
    });
    assertThat(got).extracting(m -> m.getString("transactionId"))
        .containsExactlyInAnyOrder("txn-" + good + "-a", "txn-" + good + "-b", "txn-" + good + "-c");
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> TestDatabase.queryLong(Wire.db(),
        "SELECT attempts FROM queen.timers WHERE queue = '" + bad + "'") >= 1);
    JsonObject peek = node.get("/api/v1/timers/" + bad + "/k").json();
    assertThat(peek.getBoolean("found")).isTrue();
    assertThat(peek.getString("lastError")).contains("QCRYPT");
    assertThat(TestDatabase.queryLong(Wire.db(), "SELECT count(*) FROM queen.timers WHERE queue = '" + good + "'"))
        .isZero();
  }

  @Test
  void aTimerWhoseQueueWasDeletedCreatesItAgainAndFiresOnce() {
    String q = Wire.queue("tmi-deleted");
    Wire.configure(node, new JsonObject().put("queue", q).put("options", new JsonObject()));
    arm(node, schedule(q, "k", 1500, "after the delete"));
    var deleted = node.delete("/api/v1/resources/queues/" + q);
    assertThat(deleted.status()).as(deleted.body()).isLessThan(300);
    List<JsonObject> got = new ArrayList<>();
    Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100)).until(() -> {
      got.addAll(drain(node, q));
      return !got.isEmpty();
    });
    assertThat(got).extracting(m -> m.getString("transactionId")).containsExactly("txn-" + q + "-k");
    assertThat(TestDatabase.queryLong(Wire.db(), "SELECT count(*) FROM queen.timers WHERE queue = '" + q + "'"))
        .isZero();
  }
}
