package io.queenvertx.kernel;

import java.nio.file.Path;
import java.util.Optional;

/**
 * The PostgreSQL the node uses, external or embedded, and its connection pool. How long boot waits for an external
 * one is {@link StartupSettings}.
 *
 * @param connection {@code PG_URL} (a libpq URI), {@code PG_HOST} (one host or a comma-separated list; unset with
 *     {@code PG_URL}: embedded), {@code PG_PORT} (5432; one port for every host, or one per host), {@code PG_DATABASE}
 *     then {@code PG_DB} ("postgres"), {@code PG_USER} ("postgres"), {@code PG_PASSWORD} ("postgres", taken as given),
 *     {@code PG_USE_SSL} (off), {@code PG_TARGET_SESSION_ATTRS} ({@code read-write} with several hosts, else
 *     {@code any}), read by {@link PgLocation}; empty when neither {@code PG_URL} nor {@code PG_HOST} is set, until
 *     the node has started its embedded PostgreSQL and put that one here ({@link Config#withDatabase})
 * @param dataDir {@code QUEEN_DATA_DIR} ("./data", made absolute): the embedded PostgreSQL's files and the default
 *     spool folder
 * @param embeddedPort {@code QUEEN_EMBEDDED_PG_PORT} (0: a free port; 0..65535): port of the embedded PostgreSQL
 * @param embeddedSharedBuffersMb {@code QUEEN_EMBEDDED_PG_SHARED_BUFFERS_MB} (RAM / 8 within 128..1024; at least
 *     16): {@code shared_buffers} of the embedded PostgreSQL
 * @param poolSize {@code DB_POOL_SIZE} (160, 1..10000): connections in the node's pool (the embedded PostgreSQL
 *     allows this many and 40 more, at least 200)
 * @param statementTimeoutMs {@code QUEEN_STMT_TIMEOUT_MS} (30000, 0..2^31-1; 0: none): {@code statement_timeout} of
 *     the pool's sessions
 * @param applySchema {@code QUEEN_APPLY_SCHEMA} (on): apply the migrations at boot
 * @param readHosts {@code PG_READ_HOSTS} (none): read replicas for the read-only routes ({@link PgLocation})
 * @param readMaxLagMs {@code QUEEN_READ_MAX_LAG_MS} (5000, 0..2^31-1): a replica further behind than this is
 *     bypassed, reads go to the primary
 * @param checkIntervalMs {@code QUEEN_PG_CHECK_INTERVAL_MS} (1000, 100..60000): how often a node following a
 *     failover ({@code read-write}) or reading from replicas asks each server its role and position
 * @param checkTimeoutMs {@code QUEEN_PG_CHECK_TIMEOUT_MS} (3000, 100..60000): a server that does not answer that
 *     question within this long is taken as gone (its connections are closed)
 * @param failoverWaitMs {@code QUEEN_PG_FAILOVER_WAIT_MS} (5000, 0..600000): after the primary is lost, how long a
 *     call waits for the next one (and a call cut by the loss is run again on it) before it fails
 */
public record PostgresSettings(Optional<Config.Database> connection, Path dataDir, int embeddedPort,
                               int embeddedSharedBuffersMb, int poolSize, int statementTimeoutMs,
                               boolean applySchema, java.util.List<Config.Host> readHosts, int readMaxLagMs,
                               int checkIntervalMs, int checkTimeoutMs, int failoverWaitMs) {
  public static final int DEFAULT_PG_PORT = 5432;
  public static final String DEFAULT_DATA_DIR = "./data";
  public static final int DEFAULT_POOL_SIZE = 160;
  public static final int DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;
  /** The floor of {@code QUEEN_EMBEDDED_PG_SHARED_BUFFERS_MB}. */
  public static final int MIN_SHARED_BUFFERS_MB = 16;
  /** The ceiling of {@code DB_POOL_SIZE}. */
  public static final int MAX_POOL_SIZE = 10_000;
  public static final int DEFAULT_READ_MAX_LAG_MS = 5_000;
  public static final int DEFAULT_CHECK_INTERVAL_MS = 1_000;
  public static final int DEFAULT_CHECK_TIMEOUT_MS = 3_000;
  public static final int DEFAULT_FAILOVER_WAIT_MS = 5_000;

  static PostgresSettings from(ConfigReader e) {
    Optional<Config.Database> db = PgLocation.database(e);
    return new PostgresSettings(
        db,
        Path.of(e.str("QUEEN_DATA_DIR", DEFAULT_DATA_DIR)).toAbsolutePath().normalize(),
        e.integer("QUEEN_EMBEDDED_PG_PORT", 0, 0, 65535),
        e.integer("QUEEN_EMBEDDED_PG_SHARED_BUFFERS_MB", defaultSharedBuffersMb(), MIN_SHARED_BUFFERS_MB,
            Integer.MAX_VALUE),
        e.integer("DB_POOL_SIZE", DEFAULT_POOL_SIZE, 1, MAX_POOL_SIZE),
        e.integer("QUEEN_STMT_TIMEOUT_MS", DEFAULT_STATEMENT_TIMEOUT_MS, 0, Integer.MAX_VALUE),
        e.bool("QUEEN_APPLY_SCHEMA", true),
        PgLocation.readHosts(e, db),
        e.integer("QUEEN_READ_MAX_LAG_MS", DEFAULT_READ_MAX_LAG_MS, 0, Integer.MAX_VALUE),
        e.integer("QUEEN_PG_CHECK_INTERVAL_MS", DEFAULT_CHECK_INTERVAL_MS, 100, 60_000),
        e.integer("QUEEN_PG_CHECK_TIMEOUT_MS", DEFAULT_CHECK_TIMEOUT_MS, 100, 60_000),
        e.integer("QUEEN_PG_FAILOVER_WAIT_MS", DEFAULT_FAILOVER_WAIT_MS, 0, 600_000));
  }

  /** The same settings connecting to {@code db}. */
  public PostgresSettings withConnection(Config.Database db) {
    return new PostgresSettings(Optional.of(db), dataDir, embeddedPort, embeddedSharedBuffersMb, poolSize,
        statementTimeoutMs, applySchema, readHosts, readMaxLagMs, checkIntervalMs, checkTimeoutMs, failoverWaitMs);
  }

  /**
   * An eighth of the machine's memory, between 128 MiB and 1 GiB. What a push touches per segment is the last index
   * page of each partition it writes (segments and transaction-id sidecar); with thousands of active partitions those
   * pages are a working set of their own, and once appended segment pages push them out of a small buffer pool every
   * write reads them back from the kernel.
   */
  static int defaultSharedBuffersMb() {
    long total = 0;
    if (java.lang.management.ManagementFactory.getOperatingSystemMXBean()
        instanceof com.sun.management.OperatingSystemMXBean os) {
      total = os.getTotalMemorySize();
    }
    long eighthMb = total / 8 / (1024 * 1024);
    return (int) Math.max(128, Math.min(1024, eighthMb));
  }
}
