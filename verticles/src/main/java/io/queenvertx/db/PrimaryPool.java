package io.queenvertx.db;

import io.queenvertx.kernel.Config;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's pool when it follows a failover ({@code target_session_attrs=read-write}): every call goes to the one
 * server that takes writes now, through a Vert.x pool of connections to that server only.
 *
 * <p>After each {@link Topology} round: the server in use stays while it is writable; otherwise its pool is closed
 * (which fails the calls in flight on it, so nothing hangs on a frozen server) and the first writable server of the
 * list takes over. A writable server on an older timeline than one this node has seen for the same cluster is never
 * taken: it is a demoted primary that came back (or woke up) before Patroni made it a standby. A new connection that
 * finds its server read-only asks for a check at once. Each change of server is one log line naming it.
 *
 * <p>A failover window: a call made while no server takes writes waits for one, but only until
 * {@code QUEEN_PG_FAILOVER_WAIT_MS} after the primary was lost; after that it fails at once with
 * {@link NoWritableServer} (a push spools, a pop, an ack or a read answers 503). A call that failed because its
 * server went away or refused the write ({@link Failures#cut}) asks for a check and runs once more on the primary that
 * check finds, within the same wait, else fails with its own error. A planned switchover, whose window is a second or
 * two, thus costs callers a delay, not an error.
 */
public final class PrimaryPool extends RoutingPool {
  private static final Logger log = LoggerFactory.getLogger(PrimaryPool.class);

  /** The server in use, the pool of connections to it and the calls in flight there. */
  private record Current(Config.Host host, String systemId, int timeline, Pool pool, Calls calls) {
    /** Gives up on the calls in flight (a lost server may never answer them) and closes the pool. */
    void abandon(String reason) {
      calls.abandon("PostgreSQL " + host + " " + reason);
      pool.close();
    }
  }

  /** A call waiting for a primary whose check began at or after {@code notBefore}. */
  private static final class Waiter {
    final Context caller;
    final long notBefore;
    final Promise<Current> promise = Promise.promise();
    boolean done;
    long timer = -1;

    Waiter(Context caller, long notBefore) {
      this.caller = caller;
      this.notBefore = notBefore;
    }
  }

  private final List<Config.Host> hosts;
  private final BiFunction<Config.Host, Handler<SqlConnection>, Pool> poolFor;
  private final Topology topology;
  private final long waitMs;
  private volatile Current current;
  /** The newest timeline a writable server of each cluster (system identifier) was seen on; topology context only. */
  private final Map<String, Integer> newestTimeline = new HashMap<>();
  private final List<Waiter> waiters = new ArrayList<>();
  /** Demoted primaries already reported (host@timeline); topology context only. */
  private final java.util.Set<String> fenced = new java.util.HashSet<>();
  private volatile long failureAt;
  private volatile long confirmedAt;
  /** When the node lost its writable server (ms), 0 while it has one. */
  private volatile long lostAt;
  private volatile String why = "not checked yet";

  /**
   * @param poolFor a pool of connections to one server, whose connections are handed to the given handler first
   * @param waitMs  {@code QUEEN_PG_FAILOVER_WAIT_MS}: how long after losing its primary a call waits for the next
   */
  public PrimaryPool(List<Config.Host> hosts, BiFunction<Config.Host, Handler<SqlConnection>, Pool> poolFor,
                     Topology topology, long waitMs) {
    this.hosts = List.copyOf(hosts);
    this.poolFor = poolFor;
    this.topology = topology;
    this.waitMs = waitMs;
    topology.listen(this::onRound);
  }

  /** The server writes go to now, if any. */
  public Optional<Config.Host> primary() {
    Current c = current;
    return c == null ? Optional.empty() : Optional.of(c.host());
  }

  /**
   * True while no server takes writes, or a call failed in a way that suggests a failover and no check has confirmed
   * the server in use since: the window in which a pop, an ack or a read that fails answers 503.
   */
  public boolean degraded() {
    return current == null || failureAt > confirmedAt;
  }

  private void onRound(Topology.Round round) {
    List<ServerState> writable = new ArrayList<>();
    for (Config.Host h : hosts) {
      ServerState s = round.states().get(h);
      if (s != null && s.writable()) {
        writable.add(s);
        newestTimeline.merge(s.systemId(), s.timeline(), Math::max);
      }
    }
    Current cur = current;
    ServerState mine = cur == null ? null : round.states().get(cur.host());
    if (mine != null && takes(mine) && mine.timeline() == cur.timeline()) {
      if (mine.checkedAt() > failureAt) confirmedAt = mine.checkedAt();
    } else {
      ServerState next = null;
      for (ServerState s : writable) {
        if (!takes(s)) {
          if (fenced.add(s.host() + "@" + s.timeline())) {
            log.warn("PostgreSQL {} takes writes on timeline {} but timeline {} exists: a demoted primary, not used "
                + "(if the cluster was restored to an older timeline on purpose, restart the node)", s.host(),
                s.timeline(), newestTimeline.get(s.systemId()));
          }
        } else if (next == null) {
          next = s;
        }
      }
      switchTo(next, mine == null ? "not checked" : describe(mine), round);
    }
    Current now = current;
    if (now == null) return;
    long seen = checkedAt(now);
    for (Waiter w : List.copyOf(waiters)) if (seen >= w.notBefore) resolve(w, now);
  }

  /** When the last check of the server in use began (0: never checked). */
  private long checkedAt(Current c) {
    ServerState s = topology.last().states().get(c.host());
    return s == null ? 0 : s.checkedAt();
  }

  /** Writable, and not on a timeline older than one seen for its cluster. */
  private boolean takes(ServerState s) {
    return s.writable() && s.timeline() >= newestTimeline.getOrDefault(s.systemId(), 0);
  }

  private void switchTo(ServerState next, String reason, Topology.Round round) {
    Current old = current;
    if (next == null) {
      why = summary(round);
      if (old != null) {
        current = null;
        lostAt = System.currentTimeMillis();
        log.warn("PostgreSQL primary {} lost ({}); no writable server: calls wait up to {} ms for one, then pushes "
            + "are spooled and pops, acks and reads answer 503 until one is back ({}); {} calls in flight there given "
            + "up", old.host(), reason, waitMs, why, old.calls().size());
        old.abandon("lost (" + reason + ")");
      } else if (lostAt == 0) {
        lostAt = System.currentTimeMillis();
        log.warn("PostgreSQL: no writable server ({}); pushes are spooled until one is found", why);
      }
      return;
    }
    Pool pool = poolFor.apply(next.host(), this::checkConnection);
    current = new Current(next.host(), next.systemId(), next.timeline(), pool, new Calls());
    confirmedAt = next.checkedAt();
    failureAt = 0;
    long lost = lostAt;
    lostAt = 0;
    if (old == null) {
      String after = lost == 0 ? "" : String.format(", after %.1f s without one",
          (System.currentTimeMillis() - lost) / 1e3);
      log.info("PostgreSQL primary: {} (timeline {}, {} of {} servers{})", next.host(), next.timeline(),
          hosts.indexOf(next.host()) + 1, hosts.size(), after);
    } else {
      log.warn("PostgreSQL primary: {} (timeline {}), was {} ({}); {} calls in flight there given up", next.host(),
          next.timeline(), old.host(), reason, old.calls().size());
      old.abandon("replaced (" + reason + ")");
    }
  }

  /** Each new connection: a read-only server (a standby, or a primary being demoted) asks for a check at once. */
  private void checkConnection(SqlConnection conn) {
    conn.query("SELECT pg_is_in_recovery() OR current_setting('transaction_read_only') = 'on'").execute()
        .onComplete(ar -> {
          if (ar.failed() || Boolean.TRUE.equals(ar.result().iterator().next().getBoolean(0))) {
            failureAt = System.currentTimeMillis();
            topology.checkSoon();
          }
          conn.close(); // hands the connection to the pool (its refusal, if any, answers the first write)
        });
  }

  @Override
  public <T> Future<T> execute(Function<Pool, Future<T>> call) {
    return execute(call, true);
  }

  /** A call on the primary, waiting for one within the failover window; {@code again}: run once more if cut. */
  private <T> Future<T> execute(Function<Pool, Future<T>> call, boolean again) {
    Current cur = current;
    if (cur != null) return run(cur, call, again);
    long lost = lostAt;
    long deadline = (lost == 0 ? System.currentTimeMillis() : lost) + waitMs;
    if (System.currentTimeMillis() >= deadline) return Future.failedFuture(noWritable());
    return await(0, deadline).compose(c -> c == null ? Future.failedFuture(noWritable()) : run(c, call, again));
  }

  private <T> Future<T> run(Current cur, Function<Pool, Future<T>> call, boolean again) {
    return cur.calls().track(call.apply(cur.pool())).recover(e -> {
      if (!Failures.cut(e)) return Future.failedFuture(e);
      long failed = System.currentTimeMillis();
      if (current == cur) {
        failureAt = failed;
        topology.checkSoon();
      }
      if (!again || waitMs == 0) return Future.failedFuture(e);
      Current now = current;
      if (now != null && now != cur) return run(now, call, false); // already replaced
      return this.await(failed, failed + waitMs).compose(c -> c == null ? Future.failedFuture(e) : run(c, call, false));
    });
  }

  private NoWritableServer noWritable() {
    return new NoWritableServer("no writable PostgreSQL server (" + why + ")");
  }

  /**
   * The primary once a check of it begun at or after {@code notBefore} confirms it, or null at {@code deadline};
   * completed on the caller's context.
   */
  private Future<Current> await(long notBefore, long deadline) {
    Waiter w = new Waiter(Vertx.currentContext(), notBefore);
    topology.context().runOnContext(v -> {
      Current now = current;
      if (now != null && checkedAt(now) >= notBefore) {
        resolve(w, now);
        return;
      }
      waiters.add(w);
      w.timer = topology.vertx().setTimer(Math.max(1, deadline - System.currentTimeMillis()), t -> resolve(w, null));
    });
    return w.promise.future();
  }

  /** Topology context only. */
  private void resolve(Waiter w, Current c) {
    if (w.done) return;
    w.done = true;
    waiters.remove(w);
    if (w.timer >= 0) topology.vertx().cancelTimer(w.timer);
    if (w.caller == null) w.promise.complete(c);
    else w.caller.runOnContext(v -> w.promise.complete(c));
  }

  private static String describe(ServerState s) {
    return s.reachable() ? s.role() + (s.timeline() > 0 ? " on timeline " + s.timeline() : "")
        : "unreachable: " + s.error();
  }

  private String summary(Topology.Round round) {
    List<String> parts = new ArrayList<>();
    for (Config.Host h : hosts) {
      ServerState s = round.states().get(h);
      parts.add(h + " " + (s == null ? "not checked" : describe(s)));
    }
    return String.join(", ", parts);
  }

  @Override
  public Future<SqlConnection> getConnection() {
    return execute(Pool::getConnection);
  }

  /**
   * The whole transaction on the primary's pool: given up at once if the server is lost under it (a frozen server
   * would hold it), and, unlike a single statement, not run again.
   */
  @Override
  public <T> Future<T> withTransaction(Function<SqlConnection, Future<T>> function) {
    return execute(p -> p.withTransaction(function), false);
  }

  @Override
  public <T> Future<T> withConnection(Function<SqlConnection, Future<T>> function) {
    return execute(p -> p.withConnection(function), false);
  }

  @Override
  public int size() {
    Current cur = current;
    return cur == null ? 0 : cur.pool().size();
  }

  /** Closes the pool in use; calls waiting for a primary fail. */
  @Override
  public Future<Void> close() {
    Current cur = current;
    current = null;
    lostAt = 1; // every later call fails at once
    topology.context().runOnContext(v -> {
      for (Waiter w : List.copyOf(waiters)) resolve(w, null);
    });
    if (cur == null) return Future.succeededFuture();
    cur.calls().abandon("the node is closing");
    return cur.pool().close();
  }
}
