package io.queenvertx.boot;

import io.queenvertx.kernel.Config;
import io.queenvertx.kernel.PostgresSettings;
import io.queenvertx.db.PgServers;
import io.queenvertx.db.PrimaryPool;
import io.queenvertx.db.ReadPool;
import io.queenvertx.db.Topology;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.SqlConnection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Builds a node's PostgreSQL pools ({@link PgServers}) from its configuration:
 * <ul>
 *   <li>one server taken as it is ({@code target_session_attrs=any}, no replicas): one Vert.x pool, as ever;</li>
 *   <li>{@code read-write} (the default with several hosts): a {@link PrimaryPool} that follows the writable server,
 *       its servers watched by a {@link Topology};</li>
 *   <li>read replicas ({@code PG_READ_HOSTS}): a {@link ReadPool} for the read-only routes, the replicas watched.</li>
 * </ul>
 */
public final class PoolFactory {
  private PoolFactory() {}

  /** The node's pools; the servers are checked once before this returns when any are watched. */
  static PgServers create(Vertx vertx, Config config, Config.Database db) throws Exception {
    PostgresSettings pg = config.postgres();
    boolean follow = db.target() == Config.Target.READ_WRITE;
    List<Config.Host> readHosts = pg.readHosts();
    if (!follow && readHosts.isEmpty()) return PgServers.single(pool(vertx, config, db, db.hosts().get(0),
        pg.poolSize(), null));
    Set<Config.Host> watched = new LinkedHashSet<>(follow ? db.hosts() : List.of(db.hosts().get(0)));
    watched.addAll(readHosts);
    var topology = new Topology(vertx, watched, h -> probe(vertx, config, db, h), pg.checkIntervalMs(),
        pg.checkTimeoutMs());
    Pool primary;
    java.util.function.Supplier<Optional<Config.Host>> writesTo;
    if (follow) {
      var p = new PrimaryPool(db.hosts(), (h, onConnect) -> pool(vertx, config, db, h, pg.poolSize(), onConnect),
          topology, pg.failoverWaitMs());
      primary = p;
      writesTo = p::primary;
    } else {
      primary = pool(vertx, config, db, db.hosts().get(0), pg.poolSize(), null);
      Optional<Config.Host> only = Optional.of(db.hosts().get(0));
      writesTo = () -> only;
    }
    Pool reads = readHosts.isEmpty() ? primary : new ReadPool(readHosts, primary, writesTo,
        h -> pool(vertx, config, db, h, readPoolSize(pg.poolSize()), null), pg.readMaxLagMs(), topology);
    var servers = new PgServers(primary, reads, topology, writesTo);
    Node.await(topology.start());
    return servers;
  }

  /** Connections of a replica's pool: a quarter of the node's pool, at least 2, at most the pool. */
  static int readPoolSize(int poolSize) {
    return Math.min(poolSize, Math.max(2, poolSize / 4));
  }

  /**
   * A Vert.x pool of {@code size} connections to {@code host}; {@code onConnect}, when given, receives each new
   * connection first and hands it to the pool by closing it.
   */
  static Pool pool(Vertx vertx, Config config, Config.Database db, Config.Host host, int size,
                   Handler<SqlConnection> onConnect) {
    var poolOptions = new PoolOptions()
        .setMaxSize(size)
        .setMaxWaitQueueSize(-1)
        .setConnectionTimeout(10)
        .setConnectionTimeoutUnit(TimeUnit.SECONDS)
        .setShared(false);
    var net = new io.vertx.core.net.NetClientOptions().setConnectTimeout(5000).setTcpNoDelay(true);
    var builder = PgBuilder.pool().with(poolOptions).with(net)
        .connectingTo(options(db, host, config.postgres().statementTimeoutMs(), "queen-vertx")).using(vertx);
    if (onConnect != null) builder.withConnectHandler(onConnect);
    return builder.build();
  }

  /** The one-connection pool of a server's checks: every wait bounded by the check timeout. */
  private static Pool probe(Vertx vertx, Config config, Config.Database db, Config.Host host) {
    int timeoutMs = config.postgres().checkTimeoutMs();
    var poolOptions = new PoolOptions().setMaxSize(1).setMaxWaitQueueSize(4)
        .setConnectionTimeout(timeoutMs).setConnectionTimeoutUnit(TimeUnit.MILLISECONDS).setShared(false);
    var net = new io.vertx.core.net.NetClientOptions().setConnectTimeout(timeoutMs).setTcpNoDelay(true);
    return PgBuilder.pool().with(poolOptions).with(net)
        .connectingTo(options(db, host, timeoutMs, "queen-vertx-check")).using(vertx).build();
  }

  private static PgConnectOptions options(Config.Database db, Config.Host host, int statementTimeoutMs,
                                          String application) {
    var connect = new PgConnectOptions()
        .setHost(host.host())
        .setPort(host.port())
        .setDatabase(db.database())
        .setUser(db.user())
        .setPassword(db.password())
        .setCachePreparedStatements(true)
        .setPreparedStatementCacheMaxSize(256)
        .setPipeliningLimit(1)
        .setProperties(Map.of(
            "statement_timeout", Integer.toString(statementTimeoutMs),
            "application_name", application));
    if (db.ssl()) {
      connect.setSslMode(io.vertx.pgclient.SslMode.REQUIRE)
          .setSslOptions(new io.vertx.core.net.ClientSSLOptions().setTrustAll(true));
    }
    return connect;
  }
}
