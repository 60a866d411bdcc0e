package io.queenvertx.boot;

import io.queenvertx.node.NodeContext;
import io.queenvertx.kernel.Config;
import io.queenvertx.kernel.BootException;
import io.queenvertx.kernel.ConfigException;
import io.queenvertx.kernel.MaintenanceFlags;
import io.queenvertx.db.SystemState;
import io.queenvertx.db.Database;
import io.queenvertx.bus.Addresses;
import io.queenvertx.bus.LocalCodec;
import io.queenvertx.dlq.DlqMoverVerticle;
import io.queenvertx.tenancy.CachedOwnershipGate;
import io.queenvertx.kernel.OwnershipGate;
import io.queenvertx.codec.EnvelopeCipher;
import io.queenvertx.consumer.ConsumerVerticle;
import io.queenvertx.decoder.SegmentCache;
import io.queenvertx.decoder.SegmentDecoderVerticle;
import io.queenvertx.http.HttpVerticle;
import io.queenvertx.log.LogWriterVerticle;
import io.queenvertx.maintenance.RetentionVerticle;
import io.queenvertx.metrics.BrokerMetrics;
import io.vertx.core.ThreadingModel;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import io.vertx.sqlclient.Pool;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One broker node: the embedded database when none is configured, the schema, a Vert.x instance (clustered when
 * configured) and the verticles. {@link #start} blocks the calling thread until the node serves or has failed, and
 * never runs on an event loop.
 */
public final class Node implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Node.class);

  private final Config config;
  private final Optional<EmbeddedDatabase> embedded;
  private final Vertx vertx;
  private final Database database;
  private final List<String> deployments;
  private final SegmentCache segmentCache;
  private final OwnershipGate gate;
  private volatile boolean closed;

  private Node(Config config, Optional<EmbeddedDatabase> embedded, Vertx vertx, Database database,
               List<String> deployments, SegmentCache segmentCache, OwnershipGate gate) {
    this.segmentCache = segmentCache;
    this.gate = gate;
    this.config = config;
    this.embedded = embedded;
    this.vertx = vertx;
    this.database = database;
    this.deployments = deployments;
  }

  /**
   * Starts the node. Order: the HTTP port is checked and held first ({@link PortReservation}: a busy {@code PORT}
   * stops the boot before PostgreSQL starts), then the embedded PostgreSQL (its data folder locked,
   * {@link DataFolderLock}) or the external one is awaited, then the schema, Vert.x and the verticles; the HTTP
   * verticles, which release the held port and listen on it, come last.
   */
  public static Node start(Config config) throws Exception {
    try (PortReservation port = PortReservation.hold(config.http())) {
      return start(config, port);
    }
  }

  private static Node start(Config config, PortReservation port) throws Exception {
    Optional<EmbeddedDatabase> embedded = Optional.empty();
    Config effective = config;
    var pg = config.postgres();
    if (pg.connection().isEmpty()) {
      var db = EmbeddedDatabase.start(pg.dataDir(), pg.embeddedPort(), Math.max(200, pg.poolSize() + 40),
          pg.embeddedSharedBuffersMb());
      embedded = Optional.of(db);
      effective = config.withDatabase(db.connection());
    }
    Vertx vertx = null;
    io.queenvertx.db.PgServers servers = null;
    BrokerMetrics metrics;
    try {
      Config.Database db = effective.postgres().connection().orElseThrow();
      // only when the schema is applied at boot: with QUEEN_APPLY_SCHEMA=false a node boots without its database
      // (pushes spool until PostgreSQL is back)
      if (embedded.isEmpty() && pg.applySchema()) awaitDatabase(db, effective.startup().dbConnectTimeoutS());
      if (pg.applySchema()) Migrations.apply(db);
      metrics = new BrokerMetrics();
      vertx = createVertx(effective, metrics);
      servers = PoolFactory.create(vertx, effective, db);
      servers.register(vertx);
      var database = new Database(vertx, servers, effective.pop().maxBytes());
      BrokerMetrics nodeMetrics = metrics;
      var nodeConfig = effective;
      Optional<EnvelopeCipher> cipher = cipherOf(effective);
      OwnershipGate gate = effective.security().tenancyHeader()
          ? new CachedOwnershipGate(database.queues(), vertx.sharedData().getAsyncMap(CachedOwnershipGate.MAP))
          : OwnershipGate.OPEN;
      var flags = new MaintenanceFlags();
      var ctx = new NodeContext(effective, database, gate, flags, cipher, metrics);
      loadFlags(database, flags);
      vertx.setPeriodic(effective.maintenance().cacheRefreshIntervalMs(), t -> loadFlags(database, flags));
      vertx.eventBus().<io.vertx.core.json.JsonObject>consumer(Addresses.MAINTENANCE_CHANGED,
          m -> SystemState.applyAnnouncement(m.body(), flags));
      vertx.eventBus().registerCodec(new LocalCodec());
      io.queenvertx.codec.api.JsonRecordCodec.registerAll(vertx.eventBus());
      vertx.eventBus().<io.vertx.core.json.JsonObject>consumer(Addresses.QUEUE_CHANGED, m -> {
        var ids = m.body().getJsonArray("partitionIds");
        if (ids == null) return;
        List<java.util.UUID> pids = new ArrayList<>();
        for (Object o : ids) pids.add(java.util.UUID.fromString(o.toString()));
        gate.invalidate(pids);
      });
      var cache = new SegmentCache(effective.engine().segmentCacheEntries());
      metrics.gauge("queen_segment_cache_hits", "segment cache hits", cache::hits);
      metrics.gauge("queen_segment_cache_misses", "segment cache misses", cache::misses);
      metrics.gauge("queen_segment_decodes", "segment blobs decoded", cache::decodes);
      metrics.gauge("queen_segment_cache_entries", "decoded segments cached", cache::size);
      List<String> ids = new ArrayList<>();
      var worker = new DeploymentOptions().setThreadingModel(ThreadingModel.WORKER);
      var frameDecoder = new io.queenvertx.decoder.FrameDecoder(cache, cipher);
      ids.add(await(vertx.deployVerticle(() -> new SegmentDecoderVerticle(database.segments(), frameDecoder),
          new DeploymentOptions(worker).setInstances(2))));
      // On an event loop: its SQL round trips then complete without a thread hand-off (large packing, encryption and
      // every spool file access go to the worker pool, see log/Offload).
      ids.add(await(vertx.deployVerticle(new LogWriterVerticle(effective, database, flags, metrics, cipher))));
      // One consumer per event loop (consecutive contexts take consecutive loops), so the HTTP routes of every loop
      // find one on their own thread (ConsumerInbox).
      ids.add(await(vertx.deployVerticle(() -> new ConsumerVerticle(nodeConfig, database, nodeMetrics, frameDecoder),
          new DeploymentOptions().setInstances(effective.http().eventLoops()))));
      ids.add(await(vertx.deployVerticle(new DlqMoverVerticle(effective, database, metrics, cipher),
          new DeploymentOptions(worker))));
      ids.add(await(vertx.deployVerticle(new RetentionVerticle(effective, database.maintenance(), database.kv(),
          database.locks(), metrics.state()))));
      ids.add(await(vertx.deployVerticle(new io.queenvertx.dlq.RedriveVerticle(effective, database, flags, cipher,
          metrics, effective.maintenance().redriveStaleMs()))));
      ids.add(await(vertx.deployVerticle(new io.queenvertx.webhook.DeliveryVerticle(database))));
      if (effective.maintenance().timerSweep()) {
        ids.add(await(vertx.deployVerticle(new io.queenvertx.timers.TimerFiringVerticle(database, flags, cipher,
            metrics.timers, effective.maintenance().timerPollMs(), effective.engine().zstdLevel()))));
      }
      var auth = new io.queenvertx.auth.AuthHandler(effective.jwt(),
          io.queenvertx.auth.AuthHandler.verifier(vertx, effective.jwt()));
      ids.add(await(vertx.deployVerticle(new io.queenvertx.http.routes.EventBusApiVerticle(ctx, auth))));
      ids.add(await(vertx.deployVerticle(new io.queenvertx.stats.StatsFlusher(effective, database, metrics),
          new DeploymentOptions(worker))));
      // last: the network is served only once every verticle it talks to is listening
      port.close();
      try {
        ids.add(await(vertx.deployVerticle(() -> new HttpVerticle(ctx),
            new DeploymentOptions().setInstances(effective.http().instances()))));
      } catch (Exception e) {
        if (portInUse(e)) throw PortReservation.busy(effective.http()); // taken in the gap after the release
        throw e;
      }
      log.info("ready: queen-vertx {} node {} at http://{}:{} data dir {} PostgreSQL {} cluster {} transport {}",
          Config.VERSION, effective.serverId(), effective.http().bindAddress(), effective.http().port(), pg.dataDir(),
          embedded.isPresent() ? "embedded at " + describe(db) : describe(db), membership(effective, vertx),
          vertx.isNativeTransportEnabled() ? "native" : "nio (" + vertx.unavailableNativeTransportCause() + ")");
      return new Node(effective, embedded, vertx, database, ids, cache, gate);
    } catch (Exception e) {
      if (servers != null) servers.close();
      if (vertx != null) vertx.close();
      embedded.ifPresent(EmbeddedDatabase::close);
      throw e;
    }
  }

  /** {@code host:port,host:port/database}, for log lines. */
  static String describe(Config.Database db) {
    return db.describe() + (db.target() == Config.Target.READ_WRITE ? " (read-write)" : "");
  }

  private static String membership(Config config, Vertx vertx) {
    if (!config.cluster().enabled()) return "none (standalone)";
    var manager = ((io.vertx.core.internal.VertxInternal) vertx).clusterManager();
    int size = manager == null ? 1 : manager.getNodes().size();
    return "'" + config.cluster().name() + "' with " + size + (size == 1 ? " member" : " members")
        + " (seeds " + config.cluster().members() + ")";
  }

  /** Linux's errno of an address in use. */
  private static final int EADDRINUSE = 98;

  /** A listen that failed because another socket holds the address (JDK or native transport wording). */
  static boolean portInUse(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof java.net.BindException) return true;
      // the native transport's bind(2) failure carries its errno: EADDRINUSE
      if (t instanceof io.netty.channel.unix.Errors.NativeIoException n && n.expectedErr() == -EADDRINUSE) return true;
    }
    return false;
  }

  /**
   * Waits until the external PostgreSQL accepts a connection: nodes of a fleet often start before their database.
   * Retries with a backoff of 0.5 s doubling to 5 s and one log line per failed attempt, for at most
   * {@code timeoutS} seconds (0: one attempt), then fails with a one-line {@link BootException} (exit 1). Runs on
   * the boot thread, never on an event loop.
   */
  static void awaitDatabase(Config.Database db, int timeoutS) {
    var props = new java.util.Properties();
    props.setProperty("user", db.user());
    props.setProperty("password", db.password());
    props.setProperty("connectTimeout", "5");
    props.setProperty("loginTimeout", "10");
    String url = Migrations.jdbcUrl(db);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutS);
    long backoffMs = 500;
    for (int attempt = 1; ; attempt++) {
      String error;
      try (var c = java.sql.DriverManager.getConnection(url, props)) {
        if (attempt > 1) log.info("PostgreSQL {} is reachable (attempt {})", describe(db), attempt);
        return;
      } catch (java.sql.SQLException e) {
        error = oneLine(e);
      }
      long leftMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
      if (leftMs <= 0) {
        throw new BootException("PostgreSQL " + describe(db) + " unreachable after " + attempt
            + (attempt == 1 ? " attempt" : " attempts") + " (QUEEN_DB_CONNECT_TIMEOUT_S=" + timeoutS + "): " + error, 1);
      }
      long waitMs = Math.min(backoffMs, leftMs);
      log.warn("PostgreSQL {} not reachable (attempt {}): {}; retrying in {} ms", describe(db), attempt, error, waitMs);
      try {
        Thread.sleep(waitMs); // the boot thread backing off, not a test synchronisation
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new BootException("interrupted while waiting for PostgreSQL " + describe(db), 1);
      }
      backoffMs = Math.min(5000, backoffMs * 2);
    }
  }

  private static String oneLine(Throwable e) {
    String m = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    int nl = m.indexOf('\n');
    return nl < 0 ? m : m.substring(0, nl);
  }

  private static Vertx createVertx(Config config, BrokerMetrics metrics) throws Exception {
    var options = new VertxOptions().setPreferNativeTransport(true).setEventLoopPoolSize(config.http().eventLoops())
        .setMetricsOptions(new io.vertx.micrometer.MicrometerMetricsOptions().setEnabled(true)
            .setJvmMetricsEnabled(true)
            .setPrometheusOptions(new io.vertx.micrometer.VertxPrometheusOptions().setEnabled(true)));
    // vertx-micrometer's metrics, with the HTTP request and event-bus message meters resolved once (same series)
    var factory = new io.queenvertx.http.server.RequestMetersFactory(metrics.registry());
    var cluster = config.cluster();
    if (!cluster.enabled()) return Vertx.builder().with(options).withMetrics(factory).build();
    options.getEventBusOptions().setHost(cluster.networkInterface().isEmpty() ? "127.0.0.1" : cluster.networkInterface());
    options.getEventBusOptions().setPort(cluster.busPort());
    var manager = new HazelcastClusterManager(ClusterConfig.load(cluster));
    return await(Vertx.builder().with(options).withMetrics(factory).withClusterManager(manager).buildClustered());
  }

  /**
   * The encryption key, when configured. A malformed key is a boot error rather than a silent downgrade to
   * plaintext (issue #5: "never silent").
   */
  static Optional<EnvelopeCipher> cipherOf(Config config) {
    return config.security().encryptionKeyHex().map(hex -> {
      try {
        return EnvelopeCipher.fromHex(hex);
      } catch (IllegalArgumentException e) {
        throw new ConfigException("QUEEN_ENCRYPTION_KEY: " + e.getMessage());
      }
    });
  }

  /** Re-reads the two switches from {@link SystemState} (boot, and the periodic reconcile). */
  private static void loadFlags(Database db, MaintenanceFlags flags) {
    long seen = flags.changes();
    db.system().read().onSuccess(s -> s.applyTo(flags, seen));
  }

  public OwnershipGate ownershipGate() {
    return gate;
  }

  public SegmentCache segmentCache() {
    return segmentCache;
  }

  public Config config() {
    return config;
  }

  public Vertx vertx() {
    return vertx;
  }

  /** The node's database: its procedure facades and stores (tests reach the fusions through it). */
  public Database database() {
    return database;
  }

  /** The node's PostgreSQL pool (tests that run their own SQL). */
  public Pool pool() {
    return database.pool();
  }

  /** The node's PostgreSQL servers: the primary pool, the read pool and what the checks found. */
  public io.queenvertx.db.PgServers servers() {
    return database.servers();
  }

  /** Graceful stop: the HTTP servers drain in-flight requests, then the pool, Vert.x and the embedded database close. */
  @Override
  public synchronized void close() {
    if (closed) return;
    closed = true;
    try {
      for (int i = deployments.size() - 1; i >= 0; i--) await(vertx.undeploy(deployments.get(i)));
    } catch (Exception e) {
      log.warn("undeploy failed: {}", e.toString());
    }
    try {
      await(database.close());
      await(vertx.close());
    } catch (Exception e) {
      log.warn("vert.x did not close cleanly: {}", e.toString());
    }
    embedded.ifPresent(EmbeddedDatabase::close);
    log.info("node {} stopped", config.serverId());
  }

  static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
  }
}
