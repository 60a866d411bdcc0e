package io.queenvertx.boot;

import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * The node's configuration: one immutable record built once from the environment, with Queen's variable names and
 * defaults (shared/spec/API.md §7). This is the only class that reads {@code System.getenv}; everything else receives
 * a {@code Config}.
 *
 * <p>Parsing is strict: booleans accept {@code true/false, 1/0, yes/no, on/off} (trimmed, case-insensitive); an
 * empty or unset variable means the default; an integer or number that does not parse, or is out of its range, and a
 * malformed {@code QUEEN_ENCRYPTION_KEY} throw {@link ConfigException}, whose one-line message names the variable,
 * the value and what is accepted. Parsing happens before anything starts (no PostgreSQL, no port).
 */
public record Config(
    int port,
    String bindAddress,
    Optional<Database> database,
    Path dataDir,
    int embeddedPgPort,
    /** QUEEN_EMBEDDED_PG_SHARED_BUFFERS_MB: shared_buffers of the embedded PostgreSQL (default: RAM / 8, 128..1024). */
    int embeddedPgSharedBuffersMb,
    int dbPoolSize,
    int statementTimeoutMs,
    long maxBodyBytes,
    boolean applySchema,
    String serverId,
    String version,
    // long poll
    long popDefaultTimeoutMs,
    String defaultSubscriptionMode,
    long popWaitInitialIntervalMs,
    int popWaitBackoffThreshold,
    double popWaitBackoffMultiplier,
    long popWaitMaxIntervalMs,
    // engine
    int zstdLevel,
    int segmentCacheEntries,
    /** QUEEN_DEDUP_CACHE_MB, 0 when QUEEN_DEDUP_CACHE is 0: the broker dedup cache's budget (ENGINE.md §3.6). */
    int dedupCacheMb,
    /** QUEEN_PUSH_BUNDLES_IN_FLIGHT: concurrent push transactions of the log writer (each one commit). */
    int pushBundlesInFlight,
    /** QUEEN_PUSH_PARTITIONS_PER_BUNDLE: partitions (segments) written by one push transaction at most. */
    int pushPartitionsPerBundle,
    // retention and spool
    long retentionIntervalMs,
    int retentionBatchSize,
    Path fileBufferDir,
    long fileBufferFlushMs,
    int fileBufferEventsPerFile,
    // security
    Optional<String> encryptionKeyHex,
    boolean tenancyHeader,
    Jwt jwt,
    // cluster
    boolean clustered,
    String clusterMembers,
    int clusterPort,
    /** QUEEN_CLUSTER_BUS_PORT: TCP port of the clustered event bus; 0 picks a free one. */
    int clusterBusPort,
    String clusterInterface,
    String clusterName,
    Path clusterConfig,
    int httpInstances,
    long cacheRefreshIntervalMs,
    boolean accessLog,
    long redriveStaleMs,
    Map<String, java.util.UUID> webhookApiKeys,
    /** Network exposure: HTTP connection limits and what the public metrics reveal. */
    Exposure exposure,
    /** How the node waits for what it needs at boot. */
    Startup startup,
    /** Per-minute operation statistics: their flush and retention. */
    Stats stats) {

  public static final String VERSION = "0.1.0";

  /** An external PostgreSQL; absent when {@code PG_HOST} is unset, in which case the node embeds one. */
  public record Database(String host, int port, String database, String user, String password, boolean ssl) {}

  /**
   * Network exposure of a node.
   *
   * @param idleTimeoutS {@code QUEEN_HTTP_IDLE_TIMEOUT_S} (60; 0 turns it off): a connection with no request in
   *     flight and no bytes arriving is closed after this many seconds. A parked long poll is a request in flight,
   *     so it is never cut by this timeout, whatever its own timeout.
   * @param headerTimeoutMs {@code QUEEN_HTTP_HEADER_TIMEOUT_MS} (10000; 0 turns it off): once the first byte of a
   *     request arrives, its request line and headers must be complete within this time, else the connection is
   *     closed (slowloris); re-armed for every request of a keep-alive connection.
   * @param maxConnections {@code QUEEN_HTTP_MAX_CONNECTIONS} (default three quarters of the process's open-file
   *     limit, 10000 when unknown; 0 means no cap): open HTTP connections per node.
   * @param hideQueueMetrics {@code QUEEN_METRICS_HIDE_QUEUES} (default: on when {@code QUEEN_TENANCY_HEADER} is
   *     on, else off): the public {@code /metrics/prometheus} leaves out the per-queue series (queue names) and
   *     gives node-wide totals instead.
   */
  public record Exposure(int idleTimeoutS, long headerTimeoutMs, int maxConnections, boolean hideQueueMetrics) {
    public static final int DEFAULT_IDLE_TIMEOUT_S = 60;
    public static final long DEFAULT_HEADER_TIMEOUT_MS = 10_000;
    /** Used when the open-file limit cannot be read. */
    public static final int FALLBACK_MAX_CONNECTIONS = 10_000;

    /** Three quarters of the open-file limit: the rest stays for the pool, the spool, jars and the cluster. */
    static int defaultMaxConnections() {
      if (java.lang.management.ManagementFactory.getOperatingSystemMXBean()
          instanceof com.sun.management.UnixOperatingSystemMXBean os) {
        long max = os.getMaxFileDescriptorCount();
        if (max > 0) return (int) Math.max(64, Math.min(Integer.MAX_VALUE, max / 4 * 3));
      }
      return FALLBACK_MAX_CONNECTIONS;
    }
  }

  /**
   * Boot behaviour.
   *
   * @param dbConnectTimeoutS {@code QUEEN_DB_CONNECT_TIMEOUT_S} (180; 0 tries once): how long an external PostgreSQL
   *     that does not accept connections at boot is retried (backoff 0.5 s doubling to 5 s, one log line per attempt)
   *     before the node gives up and exits 1. Only when the schema is applied at boot ({@code QUEEN_APPLY_SCHEMA},
   *     the default): a node with {@code QUEEN_APPLY_SCHEMA=false} boots without waiting and spools pushes.
   */
  public record Startup(int dbConnectTimeoutS) {
    public static final int DEFAULT_DB_CONNECT_TIMEOUT_S = 180;
  }

  /**
   * Per-minute operation statistics (issue 20; {@code io.queenvertx.stats}).
   *
   * @param retentionDays {@code QUEEN_METRICS_RETENTION_DAYS} (Queen's {@code METRICS_RETENTION_DAYS} is read when
   *     it is unset; 90, at least 1): minute rows of {@code stats_node_minute} / {@code stats_queue_minute} older
   *     than this are purged in batches.
   * @param flushIntervalMs {@code QUEEN_STATS_FLUSH_MS} (10000, at least 1000): how often the node writes the
   *     minutes that have closed into PostgreSQL.
   * @param baseUnits {@code QUEEN_METRICS_BASE_UNITS} (false): emit the pop lag in seconds as
   *     {@code queen_queue_pop_lag_seconds} instead of Queen's {@code queen_queue_pop_lag_milliseconds}, which
   *     {@code promtool check metrics} flags for its non-base unit.
   */
  public record Stats(int retentionDays, long flushIntervalMs, boolean baseUnits) {
    public static final int DEFAULT_RETENTION_DAYS = 90;
    public static final long DEFAULT_FLUSH_INTERVAL_MS = 10_000;
  }

  /** JWT settings (API.md §2.1); only read when {@code enabled}. */
  public record Jwt(
      boolean enabled,
      String algorithm,
      String secret,
      String publicKey,
      String jwksUrl,
      long jwksRefreshIntervalS,
      long jwksTimeoutMs,
      String issuer,
      String audience,
      long clockSkewS,
      String skipPaths,
      String rolesClaim,
      String rolesArrayClaim,
      String roleAdmin,
      String roleReadWrite,
      String roleReadOnly,
      String roleWriteOnly) {}

  public static Config fromEnvironment() {
    return from(System.getenv());
  }

  /** Builds the configuration from a variable map; tests pass their own map instead of the process environment. */
  public static Config from(Map<String, String> env) {
    Function<String, String> get = k -> {
      String v = env.get(k);
      return v == null ? "" : v.trim();
    };
    var e = new Reader(get);

    Optional<Database> db = Optional.empty();
    if (!get.apply("PG_HOST").isEmpty()) {
      String dbName = e.str("PG_DATABASE", "");
      if (dbName.isEmpty()) dbName = e.str("PG_DB", "postgres");
      db = Optional.of(new Database(
          e.str("PG_HOST", "localhost"),
          e.integer("PG_PORT", 5432, 1, 65535),
          dbName,
          e.str("PG_USER", "postgres"),
          env.getOrDefault("PG_PASSWORD", "postgres"),
          e.bool("PG_USE_SSL", false)));
    }

    String bind = e.str("QUEEN_BIND_ADDR", e.str("HOST", "0.0.0.0"));
    if (bind.contains(":") && !bind.startsWith("[") && bind.chars().filter(c -> c == ':').count() == 1) {
      throw ConfigException.of("QUEEN_BIND_ADDR", bind, "a host or IP address without a port");
    }

    long popTimeout = e.lng("DEFAULT_TIMEOUT", e.lng("POP_DEFAULT_TIMEOUT_MS", 30000));
    String hostname = e.str("HOSTNAME", "");
    String serverId = e.str("QUEEN_SERVER_ID", hostname.isEmpty()
        ? "queen-" + Long.toHexString(Double.doubleToLongBits(Math.random())).substring(0, 8) : hostname);

    String key = e.str("QUEEN_ENCRYPTION_KEY", "");

    var jwt = new Jwt(
        e.bool("JWT_ENABLED", false),
        e.str("JWT_ALGORITHM", "HS256"),
        env.getOrDefault("JWT_SECRET", ""),
        env.getOrDefault("JWT_PUBLIC_KEY", ""),
        e.str("JWT_JWKS_URL", ""),
        e.lng("JWT_JWKS_REFRESH_INTERVAL", 3600),
        e.lng("JWT_JWKS_TIMEOUT_MS", 5000),
        e.str("JWT_ISSUER", ""),
        e.str("JWT_AUDIENCE", ""),
        e.lng("JWT_CLOCK_SKEW", 30),
        e.str("JWT_SKIP_PATHS", "/health,/metrics/prometheus,/metrics,/"),
        e.str("JWT_ROLES_CLAIM", "role"),
        e.str("JWT_ROLES_ARRAY_CLAIM", "roles"),
        e.str("JWT_ROLE_ADMIN", "admin"),
        e.str("JWT_ROLE_READ_WRITE", "read-write"),
        e.str("JWT_ROLE_READ_ONLY", "read-only"),
        e.str("JWT_ROLE_WRITE_ONLY", "write-only"));

    String members = e.str("QUEEN_CLUSTER_MEMBERS", "");
    boolean clustered = e.bool("QUEEN_CLUSTER", !members.isEmpty());
    int cores = Runtime.getRuntime().availableProcessors();

    Path dataDir = Path.of(e.str("QUEEN_DATA_DIR", "./data")).toAbsolutePath().normalize();
    String bufferDir = e.str("FILE_BUFFER_DIR", "");

    return new Config(
        e.integer("PORT", 6632, 1, 65535),
        bind,
        db,
        dataDir,
        e.integer("QUEEN_EMBEDDED_PG_PORT", 0, 0, 65535),
        Math.max(16, e.integer("QUEEN_EMBEDDED_PG_SHARED_BUFFERS_MB", defaultSharedBuffersMb())),
        Math.max(1, e.integer("DB_POOL_SIZE", 160)),
        e.integer("QUEEN_STMT_TIMEOUT_MS", 30000),
        e.lng("QUEEN_MAX_BODY_BYTES", 67108864L),
        e.bool("QUEEN_APPLY_SCHEMA", true),
        serverId,
        VERSION,
        popTimeout,
        e.str("DEFAULT_SUBSCRIPTION_MODE", "new"),
        e.lng("POP_WAIT_INITIAL_INTERVAL_MS", 100),
        e.integer("POP_WAIT_BACKOFF_THRESHOLD", 3),
        e.dbl("POP_WAIT_BACKOFF_MULTIPLIER", 2.0),
        e.lng("POP_WAIT_MAX_INTERVAL_MS", 1000),
        e.integer("QUEEN_V2_ZSTD_LEVEL", 3, -7, 22),
        e.integer("QUEEN_SEGMENT_CACHE_ENTRIES", 4096),
        "0".equals(e.str("QUEEN_DEDUP_CACHE", "").trim()) ? 0 : Math.max(0, e.integer("QUEEN_DEDUP_CACHE_MB", 512)),
        Math.max(1, e.integer("QUEEN_PUSH_BUNDLES_IN_FLIGHT", 8)),
        Math.max(1, e.integer("QUEEN_PUSH_PARTITIONS_PER_BUNDLE", 512)),
        Math.max(100, e.lng("RETENTION_INTERVAL", 5000)),
        e.integer("RETENTION_BATCH_SIZE", 1000),
        bufferDir.isEmpty() ? dataDir.resolve("buffers") : Path.of(bufferDir).toAbsolutePath(),
        e.lng("FILE_BUFFER_FLUSH_MS", 100),
        e.integer("FILE_BUFFER_EVENTS_PER_FILE", 10000),
        key.isEmpty() ? Optional.empty() : Optional.of(checkKey(key)),
        e.bool("QUEEN_TENANCY_HEADER", false),
        jwt,
        clustered,
        members.isEmpty() ? "127.0.0.1" : members,
        e.integer("QUEEN_CLUSTER_PORT", 5701, 1, 65535),
        e.integer("QUEEN_CLUSTER_BUS_PORT", 0, 0, 65535),
        e.str("QUEEN_CLUSTER_INTERFACE", ""),
        e.str("QUEEN_CLUSTER_NAME", "queen-vertx"),
        Path.of(e.str("QUEEN_CLUSTER_CONFIG", "cluster.xml")),
        Math.max(1, e.integer("QUEEN_HTTP_INSTANCES", cores)),
        Math.max(1000, e.lng("QUEEN_CACHE_REFRESH_INTERVAL_MS", 60000)),
        e.bool("QUEEN_ACCESS_LOG", false),
        Math.max(1000, e.lng("QUEEN_REDRIVE_STALE_MS", 10000)),
        apiKeys(e.str("QUEEN_WEBHOOK_API_KEYS", "")),
        new Exposure(
            Math.max(0, e.integer("QUEEN_HTTP_IDLE_TIMEOUT_S", Exposure.DEFAULT_IDLE_TIMEOUT_S)),
            Math.max(0, e.lng("QUEEN_HTTP_HEADER_TIMEOUT_MS", Exposure.DEFAULT_HEADER_TIMEOUT_MS)),
            Math.max(0, e.integer("QUEEN_HTTP_MAX_CONNECTIONS", Exposure.defaultMaxConnections())),
            e.bool("QUEEN_METRICS_HIDE_QUEUES", e.bool("QUEEN_TENANCY_HEADER", false))),
        new Startup(e.integer("QUEEN_DB_CONNECT_TIMEOUT_S", Startup.DEFAULT_DB_CONNECT_TIMEOUT_S, 0, 86_400)),
        new Stats(e.integer("QUEEN_METRICS_RETENTION_DAYS",
                e.integer("METRICS_RETENTION_DAYS", Stats.DEFAULT_RETENTION_DAYS, 1, 36_500), 1, 36_500),
            Math.max(1000, e.lng("QUEEN_STATS_FLUSH_MS", Stats.DEFAULT_FLUSH_INTERVAL_MS)),
            e.bool("QUEEN_METRICS_BASE_UNITS", false)));
  }

  /**
   * {@code QUEEN_ENCRYPTION_KEY} must be 64 hexadecimal characters. The message gives the length and the first
   * offending position, never the key itself (it is a secret).
   */
  static String checkKey(String key) {
    String accepted = "64 hexadecimal characters [0-9a-fA-F] (a 32-byte AES-256 key)";
    if (key.length() != 64) {
      throw new ConfigException("QUEEN_ENCRYPTION_KEY (a value of " + key.length() + " characters, not shown) is not"
          + " accepted: " + accepted);
    }
    for (int i = 0; i < key.length(); i++) {
      if (Character.digit(key.charAt(i), 16) < 0) {
        throw new ConfigException("QUEEN_ENCRYPTION_KEY (64 characters, not shown; character " + i
            + " is not hexadecimal) is not accepted: " + accepted);
      }
    }
    return key;
  }

  /** A copy with another HTTP port (tests start nodes on free ports). */
  public Config withPort(int newPort) {
    return copy(Map.of("port", newPort));
  }

  /** A copy pointing at a given database (tests share one embedded PostgreSQL between nodes). */
  public Config withDatabase(Database db) {
    return copy(Map.of("database", Optional.of(db)));
  }

  /**
   * A copy with the named components replaced, by reflection over the record's components, so that adding a
   * component never means repeating every other one by position.
   */
  private Config copy(Map<String, Object> replaced) {
    var components = Config.class.getRecordComponents();
    Object[] values = new Object[components.length];
    Class<?>[] types = new Class<?>[components.length];
    try {
      for (int i = 0; i < components.length; i++) {
        String name = components[i].getName();
        types[i] = components[i].getType();
        values[i] = replaced.containsKey(name) ? replaced.get(name) : components[i].getAccessor().invoke(this);
      }
      return Config.class.getDeclaredConstructor(types).newInstance(values);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot copy Config", e);
    }
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

  /**
   * {@code QUEEN_WEBHOOK_API_KEYS}: comma-separated {@code key} or {@code key=<tenant uuid>} entries, the Bearer
   * credentials of the webhook API under {@code /v1/}; a key without a tenant is the default tenant's.
   */
  static Map<String, java.util.UUID> apiKeys(String spec) {
    Map<String, java.util.UUID> keys = new java.util.LinkedHashMap<>();
    for (String part : spec.split(",")) {
      String p = part.trim();
      if (p.isEmpty()) continue;
      int eq = p.indexOf('=');
      String key = eq < 0 ? p : p.substring(0, eq).trim();
      java.util.UUID tenant;
      try {
        tenant = eq < 0 ? java.util.UUID.fromString("00000000-0000-0000-0000-000000000001")
            : java.util.UUID.fromString(p.substring(eq + 1).trim());
      } catch (IllegalArgumentException e) {
        throw new ConfigException("QUEEN_WEBHOOK_API_KEYS: the tenant of entry " + (key.isEmpty() ? "''" : "'" + key.charAt(0) + "...'")
            + " is not accepted ('" + p.substring(eq + 1).trim() + "'): a tenant UUID after '='");
      }
      if (!key.isEmpty()) keys.put(key, tenant);
    }
    return java.util.Collections.unmodifiableMap(keys);
  }

  private record Reader(Function<String, String> get) {
    String str(String k, String def) {
      String v = get.apply(k);
      return v.isEmpty() ? def : v;
    }

    int integer(String k, int def) {
      return integer(k, def, Integer.MIN_VALUE, Integer.MAX_VALUE);
    }

    int integer(String k, int def, int min, int max) {
      return (int) lng(k, def, min, max);
    }

    long lng(String k, long def) {
      return lng(k, def, Long.MIN_VALUE, Long.MAX_VALUE);
    }

    long lng(String k, long def, long min, long max) {
      String v = get.apply(k);
      if (v.isEmpty()) return def;
      String accepted = "an integer" + range(min, max);
      long parsed;
      try {
        parsed = Long.parseLong(v);
      } catch (NumberFormatException ex) {
        throw ConfigException.of(k, v, accepted);
      }
      if (parsed < min || parsed > max) throw ConfigException.of(k, v, accepted);
      return parsed;
    }

    double dbl(String k, double def) {
      String v = get.apply(k);
      if (v.isEmpty()) return def;
      try {
        double d = Double.parseDouble(v);
        if (Double.isFinite(d)) return d;
      } catch (NumberFormatException ex) {
        // reported below
      }
      throw ConfigException.of(k, v, "a finite number");
    }

    private static String range(long min, long max) {
      boolean lo = min != Integer.MIN_VALUE && min != Long.MIN_VALUE;
      boolean hi = max != Integer.MAX_VALUE && max != Long.MAX_VALUE;
      if (lo && hi) return " from " + min + " to " + max;
      if (lo) return " of at least " + min;
      if (hi) return " of at most " + max;
      return max == Integer.MAX_VALUE ? " (32-bit)" : "";
    }

    boolean bool(String k, boolean def) {
      String v = get.apply(k).toLowerCase(Locale.ROOT);
      return switch (v) {
        case "" -> def;
        case "true", "1", "yes", "on" -> true;
        case "false", "0", "no", "off" -> false;
        default -> throw ConfigException.of(k, get.apply(k), "a boolean (true/false, 1/0, yes/no, on/off)");
      };
    }
  }
}
