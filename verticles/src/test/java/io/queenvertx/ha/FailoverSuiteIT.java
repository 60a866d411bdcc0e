package io.queenvertx.ha;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.TestNode;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Issue 37, the long failover suite ({@code mvn -Pfaults}, RELIABILITY.md "Failover"): two broker nodes on a real
 * Patroni cluster (synchronous replication) under load, through kill -9 of the primary's postmaster (push batch 1,
 * push batch 100, pop+ack), a planned switchover, the primary frozen (SIGSTOP) for 20 s while a standby is promoted,
 * and the loss of the primary's machine (Patroni and PostgreSQL killed). Each scenario prints one row; the table is
 * printed again at the end. Every scenario must lose nothing acknowledged, store nothing twice and undo no ack; the
 * switchover must answer no 5xx; the frozen primary must get no write once it wakes.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class FailoverSuiteIT {
  static final List<String> TABLE = Collections.synchronizedList(new ArrayList<>());
  static final FailoverRun.Push SINGLES = new FailoverRun.Push(4, 1, 20);
  static final FailoverRun.Push HUNDREDS = new FailoverRun.Push(2, 100, 200);
  static final int WARMUP = 2_000;
  static final int AFTER = 3_000;
  static PatroniCluster pg;
  static List<TestNode> nodes;
  private int rowsBefore;

  @BeforeAll
  static void up() throws Exception {
    PatroniCluster.assumeInstalled();
    pg = PatroniCluster.up();
    System.out.println("[ha] cluster in " + pg.dir());
    nodes = List.of(pg.node(Map.of(), "pg1", "pg2", "pg3"), pg.node(Map.of(), "pg3", "pg2", "pg1"));
  }

  @AfterAll
  static void down() {
    if (nodes != null) nodes.forEach(TestNode::close);
    if (pg != null) pg.close();
    StringBuilder out = new StringBuilder("\n[ha] failover suite\n").append(FailoverRun.HEADER).append('\n');
    for (String row : TABLE) out.append(row).append('\n');
    System.out.println(out);
  }

  @BeforeEach
  void healthy() {
    pg.awaitHealthy(Duration.ofMinutes(3));
    rowsBefore = TABLE.size();
  }

  @AfterEach
  void rowForAnUnfinishedScenario(TestInfo test) {
    if (TABLE.size() == rowsBefore) TABLE.add(test.getDisplayName() + " | did not finish: see the failure above");
  }

  private static FailoverRun.Row run(String name, FailoverRun.Shape shape, FailoverRun.Fault fault) throws Exception {
    var row = FailoverRun.run(name, pg, nodes, shape, fault);
    TABLE.add(row.line());
    return row.assertNothingLostOrUndone();
  }

  @Test
  @Order(1)
  void kill9UnderPushLoadOfSingleItems() throws Exception {
    run("kill -9, push batch 1", new FailoverRun.Shape(List.of(SINGLES), 0, WARMUP, AFTER), Faults.KILL_POSTMASTER);
  }

  @Test
  @Order(2)
  void kill9UnderPushLoadOfHundredItemBatches() throws Exception {
    run("kill -9, push batch 100", new FailoverRun.Shape(List.of(HUNDREDS), 0, WARMUP, AFTER * 3),
        Faults.KILL_POSTMASTER);
  }

  @Test
  @Order(3)
  void kill9UnderPopAndAckLoad() throws Exception {
    run("kill -9, pop+ack", new FailoverRun.Shape(List.of(new FailoverRun.Push(2, 10, 20)), 4, WARMUP, AFTER),
        Faults.KILL_POSTMASTER);
  }

  @Test
  @Order(4)
  void aPlannedSwitchoverUnderAllTheLoadAnswersNo5xx() throws Exception {
    var row = run("switchover", new FailoverRun.Shape(List.of(SINGLES, HUNDREDS), 4, WARMUP, AFTER),
        Faults.SWITCHOVER);
    assertThat(row.serverErrors()).as("5xx answers during a planned switchover").isZero();
  }

  @Test
  @Order(5)
  void thePrimaryFrozenForTwentySecondsGetsNoWriteWhenItWakes() throws Exception {
    var row = run("primary frozen 20 s", new FailoverRun.Shape(List.of(SINGLES, HUNDREDS), 4, WARMUP, AFTER),
        freeze(Duration.ofSeconds(20)));
    // the nodes moved to the promoted standby while the old primary was still frozen: nothing waited for it to wake
    assertThat(row.queuedAfterMs()).as("first queued push after the freeze began (ms)").isBetween(0L, 19_000L);
  }

  @Test
  @Order(6)
  void losingThePrimarysMachine() throws Exception {
    run("primary machine lost", new FailoverRun.Shape(List.of(SINGLES, HUNDREDS), 4, WARMUP, AFTER),
        Faults.LOSE_PRIMARY_MACHINE);
  }

  /**
   * The primary's machine frozen (SIGSTOP of its Patroni and every PostgreSQL process) for {@code length}: a standby
   * is promoted when the leader key expires; then it wakes (SIGCONT) still a primary for a moment, until its Patroni
   * demotes it. Until it is a standby again, no node may send it writes.
   */
  static FailoverRun.Fault freeze(Duration length) {
    return (cluster, ns, harm) -> {
      Faults.Struck struck = Faults.strikePrimary(cluster, "STOP", harm);
      String old = struck.old();
      long wake = struck.at() + length.toNanos();
      Awaitility.await("the freeze of " + length).atMost(length.plusMinutes(1)).pollInterval(Duration.ofMillis(200))
          .until(() -> System.nanoTime() >= wake);
      cluster.signalMember(old, "CONT");
      long woke = System.nanoTime();
      String oldHost = cluster.host(old).toString();
      int[] samples = {0};
      Awaitility.await(old + " back as a standby").atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(200))
          .until(() -> {
            for (TestNode n : ns) {
              assertThat(writesTo(n)).as("a node writes to %s, the woken old primary", old).isNotEqualTo(oldHost);
            }
            samples[0]++;
            String role = cluster.roles().get(old);
            return role != null && !role.startsWith("leader") && role.endsWith("running");
          });
      return String.format("%s frozen %d s; %s promoted after %.1f s; %s a standby %.1f s after waking, no write "
          + "sent to it (%d checks)", old, length.toSeconds(), struck.next(), struck.promotedMs() / 1e3, old,
          (System.nanoTime() - woke) / 1e9, samples[0]);
    };
  }

  /** The server a node sends its writes to now, or null. */
  static String writesTo(TestNode n) {
    var r = n.get("/api/v1/system/nodes");
    if (r.status() != 200) return null;
    for (Object s : r.json().getJsonArray("nodes").getJsonObject(0).getJsonArray("databaseServers")) {
      if ("writes".equals(((JsonObject) s).getString("use"))) return ((JsonObject) s).getString("server");
    }
    return null;
  }
}
