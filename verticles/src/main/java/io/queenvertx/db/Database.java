package io.queenvertx.db;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The node's database: its PostgreSQL servers ({@link PgServers}: the primary pool, which follows a failover, and the
 * read pool, a replica when one is fit) and, built once over them, every procedure facade and store. The read-only
 * listings (status, resources, analytics, the message and DLQ listings, a message's detail) read from the read pool,
 * everything else from the primary. Verticles and routes are handed the facades they use; none of them sees a pool, a
 * tuple or SQL text (ArchitectureTest).
 */
public final class Database {
  private final PgServers servers;
  private final Pool pool;
  private final PushProcedures pushes;
  private final SegmentProcedures segments;
  private final AckProcedures acks;
  private final AckFusion ackFusion;
  private final PopFusion popFusion;
  private final QueueProcedures queues;
  private final InspectionProcedures inspection;
  private final DlqProcedures dlq;
  private final GroupProcedures groups;
  private final MaintenanceProcedures maintenance;
  private final ReportProcedures reports;
  private final ReportProcedures readReports;
  private final SegmentProcedures readSegments;
  private final SystemState system;
  private final RedriveTasks redriveTasks;
  private final WebhookStore webhooks;
  private final StatsStore stats;
  private final KvProcedures kv;
  private final LockProcedures locks;
  private final TimerProcedures timers;

  /** {@code popMaxBytes}: the byte budget of every pop ({@code QUEEN_POP_MAX_BYTES}; 0: none). */
  public Database(Vertx vertx, PgServers servers, long popMaxBytes) {
    this.servers = servers;
    this.pool = servers.primary();
    Pool reads = servers.reads();
    this.pushes = new PushProcedures(pool);
    this.segments = new SegmentProcedures(pool);
    this.acks = new AckProcedures(pool);
    this.ackFusion = AckFusion.of(vertx, pool);
    this.popFusion = PopFusion.of(vertx, pool, popMaxBytes);
    this.queues = new QueueProcedures(pool);
    this.inspection = new InspectionProcedures(pool, reads);
    this.dlq = new DlqProcedures(pool, reads);
    this.groups = new GroupProcedures(pool);
    this.maintenance = new MaintenanceProcedures(pool);
    this.reports = new ReportProcedures(pool);
    this.readReports = new ReportProcedures(reads);
    this.readSegments = new SegmentProcedures(reads);
    this.system = new SystemState(pool);
    this.redriveTasks = new RedriveTasks(pool);
    this.webhooks = new WebhookStore(pool);
    this.stats = new StatsStore(pool);
    this.kv = new KvProcedures(pool);
    this.locks = new LockProcedures(pool);
    this.timers = new TimerProcedures(pool);
  }

  /** Runs {@code work} in one transaction: committed when its future succeeds, rolled back when it fails. */
  public <T> Future<T> transaction(Function<Transaction, Future<T>> work) {
    return pool.withTransaction(conn -> work.apply(new Transaction(conn)));
  }

  /** Whether the database answers a trivial statement within {@code timeoutMs}. */
  public Future<Boolean> ping(long timeoutMs) {
    return pool.query("SELECT 1").execute().timeout(timeoutMs, TimeUnit.MILLISECONDS).map(rows -> true)
        .otherwise(false);
  }

  /** Connections the pool holds open (lent out or idle). */
  public int connections() {
    return pool.size();
  }

  /** Stops the server checks and closes every pool. */
  public Future<Void> close() {
    return servers.close();
  }

  /** The node's PostgreSQL servers (their roles and lag, for {@code /api/v1/system/nodes}). */
  public PgServers servers() {
    return servers;
  }

  /** The pool, for the stores of this package and the composition root only. */
  public Pool pool() {
    return pool;
  }

  public PushProcedures pushes() {
    return pushes;
  }

  public SegmentProcedures segments() {
    return segments;
  }

  public AckProcedures acks() {
    return acks;
  }

  public AckFusion ackFusion() {
    return ackFusion;
  }

  public PopFusion popFusion() {
    return popFusion;
  }

  public QueueProcedures queues() {
    return queues;
  }

  public InspectionProcedures inspection() {
    return inspection;
  }

  public DlqProcedures dlq() {
    return dlq;
  }

  public GroupProcedures groups() {
    return groups;
  }

  public MaintenanceProcedures maintenance() {
    return maintenance;
  }

  /** The reports on the primary (those that must see the latest write, and the paged listings). */
  public ReportProcedures reports() {
    return reports;
  }

  /** The read-only reports on the read pool (status, resources, analytics). */
  public ReportProcedures readReports() {
    return readReports;
  }

  /** Segment reads on the read pool (the inspection service's). */
  public SegmentProcedures readSegments() {
    return readSegments;
  }

  /** Key-value state (R__96_kv.sql). */
  public KvProcedures kv() {
    return kv;
  }

  /** Locks and semaphores (R__98_locks.sql). */
  public LockProcedures locks() {
    return locks;
  }

  public SystemState system() {
    return system;
  }

  public RedriveTasks redriveTasks() {
    return redriveTasks;
  }

  public WebhookStore webhooks() {
    return webhooks;
  }

  public StatsStore stats() {
    return stats;
  }

  /** The timer procedures on the pool: each call its own transaction. */
  public TimerProcedures timers() {
    return timers;
  }
}
