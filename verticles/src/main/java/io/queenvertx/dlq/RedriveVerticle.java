package io.queenvertx.dlq;

import java.util.Optional;
import io.queenvertx.metrics.BrokerMetrics;
import io.queenvertx.codec.EnvelopeCipher;
import io.queenvertx.kernel.MaintenanceFlags;
import io.queenvertx.db.Database;
import io.queenvertx.kernel.Config;
import io.queenvertx.db.RedriveTasks;
import io.queenvertx.bus.Addresses;
import io.queenvertx.bus.DlqMoveCommand;
import io.queenvertx.bus.LocalCodec;
import io.queenvertx.bus.Verdict;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.Message;
import io.vertx.sqlclient.Row;
import java.time.OffsetDateTime;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs bulk redrive tasks (issue #10). Tasks live in {@code queen.dlq_redrive_tasks} ({@link RedriveTasks}); a node claims one that nobody
 * holds, or whose holder stopped heart-beating (its node died), and moves the matching dead-letter rows oldest first
 * in chunks ({@link RedriveChunk}): each chunk is one transaction that pushes one segment per destination, deletes
 * the rows and records the progress (keyset position and counts) only while this node still owns the running task,
 * so a row is never both replayed and kept, never replayed twice, and a cancel or a take-over stops the task at once.
 * A chunk the fast path cannot take (a row this node cannot pack for its destination) is moved one row at a time
 * through the DLQ mover, which records each row's own verdict. {@code maxPerSecond} 0 (unset) is no limit;
 * otherwise chunks of a tenth of the rate are paced to it.
 */
public final class RedriveVerticle extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(RedriveVerticle.class);
  static final long CLAIM_PERIOD_MS = 1000;
  /** Rows per chunk without a rate limit: one transaction, one segment per destination partition. */
  static final int CHUNK = 2000;

  private final RedriveTasks tasks;
  private final Config config;
  private final Database db;
  private final MaintenanceFlags maintenance;
  private final Optional<EnvelopeCipher> cipher;
  private final BrokerMetrics metrics;
  private RedriveChunk chunks;
  private final String owner;
  private final long staleMs;
  private boolean busy;

  public RedriveVerticle(Config config, Database db, MaintenanceFlags maintenance, Optional<EnvelopeCipher> cipher,
                         BrokerMetrics metrics, long staleMs) {
    this.tasks = db.redriveTasks();
    this.config = config;
    this.db = db;
    this.maintenance = maintenance;
    this.cipher = cipher;
    this.metrics = metrics;
    this.owner = config.serverId() + "#" + ProcessHandle.current().pid() + "#" + UUID.randomUUID();
    this.staleMs = staleMs;
  }

  @Override
  public Future<?> start() {
    chunks = new RedriveChunk(config, db, cipher, metrics, vertx);
    vertx.setPeriodic(CLAIM_PERIOD_MS, t -> claim());
    return vertx.eventBus().<Object>localConsumer(Addresses.REDRIVE_NUDGE, m -> claim()).completion();
  }

  private void claim() {
    if (busy) return;
    busy = true;
    tasks.claim(owner, staleMs)
        .onComplete(ar -> {
          if (ar.failed() || ar.result() == null) {
            busy = false;
            return;
          }
          Row t = ar.result();
          log.info("redrive task {} on queue {} taken by this node", t.getUUID("id"), t.getString("queue"));
          step(new Task(t));
        });
  }

  /** A claimed task: its settings, and how many rows it has handled (kept here; the row is updated per chunk). */
  private static final class Task {
    final UUID id;
    final UUID tenant;
    final String destQueue;
    final String destPartition;
    final int perSecond;
    final Long maxRows;
    long handled;
    /** Rows still to move one at a time after a chunk the fast path gave back. */
    int oneByOne;

    Task(Row r) {
      id = r.getUUID("id");
      tenant = r.getUUID("tenant_id");
      destQueue = r.getString("dest_queue");
      destPartition = r.getString("dest_partition");
      perSecond = Math.max(0, r.getInteger("max_per_second"));
      maxRows = r.getLong("max_rows");
      handled = r.getLong("moved") + r.getLong("duplicate") + r.getLong("gone") + r.getLong("failed");
    }
  }

  private void step(Task t) {
    long started = System.currentTimeMillis();
    long before = t.handled;
    Future<Boolean> work;
    if (t.maxRows != null && t.handled >= t.maxRows) {
      work = finish(t, "completed");
    } else if (t.oneByOne > 0) {
      t.oneByOne--;
      work = tasks.next(t.id).compose(next -> next == null ? finish(t, "completed") : move(t, next));
    } else if (maintenance.pushMaintenance()) {
      work = heartbeat(t); // nothing may be written to the log: the task waits on the same row
    } else {
      work = chunk(t);
    }
    work.onComplete(ar -> {
      if (ar.failed()) log.warn("redrive task {} step failed: {}", t.id, ar.cause().getMessage());
      if (ar.succeeded() && Boolean.TRUE.equals(ar.result())) {
        long rows = Math.max(1, t.handled - before);
        long wait = t.perSecond == 0 ? 0
            : Math.max(0, rows * 1000 / t.perSecond - (System.currentTimeMillis() - started));
        if (wait == 0) context.runOnContext(x -> step(t));
        else vertx.setTimer(wait, x -> step(t));
      } else if (ar.failed()) {
        vertx.setTimer(1000, x -> step(t));
      } else {
        busy = false;
      }
    });
  }

  /** Rows per chunk: no limit moves {@link #CHUNK}; a rate moves a tenth of a second's worth (at least one). */
  static int chunkSize(int perSecond, Long maxRows, long handled) {
    int n = perSecond == 0 ? CHUNK : Math.max(1, Math.min(CHUNK, perSecond / 10));
    return maxRows == null ? n : (int) Math.min(n, maxRows - handled);
  }

  /** Moves one chunk; true to go on. */
  private Future<Boolean> chunk(Task t) {
    int size = chunkSize(t.perSecond, t.maxRows, t.handled);
    return chunks.move(t.id, owner, t.tenant, t.destQueue, t.destPartition, size).compose(o -> switch (o.kind()) {
      case MOVED -> {
        t.handled += o.moved();
        yield Future.succeededFuture(true);
      }
      case ONE_BY_ONE -> {
        t.oneByOne = size;
        yield Future.succeededFuture(true);
      }
      case DONE -> finish(t, "completed");
      case STOPPED -> Future.succeededFuture(false);
    });
  }

  /** Moves one row; true to go on. Push maintenance pauses the task on the same row. */
  private Future<Boolean> move(Task t, Row next) {
    UUID rowId = next.getUUID("id");
    OffsetDateTime failedAt = next.getOffsetDateTime("failed_at");
    var cmd = new DlqMoveCommand(t.tenant, rowId.toString(), null, null, t.destQueue, t.destPartition);
    return vertx.eventBus().<Verdict>request(Addresses.DLQ_MOVE, cmd, LocalCodec.options(60_000))
        .map(Message::body)
        .compose(v -> {
          if (v.status() == 503) {
            return heartbeat(t);
          }
          String verdict;
          String error = null;
          if (v.status() == 200) verdict = v.body().getString("result");
          else if (v.status() == 404) verdict = "gone";
          else {
            verdict = "failed";
            error = v.body().getString("error");
          }
          t.handled++;
          return record(t, verdict, rowId, failedAt, error);
        });
  }

  private Future<Boolean> record(Task t, String verdict, UUID row, OffsetDateTime failedAt, String error) {
    return tasks.record(t.id, owner, verdict, row, failedAt, error);
  }

  private Future<Boolean> heartbeat(Task t) {
    return tasks.heartbeat(t.id, owner);
  }

  private Future<Boolean> finish(Task t, String status) {
    return tasks.finish(t.id, owner, status).map(ended -> {
      if (ended) log.info("redrive task {} {}", t.id, status);
      return false;
    });
  }
}
