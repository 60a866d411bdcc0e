package io.queenvertx.log;

import io.queenvertx.metrics.BrokerMetrics;
import io.queenvertx.kernel.MaintenanceFlags;
import io.queenvertx.db.Database;
import io.queenvertx.kernel.Config;
import io.queenvertx.db.SqlState;
import io.queenvertx.bus.Addresses;
import io.queenvertx.bus.LocalCodec;
import io.queenvertx.bus.PushCommand;
import io.queenvertx.bus.PushItem;
import io.queenvertx.bus.PushOutcome;
import io.queenvertx.bus.TransactionCommand;
import io.queenvertx.codec.EnvelopeCipher;
import io.queenvertx.codec.Frame;
import io.queenvertx.codec.TxnHash;
import io.queenvertx.codec.UuidV7;
import io.queenvertx.db.PushProcedures;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The log writer: hashes transaction ids, packs frames into zstd segments and writes them with
 * {@code queen.log_push_multi}, fusing concurrent pushes to one partition into one segment (ENGINE.md §14 "push
 * fusion"), and dispatches each write's outcome to the requests it answers.
 *
 * <p>Deployed as a single event-loop verticle: its handlers run one at a time on one thread, so the fusion state needs
 * no locks, and its SQL round trips complete on that thread without a hand-off (as a worker verticle, each write cost
 * two more thread wake-ups). What could hold the loop runs on the worker pool ({@link Offload}): zstd and encryption of
 * more than 64 KiB of payload, and every spool file access. Its helpers are plain objects used only from the writer's
 * context: {@link PushEncryption} (which queues are encrypted, encrypting, the QV103 retry), {@link Spooler} (the
 * disk spool: maintenance and failed-write spooling, the drain), {@link DedupReader} (the dedup cache's warm-up and
 * gap fill) and {@link FusionGate} (whether a small bundle waits for more pushes while others are in flight). HTTP
 * pushes arrive through its {@link PushInbox}, other callers' through the event bus.
 *
 * <p>Invariants: at most one write is in flight per partition, so a partition's offsets are allocated in the order
 * its frames were accepted here (offset order = commit order); a partition's frames wait in {@code pending} while its
 * previous write is in flight and then leave together as one segment; several ready partitions leave in one
 * {@code log_push_multi} call (one commit), each with the dedup cache's promise ({@link DedupCache}).
 */
public final class LogWriterVerticle extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(LogWriterVerticle.class);
  static final int MAX_FRAMES_PER_SEGMENT = 1000;
  static final int MAX_DUPLICATE_RETRIES = 3;
  /** Partition ids remembered per (tenant, queue, partition), so a push locks by primary key without a name probe. */
  static final int MAX_KNOWN_PARTITIONS = 200_000;

  private final Config config;
  private final Database db;
  private final MaintenanceFlags maintenance;
  private final BrokerMetrics metrics;
  private final PushProcedures pushes;
  private final QueueSettings settings;
  private final Transactions transactions;
  private final DedupCache dedup;
  private final DedupReader dedupReader;
  private final PushEncryption encryption;
  private Spooler spooler;
  private final Map<PartitionKey, ArrayList<Slot>> pending = new LinkedHashMap<>();
  /**
   * Spool replays wait here, apart from live pushes: a bundle holds one kind only, so a replay that fails never takes
   * live pushes down with it (nor the other way round), and the drain learns which of its own events failed and why.
   */
  private final Map<PartitionKey, ArrayList<Slot>> spoolPending = new LinkedHashMap<>();
  private final Set<PartitionKey> inFlight = new HashSet<>();
  /** (tenant, queue, partition) to partition id, learned from results; a stale one makes SQL answer QV107. */
  private final Map<PartitionKey, UUID> knownPartitions = new LinkedHashMap<>(1024, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<PartitionKey, UUID> eldest) {
      return size() > MAX_KNOWN_PARTITIONS;
    }
  };
  private int bundlesInFlight;
  /** Spool-replay bundles among them: a replay gets a turn ahead of live pushes when it has none in flight. */
  private int spoolBundlesInFlight;
  private boolean dispatchScheduled;
  private FusionGate gate;

  public LogWriterVerticle(Config config, Database db, MaintenanceFlags maintenance, BrokerMetrics metrics,
                           Optional<EnvelopeCipher> cipher) {
    this.config = config;
    this.db = db;
    this.maintenance = maintenance;
    this.metrics = metrics;
    this.pushes = db.pushes();
    this.settings = new QueueSettings(pushes);
    this.transactions = new Transactions(db, metrics, config.engine().zstdLevel(), cipher, settings);
    this.dedup = new DedupCache(config.engine().dedupCacheMb());
    this.dedupReader = new DedupReader(pushes, db.segments(), dedup);
    this.encryption = new PushEncryption(cipher, settings);
  }

  @Override
  public Future<?> start() {
    return Offload.disk(context, () -> new Spool(config.spool().dir(), config.spool().eventsPerFile()))
        .compose(this::startWith);
  }

  private Future<?> startWith(Spool spool) {
    spooler = new Spooler(db, maintenance, metrics, context, spool, encryption, new Spooler.Writer() {
      @Override
      public void enqueue(Request req, int index, Frame frame) {
        LogWriterVerticle.this.enqueue(req, index, frame);
      }

      @Override
      public void scheduleDispatch() {
        LogWriterVerticle.this.scheduleDispatch();
      }
    });
    vertx.setPeriodic(Math.max(10, config.spool().flushMs()), t -> spooler.drain());
    gate = FusionGate.on(vertx, context, config.engine(), this::dispatch);
    spooler.publishStats(vertx);
    metrics.gauge("queen_dedup_cache_fingerprints", "transaction-id fingerprints in the push dedup cache",
        dedup::size);
    vertx.eventBus().<JsonObject>consumer(Addresses.QUEUE_CHANGED, m -> {
      settings.invalidate(m.body().getString("tenant"), m.body().getString("queue"));
      dedup.dropQueue(m.body().getString("tenant"), m.body().getString("queue"));
      forgetPartitions(m.body().getString("tenant"), m.body().getString("queue"));
    });
    var tx = vertx.eventBus().<TransactionCommand>localConsumer(Addresses.TRANSACTION,
        m -> metrics.stats.transaction(m.body(), transactions.run(vertx, m.body())).onComplete(ar -> {
          if (ar.succeeded()) m.reply(ar.result(), LocalCodec.OPTIONS);
          else m.fail(500, ar.cause().getMessage());
        }));
    PushInbox.open(vertx, context, this::push);
    return Future.all(tx.completion(), vertx.eventBus().<PushCommand>localConsumer(Addresses.PUSH,
        m -> push(m.body(), out -> m.reply(out, LocalCodec.OPTIONS))).completion());
  }

  @Override
  public Future<?> stop() {
    PushInbox.close(vertx);
    return Future.succeededFuture();
  }

  /** One push request, from the event bus or the HTTP route's {@link PushInbox}; {@code reply} gets its outcomes. */
  private void push(PushCommand cmd, Consumer<List<PushOutcome>> reply) {
    metrics.pushRequests.increment();
    long t0 = System.nanoTime();
    var req = new Request(cmd, out -> reply.accept(metrics.pushAnswered(cmd.tenant(), out, t0)), false);
    List<PushItem> items = cmd.items();
    if (items.isEmpty()) {
      reply.accept(List.of());
      return;
    }
    encryption.flagsFor(req.cmd.tenant(), items).onComplete(ar -> {
      // flagsFor never fails: a queue whose flag could not be read is absent from the map.
      Map<String, Boolean> encrypted = ar.succeeded() ? ar.result() : Map.of();
      encryption.storedPayloads(context, items, encrypted).onComplete(p -> {
        // Never fails either (a payload that cannot be encrypted is null); if it did, every item is answered failed.
        byte[][] stored = p.succeeded() ? p.result() : new byte[items.size()][];
        if (maintenance.pushMaintenance()) spooler.spoolRequest(req, encrypted, stored);
        else accept(req, encrypted, stored);
      });
    });
  }

  private void accept(Request req, Map<String, Boolean> encryptedQueues, byte[][] stored) {
    List<PushItem> items = req.cmd.items();
    List<PushOutcome> refused = new ArrayList<>(0);
    // Within one request the first item for a (queue, partition, transactionId) leads; later copies follow it.
    Map<String, Integer> leaders = new HashMap<>();
    for (int i = 0; i < items.size(); i++) {
      PushItem it = items.get(i);
      req.leaderOf[i] = i;
      if (it.transactionId() != null) {
        String k = it.queue() + '\u0000' + it.partition() + '\u0000' + it.transactionId();
        Integer prev = leaders.putIfAbsent(k, i);
        if (prev != null) {
          req.leaderOf[i] = prev;
          continue;
        }
      }
      UUID id = UuidV7.next();
      String txn = it.transactionId() != null ? it.transactionId() : id.toString();
      byte[] payload = stored[i];
      if (payload == null) {
        refused.add(new PushOutcome(i, id, txn, it.queue(), "failed", null, -1));
        continue;
      }
      enqueue(req, i, new Frame(id, txn, null, req.cmd.producerSub(), payload,
          encryption.encrypts(it.queue(), encryptedQueues)));
    }
    // Counted before any completes, so the request is answered only once its enqueued frames are resolved too.
    req.outstanding += refused.size();
    for (PushOutcome o : refused) req.complete(o.index(), o);
    scheduleDispatch();
  }

  private void enqueue(Request req, int index, Frame frame) {
    PushItem it = req.cmd.items().get(index);
    var key = new PartitionKey(req.cmd.tenant(), it.queue(), it.partition());
    waiting(req).computeIfAbsent(key, k -> new ArrayList<>()).add(new Slot(frame, TxnHash.of(frame.transactionId()),
        req, index));
    req.outstanding++;
  }

  /** Where a request's frames wait for a write: live pushes and spool replays never share a bundle. */
  private Map<PartitionKey, ArrayList<Slot>> waiting(Request req) {
    return req.fromSpool ? spoolPending : pending;
  }

  private void scheduleDispatch() {
    if (dispatchScheduled) return;
    dispatchScheduled = true;
    context.runOnContext(v -> dispatch());
  }

  private void dispatch() {
    dispatchScheduled = false;
    while (bundlesInFlight < config.engine().pushBundlesInFlight()) {
      List<PackedSegment> bundle = new ArrayList<>();
      // Live pushes first, but a waiting replay always has one bundle going, so steady traffic cannot starve it.
      boolean replay = spoolBundlesInFlight == 0 && !spoolPending.isEmpty();
      List<PartitionKey> taken = replay ? ready(spoolPending) : List.of();
      if (taken.isEmpty()) {
        replay = false;
        taken = gate.holds(bundlesInFlight, pending, inFlight) ? List.of() : ready(pending);
      }
      if (taken.isEmpty()) {
        replay = true;
        taken = ready(spoolPending);
      }
      if (taken.isEmpty()) return;
      Map<PartitionKey, ArrayList<Slot>> source = replay ? spoolPending : pending;
      for (PartitionKey key : taken) {
        List<Slot> slots = source.remove(key);
        inFlight.add(key);
        List<Slot> leaders = Slot.leadersOf(slots);
        for (int from = 0; from < leaders.size(); from += MAX_FRAMES_PER_SEGMENT) {
          bundle.add(pack(key, leaders.subList(from, Math.min(leaders.size(), from + MAX_FRAMES_PER_SEGMENT))));
        }
      }
      bundlesInFlight++;
      if (replay) spoolBundlesInFlight++;
      write(bundle, taken, replay);
    }
  }

  /** Up to a bundle's worth of partitions of {@code from} with no write in flight. */
  private List<PartitionKey> ready(Map<PartitionKey, ArrayList<Slot>> from) {
    List<PartitionKey> taken = new ArrayList<>();
    for (var e : from.entrySet()) {
      if (inFlight.contains(e.getKey())) continue;
      taken.add(e.getKey());
      if (taken.size() >= config.engine().pushPartitionsPerBundle()) break;
    }
    return taken;
  }

  /** A segment of {@code slots}, its dedup claim taken; its blob is packed by {@link #write}. */
  private PackedSegment pack(PartitionKey key, List<Slot> slots) {
    byte[] hashes = new byte[slots.size() * TxnHash.BYTES];
    for (int i = 0; i < slots.size(); i++) {
      System.arraycopy(slots.get(i).hash, 0, hashes, i * TxnHash.BYTES, TxnHash.BYTES);
    }
    return new PackedSegment(key, new ArrayList<>(slots), hashes, dedup.claim(key, hashes), knownPartitions.get(key));
  }

  /**
   * Packs one bundle's segments ({@link Offload}: on the worker pool when large), writes it in one
   * {@code log_push_multi} call and dispatches the answer: QV103 (encrypt and go again), QV107 (go again by name), a
   * failed write or pack (spooled), or each segment's result row.
   */
  private void write(List<PackedSegment> bundle, List<PartitionKey> keys, boolean replay) {
    int n = bundle.size();
    long[] t0 = new long[1];
    metrics.pushWriteSegments.record(n);
    int level = config.engine().zstdLevel();
    Offload.cpu(context, PackedSegment.payloadBytes(bundle), () -> PackedSegment.compress(bundle, level))
        .compose(packed -> {
          t0[0] = System.nanoTime();
          return pushes.pushMulti(PackedSegment.segments(bundle));
        })
        .onComplete(ar -> {
          if (t0[0] != 0) metrics.pushWrites.record(System.nanoTime() - t0[0], TimeUnit.NANOSECONDS);
          List<Future<?>> followUps = new ArrayList<>();
          if (ar.failed() && PushEncryption.isCrypt(ar.cause())) {
            // A queue of the bundle is encrypted though our cached flag said not: nothing was written. Read the
            // flags again and encrypt the plaintext frames before they go again.
            log.info("push bundle carried plaintext for an encrypted queue; re-reading its flags: {}",
                ar.cause().getMessage());
            followUps.add(encryption.prepareRetry(context, bundle, this::requeue));
          } else if (ar.failed() && isStale(ar.cause())) {
            // A partition of the bundle is gone (its queue was deleted): nothing was written. Forget what we knew
            // about these partitions and send the frames again, resolved by name.
            log.info("push bundle met a deleted partition; retrying by name: {}", ar.cause().getMessage());
            for (PackedSegment s : bundle) {
              knownPartitions.remove(s.key);
              dedup.drop(s.key);
              requeue(s.key, s.slots);
            }
          } else if (ar.failed()) {
            log.warn("push write failed ({} segments): {}", n, ar.cause().getMessage());
            metrics.stats.dbError();
            for (PackedSegment s : bundle) followUps.add(spooler.spoolFailedWrite(s, ar.cause()));
          } else {
            Map<Landed.Queue, Landed> landed = new LinkedHashMap<>();
            int i = 0;
            for (PushProcedures.Written r : ar.result()) {
              PackedSegment s = bundle.get(i++);
              followUps.add(onSegmentResult(s, r, landed));
            }
            // Announced before the requests are answered: a parked pop may already be on its way when they are.
            for (Landed l : landed.values()) vertx.eventBus().publish(Addresses.LANDED, l.announcement());
            for (PackedSegment s : bundle) if (s.queued) for (int k = 0; k < s.slots.size(); k++) {
              s.slots.get(k).resolve("queued", s.pid, s.base + k, null);
            }
          }
          Future.join(followUps).onComplete(done -> {
            bundlesInFlight--;
            if (replay) spoolBundlesInFlight--;
            inFlight.removeAll(keys);
            scheduleDispatch();
          });
        });
  }

  private static boolean isStale(Throwable e) {
    // SQL's answer when a partition of the bundle vanished (its queue was deleted) between resolution and lock
    return SqlState.PUSH_PARTITION_STALE.is(e);
  }

  /** Back to the head of the partition's queue, ahead of frames that arrived during this write. */
  private void requeue(PartitionKey key, List<Slot> slots) {
    List<Slot> again = new ArrayList<>(slots.size());
    for (Slot s : slots) {
      if (++s.attempts > MAX_DUPLICATE_RETRIES) s.fail();
      else again.add(s);
    }
    if (!again.isEmpty()) waiting(again.get(0).owner).computeIfAbsent(key, k -> new ArrayList<>()).addAll(0, again);
  }

  private void forgetPartitions(String tenant, String queue) {
    knownPartitions.keySet().removeIf(k -> (tenant == null || k.tenant().toString().equals(tenant))
        && (queue == null || k.queue().equals(queue)));
  }

  /**
   * One segment's result row: {@code queued} (counted into {@code landed}, taught to the dedup cache) or
   * {@code duplicate} (the named frames answered with the stored frame's id, the others queued again).
   */
  private Future<?> onSegmentResult(PackedSegment seg, PushProcedures.Written r, Map<Landed.Queue, Landed> landed) {
    UUID pid = r.partitionId();
    if (pid != null && !pid.equals(seg.hint)) knownPartitions.put(seg.key, pid); // a hint was refreshed when read
    if (r.queued()) {
      long base = r.baseOffset();
      seg.queued = true;
      seg.pid = pid;
      seg.base = base;
      metrics.pushedMessages.increment(seg.slots.size());
      landed.computeIfAbsent(new Landed.Queue(seg.key.tenant(), seg.key.queue()),
          k -> new Landed(seg.key, pid, base + seg.slots.size() - 1)).partitions++;
      dedupReader.remember(seg.key, pid, base, seg.slots.size(), seg.hashes, r);
      return Future.succeededFuture();
    }
    // duplicate: the frames named in "dups" exist in the window; nothing was written, so the others go again.
    Map<Integer, Long> dups = new HashMap<>();
    for (Object o : r.dups()) {
      JsonObject d = (JsonObject) o;
      dups.put(d.getInteger("i"), d.getLong("off"));
    }
    List<Slot> retry = new ArrayList<>();
    List<Future<?>> lookups = new ArrayList<>();
    for (int i = 0; i < seg.slots.size(); i++) {
      Slot s = seg.slots.get(i);
      Long off = dups.get(i);
      if (off != null) {
        lookups.add(dedupReader.originalMessageId(pid, off).onComplete(id -> s.resolve("duplicate", pid, off,
            id.succeeded() ? id.result() : UuidV7.ZERO)));
      } else if (++s.attempts > MAX_DUPLICATE_RETRIES) {
        s.fail();
      } else {
        retry.add(s);
      }
    }
    if (!retry.isEmpty()) {
      waiting(retry.get(0).owner).computeIfAbsent(seg.key, k -> new ArrayList<>()).addAll(0, retry);
    }
    return Future.join(lookups);
  }
}
