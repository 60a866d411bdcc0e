package io.queenvertx.faults;

import io.queenvertx.testing.TestNode;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A PostgreSQL the fault suite owns and may stop: zonky's embedded server on its own data folder and a fixed port, so
 * a broker configured once keeps reaching it across stops and starts. Never the shared test database.
 *
 * <p>{@link #stopFast()} is PostgreSQL's fast shutdown (sessions are cut, a checkpoint is written); {@link
 * #stopImmediate()} sends the postmaster SIGQUIT, PostgreSQL's immediate shutdown, after which the next start runs
 * crash recovery. {@link #start()} reuses the folder.
 */
final class FaultPostgres implements AutoCloseable {
  private final Path dataDir;
  private final int port;
  private EmbeddedPostgres server;

  private FaultPostgres(Path dataDir, int port) {
    this.dataDir = dataDir;
    this.port = port;
  }

  /** Initialises a new cluster under {@code parent} on a free port and starts it. */
  static FaultPostgres create(Path parent) throws IOException {
    var pg = new FaultPostgres(parent.resolve("pg"), TestNode.freePort());
    pg.start();
    return pg;
  }

  int port() {
    return port;
  }

  synchronized boolean running() {
    return server != null;
  }

  /** Starts the server on the same folder and port (initdb only the first time); no-op when it runs. */
  synchronized void start() throws IOException {
    if (server != null) return;
    server = EmbeddedPostgres.builder()
        .setDataDirectory(dataDir)
        .setCleanDataDirectory(false)
        .setPort(port)
        .setPGStartupWait(Duration.ofSeconds(60))
        .setServerConfig("listen_addresses", "127.0.0.1")
        .setServerConfig("max_connections", "100")
        .setServerConfig("shared_buffers", "64MB")
        // As a production server: a commit the broker reports is flushed first. zonky's default is
        // synchronous_commit=off, under which an immediate shutdown loses the last commits the broker answered
        // queued for (scenario 2 saw 16 and 28 such items before this was set).
        .setServerConfig("fsync", "on")
        .setServerConfig("synchronous_commit", "on")
        .start();
  }

  /** Fast shutdown ({@code pg_ctl stop -m fast}): every session is cut. */
  synchronized void stopFast() {
    if (server == null) return;
    try {
      server.close();
    } catch (IOException e) {
      throw new IllegalStateException("PostgreSQL did not stop", e);
    } finally {
      server = null;
    }
  }

  /** Immediate shutdown: SIGQUIT to the postmaster, no checkpoint; the next start recovers from the WAL. */
  synchronized void stopImmediate() throws Exception {
    if (server == null) return;
    long pid = postmasterPid();
    // the shell's own kill, so no procps package is needed
    new ProcessBuilder("sh", "-c", "kill -QUIT " + pid).inheritIO().start().waitFor(10, TimeUnit.SECONDS);
    var handle = ProcessHandle.of(pid);
    if (handle.isPresent()) handle.get().onExit().get(30, TimeUnit.SECONDS);
    // Releases zonky's folder lock; its own pg_ctl stop finds no server and only logs that.
    stopFast();
  }

  private long postmasterPid() throws IOException {
    return Long.parseLong(Files.readAllLines(dataDir.resolve("postmaster.pid")).get(0).trim());
  }

  @Override
  public void close() {
    stopFast();
  }
}
