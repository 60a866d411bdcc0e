package io.queenvertx.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * The embedded server's processes, the postmaster and every backend, run with glibc's malloc told to keep freed
 * memory ({@link ServerMalloc#TUNABLES}), on a fresh folder and again after a restart on the same one.
 */
class EmbeddedMallocIT {
  /** The process's environment block as it is in its memory now, entries separated by NUL. */
  static String environmentOf(long pid) throws Exception {
    return new String(Files.readAllBytes(Path.of("/proc", Long.toString(pid), "environ")), StandardCharsets.UTF_8);
  }

  /** The environment of the backend serving a fresh connection, read while the connection is open. */
  static String backendEnvironment(EmbeddedDatabase db) throws Exception {
    var props = new Properties();
    props.setProperty("user", "postgres");
    props.setProperty("password", db.connection().password());
    try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + db.port() + "/postgres", props);
         var st = c.createStatement(); var rs = st.executeQuery("SELECT pg_backend_pid()")) {
      rs.next();
      return environmentOf(rs.getLong(1));
    }
  }

  /**
   * glibc reads GLIBC_TUNABLES at start and, as it parses the value, leaves a NUL after each tunable in the process's
   * own copy: the block then holds {@code GLIBC_TUNABLES=<first>} and the next tunables as entries of their own, which
   * also shows that glibc took them.
   */
  static void assertTuned(Path dataDir, EmbeddedDatabase db) throws Exception {
    String[] tunables = ServerMalloc.TUNABLES.split(":");
    long postmaster = Long.parseLong(Files.readAllLines(dataDir.resolve("pg/postmaster.pid")).get(0).trim());
    for (String env : List.of(environmentOf(postmaster), backendEnvironment(db))) {
      assertThat(env).contains("GLIBC_TUNABLES=" + tunables[0]);
      for (String t : tunables) assertThat(env).contains(t);
    }
  }

  @Test
  void everyServerProcessKeepsFreedMemoryOnAFreshFolderAndAfterARestart() throws Exception {
    Path dataDir = Files.createTempDirectory("queen-embpg-malloc").resolve("data");
    try (var db = EmbeddedDatabase.start(dataDir, 0, 50, 32)) {
      assertTuned(dataDir, db);
    }
    // the binary is wrapped once: a restart finds the wrapper in place and runs it as it is
    try (var db = EmbeddedDatabase.start(dataDir, 0, 50, 32)) {
      assertTuned(dataDir, db);
      try (var dirs = Files.list(dataDir.resolve("pg-bin"))) {
        Path bin = dirs.filter(Files::isDirectory).findFirst().orElseThrow().resolve("bin");
        assertThat(Files.readString(bin.resolve("postgres"))).startsWith("#!/bin/sh");
        assertThat(Files.isExecutable(bin.resolve("postgres.real"))).isTrue();
      }
    }
  }
}
