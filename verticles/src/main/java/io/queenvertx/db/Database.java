package io.queenvertx.db;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The node's database: its PostgreSQL pool and, built once over it, every procedure facade and store. Verticles and
 * routes are handed the facades they use; none of them sees the pool, a tuple or SQL text (ArchitectureTest).
 */
public final class Database {
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
  private final SystemState system;
  private final RedriveTasks redriveTasks;
  private final WebhookStore webhooks;
  private final StatsStore stats;

  /** {@code popMaxBytes}: the byte budget of every pop ({@code QUEEN_POP_MAX_BYTES}; 0: none). */
  public Database(Vertx vertx, Pool pool, long popMaxBytes) {
    this.pool = pool;
    this.pushes = new PushProcedures(pool);
    this.segments = new SegmentProcedures(pool);
    this.acks = new AckProcedures(pool);
    this.ackFusion = AckFusion.of(vertx, pool);
    this.popFusion = PopFusion.of(vertx, pool, popMaxBytes);
    this.queues = new QueueProcedures(pool);
    this.inspection = new InspectionProcedures(pool);
    this.dlq = new DlqProcedures(pool);
    this.groups = new GroupProcedures(pool);
    this.maintenance = new MaintenanceProcedures(pool);
    this.reports = new ReportProcedures(pool);
    this.system = new SystemState(pool);
    this.redriveTasks = new RedriveTasks(pool);
    this.webhooks = new WebhookStore(pool);
    this.stats = new StatsStore(pool);
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

  public Future<Void> close() {
    return pool.close();
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

  public ReportProcedures reports() {
    return reports;
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
}
