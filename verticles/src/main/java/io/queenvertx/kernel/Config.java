package io.queenvertx.kernel;

import java.util.List;
import java.util.Map;

/**
 * The node's configuration: one immutable record built once from the environment, with Queen's variable names and
 * defaults (shared/spec/API.md §7), made of one record per concern ({@code kernel/*Settings}). This is the only class
 * that reads {@code System.getenv}; everything else receives a {@code Config} or the concern's record it needs.
 *
 * <p>Each concern's record names its variables and defaults in its javadoc and reads them in its {@code from}.
 * Parsing is strict ({@link ConfigReader}): booleans accept {@code true/false, 1/0, yes/no, on/off} (trimmed,
 * case-insensitive); an empty or unset variable means the default; an integer or number that does not parse, or is
 * out of its range, and a malformed {@code QUEEN_ENCRYPTION_KEY} throw {@link ConfigException}, whose one-line
 * message names the variable, the value and what is accepted. Parsing happens before anything starts (no
 * PostgreSQL, no port).
 *
 * @param serverId {@code QUEEN_SERVER_ID} (else {@code HOSTNAME}, else {@code queen-} and 8 random hex digits): the
 *     node's name in logs, {@code /health} and the leases it holds
 * @param http the HTTP server
 * @param postgres the external or embedded PostgreSQL and the pool
 * @param pop pop defaults and the long poll's safety re-poll
 * @param engine segment writing and reading
 * @param spool the push spool
 * @param maintenance periodic background work
 * @param security the encryption key, the tenancy header and the webhook API keys
 * @param cluster Hazelcast clustering
 * @param jwt JWT access levels
 * @param exposure network exposure: HTTP connection limits and what the public metrics reveal
 * @param startup how the node waits for what it needs at boot
 * @param traces how long message traces are kept
 * @param stats the per-minute operation statistics: flush and retention
 */
public record Config(
    String serverId,
    HttpSettings http,
    PostgresSettings postgres,
    PopSettings pop,
    EngineSettings engine,
    SpoolSettings spool,
    MaintenanceSettings maintenance,
    SecuritySettings security,
    ClusterSettings cluster,
    JwtSettings jwt,
    ExposureSettings exposure,
    StartupSettings startup,
    TracesSettings traces,
    StatsSettings stats) {

  public static final String VERSION = "0.2.0";

  /**
   * Where a PostgreSQL is: from {@code PG_*} ({@link PostgresSettings}), or the node's embedded one
   * ({@link EmbeddedDatabase#connection}).
   *
   * @param hosts  the servers, in the order they are tried (one, or several of a replicated cluster)
   * @param target {@link Target#READ_WRITE}: only a server whose {@code transaction_read_only} is off takes the node's
   *     work, and the node follows a failover ({@code io.queenvertx.db.PrimaryPool}); {@link Target#ANY}: the first
   *     host as it is
   */
  public record Database(List<Host> hosts, String database, String user, String password, boolean ssl,
                         Target target) {
    public Database {
      hosts = List.copyOf(hosts);
      if (hosts.isEmpty()) throw new IllegalArgumentException("no PostgreSQL host");
    }

    /** One server, taken as it is (the embedded one, and tests). */
    public Database(String host, int port, String database, String user, String password, boolean ssl) {
      this(List.of(new Host(host, port)), database, user, password, ssl, Target.ANY);
    }

    /** The first host. */
    public String host() {
      return hosts.get(0).host();
    }

    /** The first host's port. */
    public int port() {
      return hosts.get(0).port();
    }

    /** {@code h1:p1,h2:p2/database}, for log lines. */
    public String describe() {
      return String.join(",", hosts.stream().map(Host::toString).toList()) + "/" + database;
    }
  }

  /** One PostgreSQL server. */
  public record Host(String host, int port) {
    @Override
    public String toString() {
      return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }
  }

  /** libpq's {@code target_session_attrs}, of which the node knows two. */
  public enum Target {
    ANY, READ_WRITE;

    public String spelling() {
      return this == ANY ? "any" : "read-write";
    }
  }

  public static Config fromEnvironment() {
    return from(System.getenv());
  }

  /** Builds the configuration from a variable map; tests pass their own map instead of the process environment. */
  public static Config from(Map<String, String> env) {
    var e = new ConfigReader(env);
    String hostname = e.str("HOSTNAME", "");
    String serverId = e.str("QUEEN_SERVER_ID", hostname.isEmpty()
        ? "queen-" + Long.toHexString(Double.doubleToLongBits(Math.random())).substring(0, 8) : hostname);
    PostgresSettings postgres = PostgresSettings.from(e);
    return new Config(
        serverId,
        HttpSettings.from(e),
        postgres,
        PopSettings.from(e),
        EngineSettings.from(e),
        SpoolSettings.from(e, postgres.dataDir()),
        MaintenanceSettings.from(e),
        SecuritySettings.from(e),
        ClusterSettings.from(e),
        JwtSettings.from(e),
        ExposureSettings.from(e),
        StartupSettings.from(e),
        TracesSettings.from(e),
        StatsSettings.from(e));
  }

  /** A copy with another HTTP port (tests start nodes on free ports). */
  public Config withPort(int port) {
    return new Config(serverId, http.withPort(port), postgres, pop, engine, spool, maintenance, security, cluster, jwt,
        exposure, startup, traces, stats);
  }

  /** A copy pointing at a given database (the node's embedded one; tests share one PostgreSQL between nodes). */
  public Config withDatabase(Database db) {
    return new Config(serverId, http, postgres.withConnection(db), pop, engine, spool, maintenance, security, cluster,
        jwt, exposure, startup, traces, stats);
  }
}
