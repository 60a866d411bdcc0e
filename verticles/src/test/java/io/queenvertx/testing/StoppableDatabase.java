package io.queenvertx.testing;

import io.queenvertx.kernel.Config;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * An embedded PostgreSQL of its own (not the shared template clone of {@link TestDatabase}) that a test stops under a
 * running node and starts again on the same port and data folder: a database outage.
 */
public final class StoppableDatabase implements AutoCloseable {
  private final Path dir;
  private final int port;
  private EmbeddedPostgres pg;

  public StoppableDatabase() throws IOException {
    this.dir = Files.createTempDirectory("queen-stoppable-pg");
    this.port = TestNode.freePort();
    start();
  }

  /** How a node reaches it. */
  public Config.Database config() {
    return new Config.Database("127.0.0.1", port, "postgres", "postgres", "postgres", false);
  }

  /** Starts it again after {@link #stop}, with the data it had. */
  public void start() throws IOException {
    pg = EmbeddedPostgres.builder().setDataDirectory(dir).setCleanDataDirectory(false).setPort(port).start();
  }

  /** Stops the server: connections break and new ones are refused until {@link #start}. */
  public void stop() throws IOException {
    if (pg != null) pg.close();
    pg = null;
  }

  @Override
  public void close() throws IOException {
    stop();
  }
}
