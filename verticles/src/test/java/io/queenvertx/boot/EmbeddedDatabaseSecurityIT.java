package io.queenvertx.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.queenvertx.testing.BrokerProcess;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * The embedded PostgreSQL admits only the node: SCRAM password over loopback, no trust, no socket, secrets owner-only;
 * an old trusting folder is upgraded in place; and the server does not outlive a node killed with SIGKILL.
 */
class EmbeddedDatabaseSecurityIT {

  private static Connection connect(int port, String password) throws SQLException {
    var props = new Properties();
    props.setProperty("user", "postgres");
    if (password != null) props.setProperty("password", password);
    props.setProperty("connectTimeout", "10");
    return DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + port + "/postgres", props);
  }

  private static long queryLong(Connection c, String sql) throws SQLException {
    try (var st = c.createStatement(); var rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static String queryString(Connection c, String sql) throws SQLException {
    try (var st = c.createStatement(); var rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getString(1);
    }
  }

  /** This JVM's watchdog processes for the server on {@code dataDir/pg}. */
  private static java.util.List<ProcessHandle> watchdogsOf(Path dataDir) {
    String pgData = dataDir.resolve("pg").toString();
    return ProcessHandle.current().children().filter(ProcessHandle::isAlive)
        .filter(h -> java.util.Arrays.asList(h.info().arguments().orElse(new String[0])).contains(pgData))
        .filter(h -> String.join(" ", h.info().arguments().orElse(new String[0])).contains("queen-pg-watchdog"))
        .toList();
  }

  private static void assertLockedDown(Path dataDir, int port) throws Exception {
    Path passwordFile = dataDir.resolve(EmbeddedDatabase.PASSWORD_FILE);
    String password = Files.readString(passwordFile).trim();
    assertThat(password).hasSizeGreaterThanOrEqualTo(32);
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(passwordFile))).isEqualTo("rw-------");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dataDir.resolve("pg"))))
        .isEqualTo("rwx------");
    String hba = Files.readString(dataDir.resolve("pg/pg_hba.conf"));
    assertThat(hba.toLowerCase()).doesNotContain("trust");
    assertThat(hba.lines().filter(l -> !l.isBlank() && !l.startsWith("#")))
        .isNotEmpty()
        .allSatisfy(l -> assertThat(l).startsWith("host").endsWith("scram-sha-256"));

    assertThatThrownBy(() -> connect(port, null).close()).isInstanceOf(SQLException.class)
        .hasMessageContaining("password");
    assertThatThrownBy(() -> connect(port, password + "x").close()).isInstanceOf(SQLException.class)
        .hasMessageContaining("password authentication failed");
    try (var c = connect(port, password)) {
      assertThat(queryLong(c, "SELECT 1")).isEqualTo(1);
      assertThat(queryString(c, "SHOW listen_addresses")).isEqualTo("127.0.0.1");
      assertThat(queryString(c, "SHOW unix_socket_directories")).isEmpty();
      assertThat(queryString(c, "SELECT rolpassword FROM pg_authid WHERE rolname = 'postgres'"))
          .startsWith("SCRAM-SHA-256$");
    }
  }

  @Test
  void aFreshFolderAdmitsOnlyTheStoredPasswordOverScram() throws Exception {
    Path dataDir = Files.createTempDirectory("queen-embpg").resolve("data");
    try (var db = EmbeddedDatabase.start(dataDir, 0, 50, 32)) {
      assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dataDir))).isEqualTo("rwx------");
      assertLockedDown(dataDir, db.port());
      String password = Files.readString(dataDir.resolve(EmbeddedDatabase.PASSWORD_FILE)).trim();
      assertThat(db.connection().password()).isEqualTo(password);
      assertThat(watchdogsOf(dataDir)).hasSize(1);
      try (var c = connect(db.port(), password); var st = c.createStatement()) {
        st.execute("CREATE TABLE kept (n int)");
        st.execute("INSERT INTO kept SELECT generate_series(1, 5)");
      }
    }
    // a clean close also ends the watchdog
    await().atMost(Duration.ofSeconds(10)).until(() -> watchdogsOf(dataDir).isEmpty());
    String before = Files.readString(dataDir.resolve(EmbeddedDatabase.PASSWORD_FILE));
    // a restart reuses the stored password and the data
    try (var db = EmbeddedDatabase.start(dataDir, 0, 50, 32)) {
      assertThat(Files.readString(dataDir.resolve(EmbeddedDatabase.PASSWORD_FILE))).isEqualTo(before);
      assertLockedDown(dataDir, db.port());
      try (var c = connect(db.port(), before.trim())) {
        assertThat(queryLong(c, "SELECT count(*) FROM kept")).isEqualTo(5);
      }
    }
  }

  /** A folder as the previous EmbeddedDatabase left it: zonky's defaults, initdb -A trust, no password; 42 rows. */
  private static Path oldTrustingFolder(String prefix) throws Exception {
    Path dataDir = Files.createTempDirectory(prefix);
    var old = EmbeddedPostgres.builder()
        .setDataDirectory(dataDir.resolve("pg"))
        .setCleanDataDirectory(false)
        .setRegisterShutdownHook(false)
        .setOverrideWorkingDirectory(dataDir.resolve("pg-bin").toFile())
        .setServerConfig("listen_addresses", "127.0.0.1")
        .start();
    try (var c = connect(old.getPort(), null); var st = c.createStatement()) {
      st.execute("CREATE TABLE survivors (n int)");
      st.execute("INSERT INTO survivors SELECT generate_series(1, 42)");
    } finally {
      old.close();
    }
    assertThat(Files.readString(dataDir.resolve("pg/pg_hba.conf"))).contains("trust");
    return dataDir;
  }

  private static void assertSurvivors(EmbeddedDatabase db) throws Exception {
    try (var c = connect(db.port(), db.connection().password())) {
      assertThat(queryLong(c, "SELECT count(*) FROM survivors")).isEqualTo(42);
      assertThat(queryLong(c, "SELECT sum(n) FROM survivors")).isEqualTo(42L * 43 / 2);
    }
  }

  @Test
  void aFolderInitialisedTheOldTrustingWayIsUpgradedInPlaceKeepingItsRows() throws Exception {
    Path dataDir = oldTrustingFolder("queen-embpg-old");
    assertThat(dataDir.resolve(EmbeddedDatabase.PASSWORD_FILE)).doesNotExist();
    try (var db = EmbeddedDatabase.start(dataDir, 0, 50, 32)) {
      assertLockedDown(dataDir, db.port());
      assertSurvivors(db);
    }
  }

  @Test
  void aPasswordFileWrittenBeforeAnInterruptedUpgradeIsStillAppliedToTheServer() throws Exception {
    // the node died after storing the new password and before setting it: the file exists, pg_hba.conf still trusts
    Path dataDir = oldTrustingFolder("queen-embpg-half");
    Path passwordFile = dataDir.resolve(EmbeddedDatabase.PASSWORD_FILE);
    Files.createFile(passwordFile, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    Files.writeString(passwordFile, "Interrupted0Upgrade0Password0Of0Forty0Ch\n");
    try (var db = EmbeddedDatabase.start(dataDir, 0, 50, 32)) {
      assertThat(db.connection().password()).isEqualTo("Interrupted0Upgrade0Password0Of0Forty0Ch");
      assertLockedDown(dataDir, db.port());
      assertSurvivors(db);
    }
  }

  @Test
  void aNodeKilledWithSigkillTakesItsEmbeddedPostgresDownWithIt() throws Exception {
    Path dir = Files.createTempDirectory("queen-embpg-kill");
    Path dataDir = dir.resolve("data");
    var env = Map.of("QUEEN_DATA_DIR", dataDir.toString(), "FILE_BUFFER_DIR", dir.resolve("spool").toString(),
        "QUEEN_BIND_ADDR", "127.0.0.1", "DB_POOL_SIZE", "8", "QUEEN_HTTP_INSTANCES", "1",
        "QUEEN_EMBEDDED_PG_SHARED_BUFFERS_MB", "128");
    ProcessHandle postmaster = null;
    try (var broker = BrokerProcess.start(env)) {
      long pid = Long.parseLong(Files.readAllLines(dataDir.resolve("pg/postmaster.pid")).get(0).trim());
      postmaster = ProcessHandle.of(pid).orElseThrow();
      assertThat(postmaster.isAlive()).isTrue();
      assertThat(postmaster.info().command().orElse("")).contains("postgres");

      broker.kill9();

      var server = postmaster;
      await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100)).until(() -> !server.isAlive());
      // a fast shutdown, not a crash: the server removed its pid file on the way out
      await().atMost(Duration.ofSeconds(5)).until(() -> !Files.exists(dataDir.resolve("pg/postmaster.pid")));
    } finally {
      // should the watchdog fail, do not leave the test's server behind
      if (postmaster != null && postmaster.isAlive()) {
        postmaster.destroy();
        postmaster.onExit().get(30, java.util.concurrent.TimeUnit.SECONDS);
      }
    }
    // and the folder starts again for the next node
    try (var db = EmbeddedDatabase.start(dataDir, 0, 50, 32); var c = connect(db.port(), db.connection().password())) {
      assertThat(queryLong(c, "SELECT count(*) FROM queen.schema_history WHERE success")).isGreaterThan(0);
    }
  }
}
