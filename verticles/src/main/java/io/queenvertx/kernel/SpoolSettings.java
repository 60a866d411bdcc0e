package io.queenvertx.kernel;

import java.nio.file.Path;

/**
 * The push spool: files holding the pushes PostgreSQL could not take (maintenance mode, failed writes) until they
 * are replayed.
 *
 * @param dir {@code FILE_BUFFER_DIR} (the data dir's {@code buffers}; made absolute)
 * @param flushMs {@code FILE_BUFFER_FLUSH_MS} (100, at least 10): spool drain period
 * @param eventsPerFile {@code FILE_BUFFER_EVENTS_PER_FILE} (10000, at least 1): events per spool file
 */
public record SpoolSettings(Path dir, long flushMs, int eventsPerFile) {
  public static final long DEFAULT_FLUSH_MS = 100;
  public static final int DEFAULT_EVENTS_PER_FILE = 10_000;

  static SpoolSettings from(ConfigReader e, Path dataDir) {
    String dir = e.str("FILE_BUFFER_DIR", "");
    return new SpoolSettings(
        dir.isEmpty() ? dataDir.resolve("buffers") : Path.of(dir).toAbsolutePath(),
        e.lng("FILE_BUFFER_FLUSH_MS", DEFAULT_FLUSH_MS, 10, Long.MAX_VALUE),
        e.integer("FILE_BUFFER_EVENTS_PER_FILE", DEFAULT_EVENTS_PER_FILE, 1, Integer.MAX_VALUE));
  }
}
