package io.queenvertx.boot;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The PostgreSQL a node starts for itself when no {@code PG_HOST} is configured. Its files live under
 * {@code QUEEN_DATA_DIR/pg}, so messages survive a restart of the node.
 *
 * <p>PostgreSQL refuses to run as root. The zonky launcher detects uid 0 and runs initdb and the server inside a user
 * namespace ({@code unshare -U}), where the process is unprivileged; the files stay owned by the invoking user outside,
 * so the same data folder works across restarts as root and as an ordinary user.
 */
public final class EmbeddedDatabase implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(EmbeddedDatabase.class);

  private final EmbeddedPostgres postgres;

  private EmbeddedDatabase(EmbeddedPostgres postgres) {
    this.postgres = postgres;
  }

  /**
   * Starts (initialising on first use) the database under {@code dataDir/pg}; {@code port} 0 picks a free one,
   * {@code sharedBuffersMb} sizes its buffer pool.
   */
  public static EmbeddedDatabase start(Path dataDir, int port, int maxConnections, int sharedBuffersMb)
      throws IOException {
    Path pgData = dataDir.resolve("pg");
    Files.createDirectories(dataDir);
    // zonky decides between initdb and reuse by whether the folder exists, so a half-initialised folder (a crash
    // during the very first initdb) would never start: only reuse one that has PG_VERSION.
    if (Files.isDirectory(pgData) && !Files.exists(pgData.resolve("PG_VERSION"))) {
      log.warn("embedded PostgreSQL folder {} has no PG_VERSION; re-initialising it", pgData);
      deleteTree(pgData);
    }
    stopOrphan(pgData);
    var builder = EmbeddedPostgres.builder()
        .setDataDirectory(pgData)
        .setCleanDataDirectory(false)
        .setRegisterShutdownHook(false)
        .setOverrideWorkingDirectory(dataDir.resolve("pg-bin").toFile())
        .setPGStartupWait(Duration.ofSeconds(60))
        .setServerConfig("max_connections", Integer.toString(maxConnections))
        .setServerConfig("listen_addresses", "127.0.0.1")
        .setServerConfig("shared_buffers", sharedBuffersMb + "MB")
        .setServerConfig("fsync", "on")
        .setServerConfig("synchronous_commit", "on");
    if (port > 0) builder.setPort(port);
    var pg = builder.start();
    log.info("embedded PostgreSQL running on 127.0.0.1:{} with data in {} (shared_buffers {} MB)", pg.getPort(), pgData,
        sharedBuffersMb);
    return new EmbeddedDatabase(pg);
  }

  public Config.Database connection() {
    return new Config.Database("127.0.0.1", postgres.getPort(), "postgres", "postgres", "postgres", false);
  }

  public int port() {
    return postgres.getPort();
  }

  @Override
  public void close() {
    try {
      postgres.close();
      log.info("embedded PostgreSQL stopped");
    } catch (IOException e) {
      log.warn("embedded PostgreSQL did not stop cleanly", e);
    }
  }

  /**
   * A node killed with SIGKILL leaves its PostgreSQL running on the data folder, which then refuses a second
   * postmaster. Stop the orphan (fast shutdown; it has no clients left) before starting again; its committed data is
   * safe, which is what lets a client that got {@code queued} find its message after the crash.
   */
  private static void stopOrphan(Path pgData) throws IOException {
    Path pidFile = pgData.resolve("postmaster.pid");
    if (!Files.exists(pidFile)) return;
    long pid;
    try {
      pid = Long.parseLong(Files.readAllLines(pidFile).get(0).trim());
    } catch (RuntimeException e) {
      return;
    }
    var handle = ProcessHandle.of(pid);
    if (handle.isEmpty() || !handle.get().isAlive()) return;
    String cmd = handle.get().info().command().orElse("");
    if (!cmd.contains("postgres")) return;
    log.warn("stopping orphaned embedded PostgreSQL (pid {}) left by a previous node", pid);
    try {
      new ProcessBuilder("kill", "-INT", Long.toString(pid)).inheritIO().start().waitFor();
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (handle.get().isAlive() && System.nanoTime() < deadline) Thread.sleep(100);
      if (handle.get().isAlive()) handle.get().destroyForcibly();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void deleteTree(Path p) throws IOException {
    try (var walk = Files.walk(p)) {
      for (Path x : walk.sorted(java.util.Comparator.reverseOrder()).toList()) Files.deleteIfExists(x);
    }
  }
}
