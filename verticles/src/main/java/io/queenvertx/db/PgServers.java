package io.queenvertx.db;

import io.queenvertx.kernel.Config;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.Shareable;
import io.vertx.sqlclient.Pool;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A node's PostgreSQL: the pool for everything that writes ({@link #primary}), the pool for the read-only routes
 * ({@link #reads}: a {@link ReadPool} with read replicas, else the same pool) and, when the node follows a failover or
 * reads from replicas, the {@link Topology} watching the servers. Registered in the node's Vert.x instance so the HTTP
 * error contract can tell a failover window ({@link #degraded(Vertx)}) from a failure.
 */
public final class PgServers implements Shareable {
  private static final String MAP = "queen.db";

  private final Pool primary;
  private final Pool reads;
  private final Topology topology;
  private final PrimaryPool failover;
  private final ReadPool replicas;
  private final java.util.function.Supplier<java.util.Optional<Config.Host>> writesTo;

  /**
   * @param writesTo the server the primary pool uses now
   */
  public PgServers(Pool primary, Pool reads, Topology topology,
                   java.util.function.Supplier<java.util.Optional<Config.Host>> writesTo) {
    this.writesTo = writesTo;
    this.primary = primary;
    this.reads = reads;
    this.topology = topology;
    this.failover = primary instanceof PrimaryPool p ? p : null;
    this.replicas = reads instanceof ReadPool r ? r : null;
  }

  /** One server taken as it is: one pool for everything, nothing watched. */
  public static PgServers single(Pool pool) {
    return new PgServers(pool, pool, null, java.util.Optional::empty);
  }

  public Pool primary() {
    return primary;
  }

  public Pool reads() {
    return reads;
  }

  /** Whether the node is in a failover window: no writable server, or one just failed a call and is being checked. */
  public boolean degraded() {
    return failover != null && failover.degraded();
  }

  /** Makes this the node's database for {@link #degraded(Vertx)}. */
  public void register(Vertx vertx) {
    vertx.sharedData().getLocalMap(MAP).put("servers", this);
  }

  /** Whether the node running on {@code vertx} is in a failover window ({@link #degraded()}). */
  public static boolean degraded(Vertx vertx) {
    Object s = vertx == null ? null : vertx.sharedData().getLocalMap(MAP).get("servers");
    return s instanceof PgServers servers && servers.degraded();
  }

  /**
   * Each watched server as the last check found it: {@code server} ({@code host:port}), {@code role} (primary,
   * standby, read-only, unreachable), {@code timeline} (of a primary), {@code lagMs} (of a read replica; null when
   * unknown), {@code use} ("writes", "reads" or null) and {@code error} (why it is unreachable); empty when nothing is
   * watched.
   */
  public JsonArray describe() {
    JsonArray out = new JsonArray();
    if (topology == null) return out;
    Map<Config.Host, Long> lags = replicas == null ? Map.of() : replicas.lags();
    var writes = writesTo.get().orElse(null);
    var readsFrom = replicas == null ? null : replicas.replica().orElse(null);
    for (ServerState s : topology.last().states().values()) {
      Long lag = lags.get(s.host());
      out.add(new JsonObject()
          .put("server", s.host().toString())
          .put("role", s.role())
          .put("timeline", s.timeline() > 0 ? s.timeline() : null)
          .put("lagMs", lag == null || lag < 0 || lag == Long.MAX_VALUE ? null : lag)
          .put("use", s.host().equals(writes) ? "writes" : s.host().equals(readsFrom) ? "reads" : null)
          .put("error", s.error()));
    }
    return out;
  }

  /** Stops the checks and closes every pool. */
  public Future<Void> close() {
    List<Future<Void>> closing = new ArrayList<>();
    if (topology != null) closing.add(topology.close());
    if (reads != primary) closing.add(reads.close());
    closing.add(primary.close());
    return Future.join(closing).mapEmpty();
  }
}
