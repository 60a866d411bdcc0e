package io.queenvertx.boot;

import io.queenvertx.kernel.BootException;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queenvertx.testing.BrokerProcess;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * Issue 34: a data folder belongs to one live node. A second node started on it (another PORT, the same
 * QUEEN_DATA_DIR) is refused in one line with exit 2 and leaves the first node and its PostgreSQL alone; a server
 * whose node is provably gone (killed with its watchdog) is still stopped by the next node on the folder.
 */
class DataFolderOwnershipIT {

  /** A node on its own embedded PostgreSQL under {@code dir/data}; BrokerProcess gives each launch a free PORT. */
  private static Map<String, String> embeddedIn(Path dir) {
    return Map.of("QUEEN_DATA_DIR", dir.resolve("data").toString(), "DB_POOL_SIZE", "8", "QUEEN_HTTP_INSTANCES", "1",
        "QUEEN_EMBEDDED_PG_SHARED_BUFFERS_MB", "128");
  }

  private static long postmasterPid(Path data) throws Exception {
    return Long.parseLong(Files.readAllLines(data.resolve("pg/postmaster.pid")).get(0).trim());
  }

  /** Pushes one message to {@code queue} on {@code node}, asserting it is queued. */
  private static void pushQueued(BrokerProcess node, String queue, String txn) {
    var push = node.post("/api/v1/push", new JsonObject().put("items",
        new JsonArray().add(Wire.item(queue, null, new JsonObject().put("txn", txn), txn))));
    assertThat(push.status()).as("push: %s", push.body()).isEqualTo(201);
    assertThat(push.array().getJsonObject(0).getString("status")).isEqualTo("queued");
  }

  /** Pops {@code queue} on {@code node}, asserting the one message is {@code txn}; returns the pop answer. */
  private static JsonObject popOnly(BrokerProcess node, String queue, String txn) {
    var pop = node.get("/api/v1/pop/queue/" + queue + "?batch=10");
    assertThat(pop.status()).as("pop: %s", pop.body()).isEqualTo(200);
    assertThat(Wire.messages(pop.json())).singleElement()
        .satisfies(m -> assertThat(m.getString("transactionId")).isEqualTo(txn));
    return pop.json();
  }

  @Test
  void aSecondNodeOnAFolderInUseIsRefusedInOneLineAndTheFirstKeepsServing() throws Exception {
    Path dir = Files.createTempDirectory("queen-folder-in-use");
    Path data = dir.resolve("data");
    try (var first = BrokerProcess.start(embeddedIn(dir))) {
      long postmaster = postmasterPid(data);
      try (var second = BrokerProcess.launch(embeddedIn(dir))) {
        assertThat(second.port()).isNotEqualTo(first.port());
        assertThat(second.awaitExit(Duration.ofSeconds(60))).isEqualTo(2);
        assertThat(BootErrorsIT.errorLinesWithoutTrace(second.log())).singleElement().asString()
            .endsWith("boot failed: data folder " + data + " (QUEEN_DATA_DIR) is in use by another node: process "
                + first.pid() + " (java) holds " + data.resolve("node.lock")
                + "; stop it or give this node another QUEEN_DATA_DIR");
        assertThat(second.log()).doesNotContain("orphaned").doesNotContain("PostgreSQL running");
      }
      // the first node's server is the same process, and the node serves push, pop and ack after the refusal
      assertThat(postmasterPid(data)).isEqualTo(postmaster);
      assertThat(ProcessHandle.of(postmaster).map(ProcessHandle::isAlive)).contains(true);
      String q = Wire.queue("inuse");
      pushQueued(first, q, "after-refusal");
      JsonObject pop = popOnly(first, q, "after-refusal");
      var ack = first.post("/api/v1/ack", Wire.ack("after-refusal", pop.getString("partitionId"), "completed",
          pop.getString("leaseId")));
      assertThat(ack.status()).as("ack: %s", ack.body()).isEqualTo(200);
      assertThat(ack.array().getJsonObject(0).getBoolean("success")).as("ack: %s", ack.body()).isTrue();
      assertThat(first.get("/health").status()).isEqualTo(200);
      assertThat(first.log()).doesNotContain("Connection refused");
    }
  }

  @Test
  void aServerWhoseNodeAndWatchdogWereKilledIsStoppedByTheNextNodeOnTheFolder() throws Exception {
    Path dir = Files.createTempDirectory("queen-folder-orphan");
    Path data = dir.resolve("data");
    String q = Wire.queue("orphan");
    ProcessHandle orphan;
    try (var first = BrokerProcess.start(embeddedIn(dir))) {
      pushQueued(first, q, "before-kill");
      orphan = ProcessHandle.of(postmasterPid(data)).orElseThrow();
      List<ProcessHandle> watchdogs = first.children().stream()
          .filter(h -> Arrays.asList(h.info().arguments().orElse(new String[0])).contains("queen-pg-watchdog"))
          .toList();
      assertThat(watchdogs).hasSize(1);
      watchdogs.get(0).destroyForcibly(); // SIGKILL: the watchdog cannot trap it
      watchdogs.get(0).onExit().get(30, java.util.concurrent.TimeUnit.SECONDS);
      first.kill9();
    }
    try {
      assertThat(orphan.isAlive()).as("the server outlived its node and watchdog").isTrue();
      try (var next = BrokerProcess.start(embeddedIn(dir))) {
        assertThat(orphan.isAlive()).isFalse();
        assertThat(next.log()).contains("stopping orphaned embedded PostgreSQL (pid " + orphan.pid() + ")");
        assertThat(postmasterPid(data)).isNotEqualTo(orphan.pid());
        popOnly(next, q, "before-kill");
      }
    } finally {
      if (orphan.isAlive()) orphan.destroy();
    }
  }

  /** In one JVM (tests, embedders), a folder this process already holds is refused the same way. */
  @Test
  void aFolderThisProcessHoldsIsRefusedAndItsDatabaseKeepsRunning() throws Exception {
    Path data = Files.createTempDirectory("queen-folder-same-jvm").resolve("data");
    try (var db = EmbeddedDatabase.start(data, 0, 50, 32)) {
      assertThatThrownBy(() -> EmbeddedDatabase.start(data, 0, 50, 32).close())
          .isInstanceOfSatisfying(BootException.class, e -> assertThat(e.exitCode()).isEqualTo(2))
          .hasMessage("data folder " + data + " (QUEEN_DATA_DIR) is in use by another node: this process (pid "
              + ProcessHandle.current().pid() + ") holds " + data.resolve("node.lock")
              + "; stop it or give this node another QUEEN_DATA_DIR");
      var props = new Properties();
      props.setProperty("user", "postgres");
      props.setProperty("password", db.connection().password());
      try (var c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + db.port() + "/postgres", props);
           var rs = c.createStatement().executeQuery("SELECT 41 + 1")) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getInt(1)).isEqualTo(42);
      }
    }
    // released on close: the folder starts again
    EmbeddedDatabase.start(data, 0, 50, 32).close();
  }

  /**
   * A node of an earlier version takes no node.lock; its PostgreSQL launcher's {@code pg/epg-lock}, held here by
   * another JVM ({@link EarlierNode}), is enough to refuse the folder.
   */
  @Test
  void aFolderWhoseLauncherLockAnotherProcessHoldsIsRefused() throws Exception {
    Path data = Files.createTempDirectory("queen-folder-earlier").resolve("data");
    Path epgLock = data.resolve("pg/epg-lock");
    Files.createDirectories(epgLock.getParent());
    List<String> cmd = new java.util.ArrayList<>(BrokerProcess.command("32m"));
    cmd.set(cmd.size() - 1, EarlierNode.class.getName());
    cmd.add(epgLock.toString());
    Process holder = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    try (var out = new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8))) {
      assertThat(out.readLine()).isEqualTo("locked");
      assertThatThrownBy(() -> EmbeddedDatabase.start(data, 0, 50, 32).close())
          .isInstanceOfSatisfying(BootException.class, e -> assertThat(e.exitCode()).isEqualTo(2))
          .hasMessage("data folder " + data + " (QUEEN_DATA_DIR) is in use: another process holds " + epgLock
              + " (a node of an earlier version?); stop it or give this node another QUEEN_DATA_DIR");
      assertThat(data.resolve("pg/PG_VERSION")).doesNotExist();
    } finally {
      holder.destroy();
      holder.waitFor();
    }
  }

  /** Holds an OS lock on the file named by its argument until its standard input closes. */
  public static final class EarlierNode {
    public static void main(String[] args) throws Exception {
      try (var channel = FileChannel.open(Path.of(args[0]), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
           var lock = channel.lock()) {
        System.out.println("locked");
        System.out.flush();
        System.in.read();
      }
    }
  }
}
