package io.queenvertx.db;

import io.queenvertx.kernel.Config;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/**
 * The node's view of its PostgreSQL servers: every {@code QUEEN_PG_CHECK_INTERVAL_MS} (and at once when a query
 * failed in a way that suggests a failover, {@link #checkSoon}) each server is checked ({@link ServerProbe}), all in
 * parallel, and the listeners ({@link PrimaryPool}, {@link ReadPool}) get the round's states. One round runs at a
 * time, on one context of its own; a round lasts at most one interval (the first: until every server answered or
 * timed out).
 */
public final class Topology {
  /** A round's result: the states by server, and when the round began. */
  public record Round(Map<Config.Host, ServerState> states, long startedAt) {}

  private final Vertx vertx;
  private final Context context;
  private final List<ServerProbe> probes = new ArrayList<>();
  private final long intervalMs;
  private final List<java.util.function.Consumer<Round>> listeners = new CopyOnWriteArrayList<>();
  private volatile Round last = new Round(Map.of(), 0);
  private boolean running;
  private boolean again;
  private boolean closed;
  private long timer = -1;

  /**
   * @param hosts   every server to watch, each once
   * @param connect a one-connection pool to a server, for its checks
   */
  public Topology(Vertx vertx, Collection<Config.Host> hosts, Function<Config.Host, Pool> connect, long intervalMs,
                  long timeoutMs) {
    this.vertx = vertx;
    this.context = vertx.getOrCreateContext();
    this.intervalMs = intervalMs;
    for (Config.Host h : hosts) probes.add(new ServerProbe(h, connect, timeoutMs));
  }

  /** Adds a listener of every round (called on the topology's context). */
  void listen(java.util.function.Consumer<Round> listener) {
    listeners.add(listener);
  }

  /** Runs the first round, then one every interval; completes once the first round's listeners ran. */
  public Future<Void> start() {
    Promise<Void> first = Promise.promise();
    context.runOnContext(v -> {
      round(first, true);
      timer = vertx.setPeriodic(intervalMs, t -> round(null, false));
    });
    return first.future();
  }

  /** Asks for a round now (one more after the running one, if a round is running); from any thread. */
  public void checkSoon() {
    context.runOnContext(v -> round(null, false));
  }

  Context context() {
    return context;
  }

  Vertx vertx() {
    return vertx;
  }

  /** The last round's states. */
  public Round last() {
    return last;
  }

  /**
   * Checks every server. The round ends when every check has answered or, unless {@code waitAll}, after one interval:
   * a check still running then (a server slow to answer or not answering, up to the check timeout) counts with what
   * its server's last check found, and goes on into the next round. So a frozen server delays no other's news.
   */
  private void round(Promise<Void> done, boolean waitAll) {
    if (closed) {
      if (done != null) done.tryComplete();
      return;
    }
    if (running) {
      again = true;
      if (done != null) done.tryComplete();
      return;
    }
    running = true;
    long started = System.currentTimeMillis();
    List<Future<ServerState>> checks = new ArrayList<>(probes.size());
    for (ServerProbe p : probes) checks.add(p.check());
    Promise<Void> enough = Promise.promise();
    Future.join(checks).onComplete(ar -> enough.tryComplete());
    long cut = waitAll ? -1 : vertx.setTimer(intervalMs, t -> enough.tryComplete());
    enough.future().onComplete(ar -> {
      if (cut >= 0) vertx.cancelTimer(cut);
      Map<Config.Host, ServerState> states = new LinkedHashMap<>();
      for (int i = 0; i < probes.size(); i++) {
        Future<ServerState> f = checks.get(i);
        ServerState s = f.isComplete() ? f.result() : probes.get(i).last();
        states.put(s.host(), s);
      }
      deliver(new Round(java.util.Collections.unmodifiableMap(states), started));
      running = false;
      if (done != null) done.tryComplete();
      if (again && !closed) {
        again = false;
        round(null, false);
      }
    });
  }

  /** Makes {@code r} the last round and hands it to the listeners; on the topology's context. */
  void deliver(Round r) {
    last = r;
    for (var l : listeners) {
      try {
        l.accept(r);
      } catch (RuntimeException e) {
        org.slf4j.LoggerFactory.getLogger(Topology.class).error("PostgreSQL server check listener failed", e);
      }
    }
  }

  /** Stops the checks and closes their connections. */
  public Future<Void> close() {
    Promise<Void> p = Promise.promise();
    context.runOnContext(v -> {
      closed = true;
      if (timer >= 0) vertx.cancelTimer(timer);
      for (ServerProbe probe : probes) probe.close();
      p.complete();
    });
    return p.future();
  }
}
