package io.queenvertx.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.BrokerProcess;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * A node frozen (SIGSTOP) until its cluster has dropped it, then resumed (SIGCONT), must be one cluster with the other
 * again within {@link #REMERGE_BOUND}: Hazelcast's split-brain merge (cluster.xml's merge delays) joins the two
 * one-member clusters, and Vert.x brings back what the event bus needs: each node lists both members and reaches
 * both (each answers on its own address), and a long poll parked on either node wakes on a push through the other
 * (the {@code landed} announcement crosses the cluster again). With Hazelcast's default delays (300 s, then every
 * 120 s) this took about 4 minutes (issue 34). The freeze lasts until the other node has dropped the frozen one, and
 * at least 30 s under {@code -Pfaults} (the campaign's freeze).
 */
class ClusterFreezeIT {
  static final Duration REMERGE_BOUND = Duration.ofSeconds(60);
  static final Duration FREEZE = "long".equals(System.getProperty("queen.faults")) ? Duration.ofSeconds(30)
      : Duration.ZERO;
  static final String CLUSTER = "queen-freeze-" + UUID.randomUUID();

  @Test
  void aNodeResumedAfterAFreezeIsOneClusterWithTheOtherAgainWithinAMinute() throws Exception {
    Map<String, String> env = new HashMap<>(MultiProcessClusterIT.ENV);
    env.put("QUEEN_CLUSTER_NAME", CLUSTER);
    env.put("QUEEN_CLUSTER_PORT", "5961");
    var fa = CompletableFuture.supplyAsync(() -> start(env));
    var fb = CompletableFuture.supplyAsync(() -> start(env));
    try (BrokerProcess a = fa.get(180, TimeUnit.SECONDS); BrokerProcess b = fb.get(180, TimeUnit.SECONDS)) {
      Awaitility.await("the two nodes meet").atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(100))
          .until(() -> oneCluster(a, b));

      long frozenAt = System.nanoTime();
      signal("STOP", b);
      long droppedAt;
      try {
        Awaitility.await("a drops the frozen b").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
            .until(() -> members(a) == 1);
        droppedAt = System.nanoTime();
        Awaitility.await("the freeze of " + FREEZE).atMost(FREEZE.plusSeconds(10)).pollInterval(Duration.ofMillis(200))
            .until(() -> System.nanoTime() - frozenAt >= FREEZE.toNanos());
      } finally {
        signal("CONT", b);
      }
      long resumedAt = System.nanoTime();
      long[] membersAt = {0};
      Awaitility.await("one cluster again after the resume").atMost(REMERGE_BOUND)
          .pollInterval(Duration.ofMillis(250)).until(() -> {
            if (!reachableOfTwo(a) || !reachableOfTwo(b)) return false;
            if (membersAt[0] == 0) membersAt[0] = System.nanoTime();
            return oneCluster(a, b);
          });
      long mergedAt = System.nanoTime();
      System.out.printf("[cluster-freeze] b frozen %.1f s (a dropped it after %.1f s); after the resume: both list"
          + " and reach two members in %.1f s, wake-ups both ways in %.1f s%n", (resumedAt - frozenAt) / 1e9,
          (droppedAt - frozenAt) / 1e9, (membersAt[0] - resumedAt) / 1e9, (mergedAt - resumedAt) / 1e9);
      assertThat(members(b)).isEqualTo(2);
    }
  }

  static BrokerProcess start(Map<String, String> env) {
    try {
      return BrokerProcess.onSharedDatabase(env);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** Both nodes list two members, each reachable, and a push through either wakes a pop parked on the other. */
  static boolean oneCluster(BrokerProcess a, BrokerProcess b) throws Exception {
    return reachableOfTwo(a) && reachableOfTwo(b) && MultiProcessClusterIT.aPushThroughWakesAPopOn(b, a)
        && MultiProcessClusterIT.aPushThroughWakesAPopOn(a, b);
  }

  /** Members the node lists in {@code /api/v1/system/nodes}, or -1 when it does not answer. */
  static int members(BrokerProcess n) {
    try {
      var r = MultiProcessClusterIT.get(n, "/api/v1/system/nodes");
      return r.statusCode() == 200 ? new JsonObject(r.body()).getJsonArray("nodes").size() : -1;
    } catch (Exception e) {
      return -1;
    }
  }

  /** Whether the node lists exactly two members and both answered it. */
  static boolean reachableOfTwo(BrokerProcess n) throws Exception {
    var r = MultiProcessClusterIT.get(n, "/api/v1/system/nodes");
    if (r.statusCode() != 200) return false;
    var nodes = new JsonObject(r.body()).getJsonArray("nodes");
    return nodes.size() == 2 && nodes.stream().allMatch(o -> ((JsonObject) o).getBoolean("reachable", false));
  }

  static void signal(String signal, BrokerProcess n) throws Exception {
    Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(n.pid())).inheritIO().start();
    assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
    assertThat(kill.exitValue()).as("kill -%s %d", signal, n.pid()).isZero();
  }
}
