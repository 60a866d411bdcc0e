package io.queenvertx.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queenvertx.testing.BrokerProcess;
import io.queenvertx.testing.TestNode;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Issue 22: each boot error of a real node process is one log line naming the variable (or port, or PostgreSQL) and
 * what is accepted, with exit code 2 for a setting and 1 for an unreachable PostgreSQL; a PostgreSQL that comes up
 * while the node retries lets the node boot.
 */
class BootErrorsIT {

  /** A node that would share the test PostgreSQL: no embedded server, so a boot takes a second or two. */
  private static Map<String, String> sharedDb(Map<String, String> extra) throws Exception {
    var env = new HashMap<String, String>(Map.of("DB_POOL_SIZE", "8"));
    env.putAll(extra);
    return BrokerProcess.sharedDatabaseEnv(env);
  }

  /** The log's lines at ERROR level, and proof that no stack trace was printed. */
  static List<String> errorLinesWithoutTrace(String log) {
    assertThat(log).doesNotContain("\tat ").doesNotContain("Exception");
    return log.lines().filter(l -> l.contains(" ERROR ")).toList();
  }

  /**
   * Launches a node on its embedded PostgreSQL (a new data folder) with {@code env} and asserts it exits 2 with one
   * error line, without a stack trace, ending in {@code error}, before PostgreSQL started (no {@code pg/} folder).
   * Returns the log.
   */
  private static String refusedBeforePostgresql(Map<String, String> env, String error) throws Exception {
    Path data = Files.createTempDirectory("queen-boot-refused");
    var all = new HashMap<>(env);
    all.put("QUEEN_DATA_DIR", data.toString());
    try (var node = BrokerProcess.launch(all)) {
      assertThat(node.awaitExit(Duration.ofSeconds(60))).isEqualTo(2);
      String log = node.log();
      assertThat(errorLinesWithoutTrace(log)).singleElement().asString().endsWith("boot failed: " + error);
      assertThat(data.resolve("pg")).doesNotExist();
      return log;
    }
  }

  @Test
  void aPortThatIsNotANumberStopsTheBootWithExitTwoBeforePostgresqlStarts() throws Exception {
    refusedBeforePostgresql(Map.of("PORT", "abc"), "PORT='abc' is not accepted: an integer from 1 to 65535");
  }

  @Test
  void aMalformedEncryptionKeyStopsTheBootWithExitTwoBeforePostgresqlStarts() throws Exception {
    refusedBeforePostgresql(Map.of("QUEEN_ENCRYPTION_KEY", "zz"), "QUEEN_ENCRYPTION_KEY (a value of 2 characters, "
        + "not shown) is not accepted: 64 hexadecimal characters [0-9a-fA-F] (a 32-byte AES-256 key)");
  }

  /** Issue 34: the port is checked before the embedded PostgreSQL is initialised (it used to be found ~5 s later). */
  @Test
  void aBusyPortIsNamedInOneLineWithExitTwoBeforePostgresqlStarts() throws Exception {
    try (var holder = new ServerSocket()) {
      holder.bind(new InetSocketAddress("127.0.0.1", TestNode.freePort()));
      int port = holder.getLocalPort();
      assertThat(refusedBeforePostgresql(Map.of("PORT", Integer.toString(port)),
          "port " + port + " on 127.0.0.1 is already in use (PORT)"))
          .doesNotContain("PostgreSQL").doesNotContain(" WARN ");
    }
  }

  /** Issue 34: DB_POOL_SIZE=0 used to boot with a pool of 1; the README promises exit 2. */
  @Test
  void aPoolSizeOfZeroStopsTheBootWithExitTwoBeforePostgresqlStarts() throws Exception {
    refusedBeforePostgresql(Map.of("DB_POOL_SIZE", "0"),
        "DB_POOL_SIZE='0' is not accepted: an integer from 1 to 10000");
  }

  @Test
  void anUnreachablePostgresqlIsRetriedWithOneLinePerAttemptAndGivesUpWithExitOne() throws Exception {
    int pgPort = TestNode.freePort(); // nothing listens there
    try (var node = BrokerProcess.launch(sharedDb(Map.of("PG_HOST", "127.0.0.1", "PG_PORT", Integer.toString(pgPort),
        // 6 s: room for two failed attempts (0.5 s and 1 s apart) even when a loaded machine makes the first one slow
        "QUEEN_DB_CONNECT_TIMEOUT_S", "6")))) {
      assertThat(node.awaitExit(Duration.ofSeconds(60))).isEqualTo(1);
      String log = node.log();
      assertThat(log.lines().filter(l -> l.contains("PostgreSQL 127.0.0.1:" + pgPort + "/")
          && l.contains("not reachable (attempt ")).count()).isGreaterThan(1);
      assertThat(errorLinesWithoutTrace(log)).singleElement().asString()
          .contains("boot failed: PostgreSQL 127.0.0.1:" + pgPort + "/")
          .contains("(QUEEN_DB_CONNECT_TIMEOUT_S=6)");
    }
  }

  @Test
  void aPostgresqlThatComesUpWhileTheNodeRetriesLetsTheNodeBootAndLogReady() throws Exception {
    int pgPort = TestNode.freePort();
    Path pgDir = Files.createTempDirectory("queen-boot-late-pg");
    var env = sharedDb(Map.of("PG_HOST", "127.0.0.1", "PG_PORT", Integer.toString(pgPort), "PG_DATABASE",
        "postgres", "PG_USER", "postgres", "PG_PASSWORD", "postgres"));
    try (var node = BrokerProcess.launch(env)) {
      await().atMost(Duration.ofSeconds(60)).until(() -> node.log().contains("not reachable (attempt 2)"));
      assertThat(node.alive()).isTrue();
      try (var pg = EmbeddedPostgres.builder().setDataDirectory(pgDir).setCleanDataDirectory(true).setPort(pgPort)
          .setPGStartupWait(Duration.ofSeconds(60)).setServerConfig("listen_addresses", "127.0.0.1")
          .setServerConfig("max_connections", "60").start()) {
        node.awaitHealthy(Duration.ofSeconds(120));
        String log = node.log();
        assertThat(log).contains("PostgreSQL 127.0.0.1:" + pgPort + "/postgres is reachable (attempt ");
        assertThat(log.lines().filter(l -> l.contains(" ready: ")).toList()).singleElement().asString()
            .contains("at http://127.0.0.1:" + node.port())
            .contains("data dir " + Path.of(env.get("QUEEN_DATA_DIR")).toAbsolutePath().normalize())
            .contains("PostgreSQL 127.0.0.1:" + pgPort + "/postgres")
            .contains("cluster none (standalone)");
        assertThat(log.lines().filter(l -> l.contains(" WARN ") && !l.contains("not reachable (attempt ")).toList())
            .isEmpty(); // no spurious warning, such as "This Gauge has been already registered"
        node.close();
      }
    }
  }
}
