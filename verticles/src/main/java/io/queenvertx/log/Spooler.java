package io.queenvertx.log;

import io.queenvertx.metrics.BrokerMetrics;
import io.queenvertx.kernel.MaintenanceFlags;
import io.queenvertx.db.Database;
import io.queenvertx.db.SqlState;
import io.queenvertx.db.SystemState;
import io.queenvertx.bus.Addresses;
import io.queenvertx.bus.PushCommand;
import io.queenvertx.bus.PushItem;
import io.queenvertx.bus.PushOutcome;
import io.queenvertx.codec.Frame;
import io.queenvertx.codec.UuidV7;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The log writer's disk spool handling (ENGINE.md §9.5): pushes spooled under push maintenance, writes that failed
 * outright spooled instead of lost, and the drain that replays the spool once the database takes writes again.
 *
 * <p>The drain replays the oldest spool file until the database has taken every event of it. Events that land are cut
 * out of the file at once. A transient failure (the database unreachable or busy) keeps the events and waits, 100 ms
 * doubling to 5 s, for as long as it lasts, restarts included. A permanent one (the database rejects the data) splits
 * the failed events in halves, replayed apart, until the event it rejects is alone: only that one is set aside into
 * failed/, with the reason.
 *
 * <p>A plain object owned by the log writer and used from its context (its periodic tick and the replays' callbacks
 * included). Every file access runs on the worker pool, in order ({@link Offload#disk}); while the drain reads or
 * settles a file there, {@code draining} keeps the writer's thread out of the drain's state, so it needs no locks.
 * Replays go through the log writer's own queues ({@link Writer}), never around them.
 */
final class Spooler {
  private static final Logger log = LoggerFactory.getLogger(LogWriterVerticle.class);
  /** The drain's wait after a failed replay: doubles from the first to the cap, back to none on progress. */
  static final long DRAIN_BACKOFF_FIRST_MS = 100;
  static final long DRAIN_BACKOFF_MAX_MS = 5_000;

  /** Where replayed frames go: the log writer's queue of frames waiting for a write. */
  interface Writer {
    void enqueue(Request req, int index, Frame frame);

    void scheduleDispatch();
  }

  /** What became of one spooled event in a replay: landed, or failed with the write's error (null if none). */
  record Replayed(Spool.Event event, boolean landed, Throwable cause) {}

  private final Database db;
  private final MaintenanceFlags maintenance;
  private final BrokerMetrics metrics;
  private final Context context;
  private final Spool spool;
  private final PushEncryption encryption;
  private final Writer writer;
  private boolean draining;
  /** Replays in a row that failed transiently; the spool is unhealthy while this is not zero (read by metrics). */
  private volatile int drainFailures;
  private long drainBackoffMs;
  private long nextDrainAt;
  /** The file being replayed, its events not yet landed nor set aside, and the batches to replay next. */
  private Path drainFile;
  private List<Spool.Event> drainLeft;
  private final ArrayDeque<List<Spool.Event>> drainPlan = new ArrayDeque<>();
  /**
   * Whether this node has read the push-maintenance switch itself since it started: until then a spool left by a
   * node stopped under maintenance must not be replayed (the boot read of the switch is not awaited by anyone).
   */
  private boolean switchRead;
  private boolean switchReading;

  Spooler(Database db, MaintenanceFlags maintenance, BrokerMetrics metrics, Context context, Spool spool,
          PushEncryption encryption, Writer writer) {
    this.db = db;
    this.maintenance = maintenance;
    this.metrics = metrics;
    this.context = context;
    this.spool = spool;
    this.encryption = encryption;
    this.writer = writer;
  }

  Spool spool() {
    return spool;
  }

  /** False while the spool cannot drain (its last replay failed transiently). */
  boolean healthy() {
    return drainFailures == 0;
  }

  /** The spool's gauges and the {@code SPOOL_STATS} answer (the status routes' buffer figures). */
  void publishStats(Vertx vertx) {
    metrics.gauge("queen_file_buffer_pending", "push events waiting in this node's spool", spool::pendingEvents);
    metrics.gauge("queen_file_buffer_failed",
        "spooled push events the database refused, set aside in the spool's failed/ folder", spool::rejectedEvents);
    metrics.gauge("queen_file_buffer_db_healthy", "1 while the spool can drain, 0 while its replays fail",
        () -> healthy() ? 1 : 0);
    vertx.eventBus().<Object>localConsumer(Addresses.SPOOL_STATS, m -> m.reply(new JsonObject()
        .put("bufferedMessages", spool.pendingEvents()).put("bufferHealthy", healthy())
        .put("failedEvents", spool.rejectedEvents())));
  }

  /**
   * Push maintenance: every item goes to the disk spool and is answered {@code buffered} (or {@code failed}). An item
   * of an encrypted queue (or of a queue whose flag could not be read, when this node has a key) is spooled
   * encrypted; one whose encryption failed ({@code stored} null) is answered {@code failed} and never spooled.
   */
  void spoolRequest(Request req, Map<String, Boolean> encryptedQueues, byte[][] stored) {
    List<PushItem> items = req.cmd.items();
    List<Spool.Event> events = new ArrayList<>(items.size());
    UUID[] ids = new UUID[items.size()];
    String[] txns = new String[items.size()];
    boolean[] refused = new boolean[items.size()];
    for (int i = 0; i < items.size(); i++) {
      PushItem it = items.get(i);
      UUID id = UuidV7.next();
      ids[i] = id;
      // Missing transaction ids are minted now, so a replay of this event stays idempotent.
      String txn = it.transactionId() != null ? it.transactionId() : id.toString();
      txns[i] = txn;
      byte[] payload = stored[i];
      if (payload == null) {
        refused[i] = true;
        continue;
      }
      events.add(new Spool.Event(req.cmd.tenant().toString(), it.queue(), it.partition(), txn, req.cmd.producerSub(),
          encryption.encrypts(it.queue(), encryptedQueues), payload));
    }
    Future<Boolean> written = events.isEmpty() ? Future.succeededFuture(true) : Offload.disk(context, () -> append(events));
    written.onComplete(ar -> {
      String status = ar.succeeded() && ar.result() ? "buffered" : "failed";
      if ("buffered".equals(status)) metrics.bufferedMessages.increment(events.size());
      List<PushOutcome> out = new ArrayList<>(items.size());
      for (int i = 0; i < items.size(); i++) {
        out.add(new PushOutcome(i, ids[i], txns[i], items.get(i).queue(), refused[i] ? "failed" : status, null, -1));
      }
      req.done.accept(out);
    });
  }

  /**
   * A write that failed outright: its frames go to the spool and are answered {@code buffered} (ENGINE.md §9.5), or
   * {@code failed} when the spool write fails too. A spool replay that fails keeps its file instead, and is told why.
   * The future completes once every slot is answered.
   */
  Future<?> spoolFailedWrite(PackedSegment seg, Throwable cause) {
    List<Slot> toSpool = new ArrayList<>();
    for (Slot s : seg.slots) {
      if (s.owner.fromSpool) {
        s.owner.causes[s.index] = cause;
        for (Slot f : s.flushFollowers) if (f.owner.causes != null) f.owner.causes[f.index] = cause;
        s.fail();
      } else {
        toSpool.add(s);
      }
    }
    if (toSpool.isEmpty()) return Future.succeededFuture();
    List<Spool.Event> events = new ArrayList<>();
    for (Slot s : toSpool) {
      events.add(new Spool.Event(seg.key.tenant().toString(), seg.key.queue(), seg.key.partition(),
          s.frame.transactionId(), s.frame.producerSub(), s.frame.encrypted(), s.frame.payload()));
      for (Slot f : s.flushFollowers) {
        events.add(new Spool.Event(seg.key.tenant().toString(), seg.key.queue(), seg.key.partition(),
            f.frame.transactionId(), f.frame.producerSub(), f.frame.encrypted(), f.frame.payload()));
      }
    }
    return Offload.disk(context, () -> append(events)).andThen(ar -> {
      boolean ok = ar.succeeded() && ar.result();
      for (Slot s : toSpool) s.resolve(ok ? "buffered" : "failed", null, -1, s.frame.messageId());
    });
  }

  private boolean append(List<Spool.Event> events) {
    try {
      spool.append(events);
      return true;
    } catch (Exception e) {
      log.error("spool write failed for {} events: {}", events.size(), e.toString());
      return false;
    }
  }

  private void readSwitch() {
    if (switchReading) return;
    switchReading = true;
    long seen = maintenance.changes();
    db.system().read().onComplete(ar -> {
      switchReading = false;
      if (ar.failed()) { // tried again on the next tick; meanwhile the spool cannot drain
        if (spool.pendingEvents() > 0) drainFailures = Math.max(1, drainFailures);
        return;
      }
      if (ar.result().push()) maintenance.applyRead(seen, true, null);
      switchRead = true;
    });
  }

  /**
   * One drain tick: replays the next batch of the oldest spool file, unless one is running or it must wait. The file
   * is read, and the outcome settled into it, on the worker pool; {@code draining} stays set until both are done.
   */
  void drain() {
    if (!switchRead) {
      readSwitch();
      return;
    }
    if (draining || maintenance.pushMaintenance()) return;
    if (System.currentTimeMillis() < nextDrainAt) return;
    draining = true;
    Offload.disk(context, this::nextBatch).onComplete(next -> {
      if (next.failed()) {
        log.warn("spool drain could not read: {}", next.cause().toString());
        drainFile = null;
      }
      if (next.failed() || next.result().isEmpty()) {
        draining = false;
        return;
      }
      List<Spool.Event> batch = next.result();
      replay(batch).onComplete(ar -> Offload.disk(context, () -> {
        settle(batch, ar.succeeded() ? ar.result() : List.of());
        return null;
      }).onComplete(settled -> {
        if (settled.failed()) {
          log.warn("spool bookkeeping failed: {}", settled.cause().toString());
          drainFile = null; // read the file again from disk on the next tick
          drainPlan.clear();
        }
        draining = false;
      }));
    });
  }

  /** The next batch to replay from the oldest spool file (empty: nothing to replay now). On the worker pool. */
  private List<Spool.Event> nextBatch() throws IOException {
    if (drainFile == null) {
      spool.rotate();
      List<Path> files = spool.sealed();
      if (files.isEmpty()) {
        drainFailures = 0;
        return List.of();
      }
      drainFile = files.get(0);
      drainLeft = new ArrayList<>(Spool.read(drainFile));
      drainPlan.clear();
      if (!drainLeft.isEmpty()) drainPlan.add(new ArrayList<>(drainLeft));
    }
    if (drainPlan.isEmpty() && !drainLeft.isEmpty()) drainPlan.add(new ArrayList<>(drainLeft));
    if (drainPlan.isEmpty()) {
      spool.delete(drainFile, 0);
      drainFile = null;
      return List.of();
    }
    return drainPlan.pollFirst();
  }

  /** Replays {@code batch}, one internal request per (tenant, producerSub); frames keep their stored payload. */
  private Future<List<Replayed>> replay(List<Spool.Event> batch) {
    List<Future<List<Replayed>>> parts = new ArrayList<>();
    for (List<Spool.Event> group : byOrigin(batch).values()) {
      var promise = Promise.<List<Replayed>>promise();
      parts.add(promise.future());
      List<PushItem> items = new ArrayList<>(group.size());
      for (Spool.Event e : group) items.add(new PushItem(e.queue(), e.partition(), e.transactionId(), e.payload()));
      var cmd = new PushCommand(UUID.fromString(group.get(0).tenant()), group.get(0).producerSub(), items);
      Request[] self = new Request[1];
      self[0] = new Request(cmd, out -> {
        List<Replayed> r = new ArrayList<>(out.size());
        for (int i = 0; i < out.size(); i++) {
          String st = out.get(i).status();
          r.add(new Replayed(group.get(i), "queued".equals(st) || "duplicate".equals(st), self[0].causes[i]));
        }
        promise.complete(r);
      }, true);
      for (int i = 0; i < group.size(); i++) {
        Spool.Event e = group.get(i);
        writer.enqueue(self[0], i, new Frame(UuidV7.next(), e.transactionId(), null, e.producerSub(), e.payload(),
            e.encrypted()));
      }
    }
    writer.scheduleDispatch();
    return Future.all(parts).map(all -> {
      List<Replayed> r = new ArrayList<>(batch.size());
      for (int i = 0; i < parts.size(); i++) r.addAll(parts.get(i).result());
      return r;
    });
  }

  /** {@code batch} grouped by origin, (tenant, producerSub), in order of first appearance, each in batch order. */
  static Map<String, List<Spool.Event>> byOrigin(List<Spool.Event> batch) {
    Map<String, List<Spool.Event>> byOrigin = new LinkedHashMap<>();
    for (Spool.Event e : batch) {
      byOrigin.computeIfAbsent(e.tenant() + "\u001f" + e.producerSub(), k -> new ArrayList<>()).add(e);
    }
    return byOrigin;
  }

  /** Cuts what landed out of the file, sets aside what is rejected alone, and plans what is left. */
  void settle(List<Spool.Event> batch, List<Replayed> results) throws IOException {
    Set<Spool.Event> done = Collections.newSetFromMap(new IdentityHashMap<>());
    List<Spool.Event> retry = new ArrayList<>();
    List<Replayed> rejected = new ArrayList<>();
    Set<Spool.Event> seen = Collections.newSetFromMap(new IdentityHashMap<>());
    for (Replayed r : results) {
      seen.add(r.event());
      if (r.landed()) done.add(r.event());
      else if (SqlState.refusesData(r.cause())) rejected.add(r);
      else retry.add(r.event());
    }
    for (Spool.Event e : batch) if (!seen.contains(e)) retry.add(e); // the replay itself failed
    int landed = done.size();
    List<List<Spool.Event>> halves = List.of();
    if (rejected.size() == 1) {
      // Alone in its write and refused by the database: the one event it will never accept.
      Replayed r = rejected.get(0);
      String reason = SqlState.describe(r.cause());
      spool.reject(r.event(), reason);
      done.add(r.event());
      log.error("spool event set aside into failed/ (queue {}, partition {}, transactionId {}): {}",
          r.event().queue(), r.event().partition(), r.event().transactionId(), reason);
    } else if (!rejected.isEmpty()) {
      List<Spool.Event> bad = new ArrayList<>(rejected.size());
      for (Replayed r : rejected) bad.add(r.event());
      halves = halves(bad);
      log.warn("spool replay of {} events refused by the database ({}); replaying them apart to find the bad ones",
          bad.size(), SqlState.describe(rejected.get(0).cause()));
    }
    for (int i = halves.size() - 1; i >= 0; i--) drainPlan.addFirst(halves.get(i));
    if (!retry.isEmpty()) {
      drainPlan.addFirst(retry);
      drainFailures++;
      drainBackoffMs = nextBackoff(drainBackoffMs);
      nextDrainAt = System.currentTimeMillis() + drainBackoffMs;
      Throwable why = results.stream().filter(r -> !r.landed() && r.cause() != null).map(Replayed::cause).findFirst()
          .orElse(null);
      log.warn("spool replay of {}: {} events not taken ({}); next try in {} ms", drainFile.getFileName(),
          retry.size(), why == null ? "no write error" : why.toString(), drainBackoffMs);
    } else {
      drainFailures = 0;
      drainBackoffMs = 0;
      nextDrainAt = 0;
    }
    if (done.isEmpty()) return;
    // counted off by what leaves the file, so the pending count stays the number of events the files hold
    int before = drainLeft.size();
    drainLeft.removeIf(done::contains);
    int removed = before - drainLeft.size();
    if (drainLeft.isEmpty()) {
      spool.delete(drainFile, removed);
      log.info("spool file {} replayed", drainFile.getFileName());
      drainFile = null;
      drainPlan.clear();
    } else {
      spool.rewrite(drainFile, drainLeft, removed);
      if (landed > 0) log.info("spool file {}: {} events replayed, {} left", drainFile.getFileName(), landed,
          drainLeft.size());
    }
  }

  /** The drain's wait after another failed replay, given the wait after the last one (0 after progress). */
  static long nextBackoff(long currentMs) {
    return currentMs == 0 ? DRAIN_BACKOFF_FIRST_MS : Math.min(DRAIN_BACKOFF_MAX_MS, currentMs * 2);
  }

  /** A refused batch of two or more split in two, the first half the smaller, each replayed apart. */
  static List<List<Spool.Event>> halves(List<Spool.Event> bad) {
    int mid = bad.size() / 2;
    return List.of(new ArrayList<>(bad.subList(0, mid)), new ArrayList<>(bad.subList(mid, bad.size())));
  }

}
