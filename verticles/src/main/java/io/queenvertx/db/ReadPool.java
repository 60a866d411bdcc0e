package io.queenvertx.db;

import io.queenvertx.kernel.Config;
import io.vertx.core.Future;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The pool of the read-only routes when read replicas are configured ({@code PG_READ_HOSTS}): a call goes to the
 * first replica that is a standby of the primary and whose replay lag is at most {@code QUEEN_READ_MAX_LAG_MS},
 * otherwise to the primary. A call the replica fails (it went away, or refused the statement) is run again on the
 * primary. A connection is never taken from here for a write: the routes that write use the primary pool.
 *
 * <p>Lag: each round notes the primary's WAL position and when the round began. A standby that has replayed the
 * primary's position of the same round has no lag; otherwise its lag is the age of the newest noted primary position
 * it has replayed (it holds every write made before that moment), or, past the notes, the time since the last commit
 * it replayed. So the lag is an upper bound with the check interval as its grain: a healthy replica of a busy
 * primary shows about one interval, and a replica that stopped replaying shows its lag growing from when it stopped.
 * Between two rounds a replica may fall up to a check interval further behind unnoticed.
 */
public final class ReadPool extends RoutingPool {
  private static final Logger log = LoggerFactory.getLogger(ReadPool.class);

  private final List<Config.Host> replicas;
  private final Pool primary;
  private final Supplier<Optional<Config.Host>> primaryHost;
  private final Function<Config.Host, Pool> poolFor;
  private final long maxLagMs;
  private final Topology topology;
  private final Map<Config.Host, Pool> pools = new java.util.concurrent.ConcurrentHashMap<>();
  private final Map<Config.Host, Calls> calls = new java.util.concurrent.ConcurrentHashMap<>();
  private final Map<Config.Host, Long> lags = new java.util.concurrent.ConcurrentHashMap<>();
  private final History history = new History();
  /** The replica reads go to, its pool and its calls in flight; null: the primary. */
  private record Choice(Config.Host host, Pool pool, Calls calls) {}

  private volatile Choice chosen;

  /**
   * @param primary     the pool of the writable server, where reads go when no replica is fit
   * @param primaryHost the server the primary pool uses now
   */
  public ReadPool(List<Config.Host> replicas, Pool primary, Supplier<Optional<Config.Host>> primaryHost,
                  Function<Config.Host, Pool> poolFor, long maxLagMs, Topology topology) {
    this.replicas = List.copyOf(replicas);
    this.primary = primary;
    this.primaryHost = primaryHost;
    this.poolFor = poolFor;
    this.maxLagMs = maxLagMs;
    this.topology = topology;
    topology.listen(this::onRound);
  }

  /** Replay lag of each replica as of the last round (ms; -1: unknown or not a standby of the primary). */
  public Map<Config.Host, Long> lags() {
    return Map.copyOf(lags);
  }

  /** The replica reads go to now, if any. */
  public Optional<Config.Host> replica() {
    Choice c = chosen;
    return c == null ? Optional.empty() : Optional.of(c.host());
  }

  private void onRound(Topology.Round round) {
    Optional<Config.Host> ph = primaryHost.get();
    ServerState p = ph.map(h -> round.states().get(h)).orElse(null);
    history.note(p, p == null ? round.startedAt() : p.checkedAt());
    Config.Host pick = null;
    long pickedLag = -1;
    String refused = null;
    for (Config.Host h : replicas) {
      ServerState state = round.states().get(h);
      if ((state == null || !state.reachable()) && pools.containsKey(h)) {
        // a lost replica may never answer what is in flight there: give it up (it runs again on the primary)
        if (chosen != null && h.equals(chosen.host())) chosen = null;
        calls.remove(h).abandon("replica " + h + " unreachable");
        pools.remove(h).close();
      }
      long lag = history.lagMs(state, p, round.startedAt());
      if (ph.isPresent() && h.equals(ph.get())) {
        lags.put(h, lag); // the primary itself: its reads go through the primary pool
        continue;
      }
      lags.put(h, lag);
      if (pick == null && lag >= 0 && lag <= maxLagMs) {
        pick = h;
        pickedLag = lag;
      } else if (refused == null && pick == null) {
        refused = h + (lag < 0 ? " is not a standby of the primary" : " lags " + lag + " ms");
      }
    }
    Choice before = chosen;
    if (pick != null && (before == null || !pick.equals(before.host()))) {
      chosen = new Choice(pick, pools.computeIfAbsent(pick, poolFor), calls.computeIfAbsent(pick, x -> new Calls()));
      log.info("reads: replica {} (lag {} ms)", pick, pickedLag);
    } else if (pick == null && before != null) {
      chosen = null;
      log.warn("reads: primary ({}; QUEEN_READ_MAX_LAG_MS={})", refused, maxLagMs);
    }
  }

  /** The primary's WAL positions of the last rounds, to date what a standby has replayed. */
  static final class History {
    static final int MAX = 600;
    private final java.util.ArrayDeque<long[]> samples = new java.util.ArrayDeque<>();
    private Config.Host host;
    private String systemId;

    /** Notes the primary's position at a round (a new primary, or none, starts the notes over). */
    void note(ServerState primary, long at) {
      if (primary == null || !primary.writable()) {
        samples.clear();
        host = null;
        return;
      }
      if (!primary.host().equals(host) || !primary.systemId().equals(systemId)) {
        samples.clear();
        host = primary.host();
        systemId = primary.systemId();
      }
      samples.addFirst(new long[] {at, primary.lsn()});
      if (samples.size() > MAX) samples.removeLast();
    }

    /**
     * The replay lag (ms) at round time {@code now} of a standby of {@code primary}; 0 for the primary itself; -1
     * when it is unreachable, not a standby, of another cluster, or the primary is unknown.
     */
    long lagMs(ServerState s, ServerState primary, long now) {
      if (s == null || !s.reachable() || primary == null || !primary.writable()) return -1;
      if (s.host().equals(primary.host())) return 0;
      if (!s.inRecovery() || s.systemId() == null || !s.systemId().equals(primary.systemId())) return -1;
      if (s.lsn() >= primary.lsn()) return 0;
      long oldest = now;
      for (long[] sample : samples) {
        if (sample[1] <= s.lsn()) return Math.max(0, now - sample[0]);
        oldest = sample[0];
      }
      return s.sinceReplayMs() < 0 ? Long.MAX_VALUE : Math.max(s.sinceReplayMs(), now - oldest);
    }
  }

  @Override
  public <T> Future<T> execute(Function<Pool, Future<T>> call) {
    Choice c = chosen;
    if (c == null) return onPrimary(call);
    Config.Host from = c.host();
    return c.calls().track(call.apply(c.pool())).recover(e -> {
      if (!replicaFault(e)) return Future.failedFuture(e);
      log.warn("read on replica {} failed ({}); run on the primary", from, ServerProbe.describe(e));
      topology.checkSoon();
      return onPrimary(call);
    });
  }

  private <T> Future<T> onPrimary(Function<Pool, Future<T>> call) {
    return primary instanceof Router r ? r.execute(call) : call.apply(primary);
  }

  /** A failure of the replica rather than of the statement: connection trouble, read-only refusal, recovery conflict. */
  static boolean replicaFault(Throwable e) {
    if (!(e instanceof PgException)) return true;
    return switch (SqlState.of(e)) {
      case CONNECTION_EXCEPTION, ADMIN_SHUTDOWN, CRASH_SHUTDOWN, CANNOT_CONNECT_NOW, DATABASE_DROPPED,
          IDLE_SESSION_TIMEOUT, READ_ONLY_SQL_TRANSACTION, SERIALIZATION_FAILURE -> true;
      default -> false;
    };
  }

  @Override
  public Future<SqlConnection> getConnection() {
    return primary.getConnection();
  }

  @Override
  public int size() {
    Choice c = chosen;
    return c == null ? 0 : c.pool().size();
  }

  /** Closes the replicas' pools (the primary pool is its owner's to close). */
  @Override
  public Future<Void> close() {
    chosen = null;
    List<Future<Void>> closing = new java.util.ArrayList<>();
    for (Pool p : pools.values()) closing.add(p.close());
    return Future.join(closing).mapEmpty();
  }
}
