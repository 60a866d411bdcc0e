package io.queenvertx.db;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.kernel.Config;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * How {@link PrimaryPool} chooses its server from the checks' rounds (no database: the rounds are made up, the pools
 * never connect): the first writable server of the list, kept while writable, never a demoted primary on an older
 * timeline, and a call's wait for a primary bounded by {@code QUEEN_PG_FAILOVER_WAIT_MS}.
 */
class PrimaryPoolTest {
  static final Config.Host A = new Config.Host("a.invalid", 5001);
  static final Config.Host B = new Config.Host("b.invalid", 5002);
  static final Config.Host C = new Config.Host("c.invalid", 5003);
  static final String CLUSTER = "7000000000000000001";

  Vertx vertx;
  Topology topology;
  Map<Pool, Config.Host> pools = new java.util.concurrent.ConcurrentHashMap<>();

  @BeforeEach
  void start() {
    vertx = Vertx.vertx();
    topology = new Topology(vertx, List.of(), h -> null, 60_000, 1000);
  }

  @AfterEach
  void stop() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  PrimaryPool pool(long waitMs) {
    return new PrimaryPool(List.of(A, B, C), (h, onConnect) -> {
      Pool p = Pool.pool(vertx, new PgConnectOptions().setHost(h.host()).setPort(h.port()), new PoolOptions());
      pools.put(p, h);
      return p;
    }, topology, waitMs);
  }

  static ServerState primary(Config.Host h, int timeline) {
    return new ServerState(h, true, false, false, CLUSTER, timeline, 100, -1, null, System.currentTimeMillis());
  }

  static ServerState standby(Config.Host h) {
    return new ServerState(h, true, true, true, CLUSTER, 0, 90, 5, null, System.currentTimeMillis());
  }

  static ServerState gone(Config.Host h) {
    return ServerState.unreachable(h, "Connection refused");
  }

  /** Hands a round to the listeners on the topology's context and waits until they ran. */
  void round(ServerState... states) throws Exception {
    Map<Config.Host, ServerState> m = new LinkedHashMap<>();
    for (ServerState s : states) m.put(s.host(), s);
    Promise<Void> done = Promise.promise();
    topology.context().runOnContext(v -> {
      topology.deliver(new Topology.Round(m, System.currentTimeMillis()));
      done.complete();
    });
    done.future().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  /** The host whose pool a call runs on. */
  Future<Config.Host> callHost(PrimaryPool p) {
    return p.execute(pool -> Future.succeededFuture(pools.get(pool)));
  }

  @Test
  void theFirstWritableServerOfTheListIsTakenAndKeptWhileWritable() throws Exception {
    PrimaryPool p = pool(0);
    round(standby(A), primary(B, 1), standby(C));
    assertThat(p.primary()).contains(B);
    assertThat(p.degraded()).isFalse();
    assertThat(callHost(p).toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS)).isEqualTo(B);
    round(standby(A), primary(B, 1), gone(C));
    assertThat(p.primary()).contains(B);
  }

  @Test
  void aDemotedPrimaryOnAnOlderTimelineIsNeverTakenBack() throws Exception {
    PrimaryPool p = pool(0);
    round(primary(A, 1), standby(B), standby(C));
    assertThat(p.primary()).contains(A);
    // A frozen, B promoted on timeline 2
    round(gone(A), primary(B, 2), standby(C));
    assertThat(p.primary()).contains(B);
    // A wakes up still believing it is the primary while B is out of reach: not taken, no primary at all
    round(primary(A, 1), gone(B), standby(C));
    assertThat(p.primary()).isEmpty();
    assertThat(p.degraded()).isTrue();
    round(standby(A), primary(B, 2), standby(C));
    assertThat(p.primary()).contains(B);
  }

  @Test
  void aPrimaryRestartedOnANewTimelineGetsANewPool() throws Exception {
    PrimaryPool p = pool(0);
    round(primary(A, 1), standby(B), standby(C));
    Pool first = pools.entrySet().stream().filter(e -> e.getValue().equals(A)).findFirst().orElseThrow().getKey();
    round(primary(A, 2), standby(B), standby(C));
    assertThat(p.primary()).contains(A);
    assertThat(pools.keySet()).hasSize(2).contains(first);
  }

  @Test
  void withoutAPrimaryACallFailsAtOnceOnceTheWaitIsOver() throws Exception {
    PrimaryPool p = pool(0);
    round(standby(A), standby(B), gone(C));
    var f = callHost(p);
    assertThat(f.failed()).isTrue();
    assertThat(f.cause()).isInstanceOf(NoWritableServer.class)
        .hasMessageContaining("a.invalid:5001 standby, b.invalid:5002 standby, c.invalid:5003 unreachable");
  }

  @Test
  void aCallMadeWhileThePrimaryIsBeingReplacedRunsOnTheNextOne() throws Exception {
    PrimaryPool p = pool(5_000);
    round(primary(A, 1), standby(B), standby(C));
    round(gone(A), standby(B), standby(C));
    assertThat(p.primary()).isEmpty();
    var f = callHost(p);
    assertThat(f.isComplete()).isFalse();
    round(gone(A), primary(B, 2), standby(C));
    assertThat(f.toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS)).isEqualTo(B);
  }

  @Test
  void aCallCutByTheLossOfItsServerRunsOnceMoreOnTheNewPrimary() throws Exception {
    PrimaryPool p = pool(5_000);
    round(primary(A, 1), standby(B), standby(C));
    int[] calls = {0};
    var f = p.execute(pool -> {
      calls[0]++;
      return pools.get(pool).equals(A) ? Future.failedFuture(new io.vertx.core.VertxException("Connection closed"))
          : Future.succeededFuture(pools.get(pool));
    });
    assertThat(f.isComplete()).isFalse();
    round(gone(A), primary(B, 2), standby(C));
    assertThat(f.toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS)).isEqualTo(B);
    assertThat(calls[0]).isEqualTo(2);
    assertThat(p.degraded()).isFalse();
  }

  @Test
  void aCallHangingOnAServerThatIsLostIsGivenUpAndRunOnTheNewPrimary() throws Exception {
    PrimaryPool p = pool(5_000);
    round(primary(A, 1), standby(B), standby(C));
    Promise<Config.Host> never = Promise.promise(); // a frozen server: no answer, no error
    var f = p.execute(pool -> pools.get(pool).equals(A) ? never.future() : Future.succeededFuture(pools.get(pool)));
    round(gone(A), primary(B, 2), standby(C));
    assertThat(f.toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS)).isEqualTo(B);
    assertThat(never.future().isComplete()).isFalse();
  }

  @Test
  void aTransactionCutByTheLossOfItsServerFailsAtOnceAndIsNotRunAgain() throws Exception {
    PrimaryPool p = pool(5_000);
    round(primary(A, 1), standby(B), standby(C));
    int[] runs = {0};
    Promise<Void> never = Promise.promise();
    var f = p.withTransaction(conn -> {
      runs[0]++;
      return never.future();
    });
    round(gone(A), primary(B, 2), standby(C));
    var error = org.assertj.core.api.Assertions.catchThrowable(
        () -> f.toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS));
    assertThat(error).hasMessageContaining("call given up: PostgreSQL a.invalid:5001 replaced");
    assertThat(runs[0]).isLessThanOrEqualTo(1);
  }
}
