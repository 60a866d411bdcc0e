package io.queenvertx.log;

import io.queenvertx.boot.NodeContext;
import io.queenvertx.bus.Addresses;
import io.queenvertx.bus.LocalCodec;
import io.queenvertx.bus.PushCommand;
import io.queenvertx.bus.PushItem;
import io.queenvertx.bus.PushOutcome;
import io.queenvertx.bus.TransactionCommand;
import io.queenvertx.codec.EnvelopeCipher;
import io.queenvertx.codec.Frame;
import io.queenvertx.codec.Segment;
import io.queenvertx.codec.TxnHash;
import io.queenvertx.codec.UuidV7;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Tuple;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The log writer: hashes transaction ids, packs frames into zstd segments and writes them, fusing concurrent pushes
 * to one partition into one segment (ENGINE.md §14 "push fusion").
 *
 * <p>Deployed as a single worker verticle: its handlers run one at a time, so the fusion state needs no locks, and
 * zstd work never runs on an event loop.
 *
 * <p>Invariants: at most one write is in flight per partition, so a partition's offsets are allocated in the order
 * its frames were accepted here (offset order = commit order); a partition's frames wait in {@code pending} while its
 * previous write is in flight and then leave together as one segment; several ready partitions leave in one
 * {@code log_push_multi_v2} call (one commit), each with the dedup cache's promise ({@link DedupCache}).
 */
public final class LogWriterVerticle extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(LogWriterVerticle.class);
  static final int MAX_FRAMES_PER_SEGMENT = 1000;
  static final int MAX_DUPLICATE_RETRIES = 3;
  /** The spool drain's wait after a failed replay: doubles from the first to the cap, back to none on progress. */
  static final long DRAIN_BACKOFF_FIRST_MS = 100;
  static final long DRAIN_BACKOFF_MAX_MS = 5_000;
  /** A warm-up reads the window's log_txns rows in pages of this many; it gives up past WARM_MAX_ROWS rows. */
  static final int WARM_PAGE_ROWS = 4096;
  static final int WARM_MAX_ROWS = 1_000_000;
  static final int FILL_ROWS = 512;
  private static final String PUSH_MULTI = "SELECT idx, status, partition_id, base_offset, created_at, window_seconds, "
      + "dups FROM queen.log_push_multi_v3($1::uuid[], $2::text[], $3::text[], $4::int[], $5::bytea[], $6::bytea[], "
      + "$7::bigint[], $8::uuid[], $9::uuid[])";
  /** SQL's answer when a partition of the bundle vanished (its queue was deleted) between resolution and lock. */
  static final String STALE = "QSTALE";
  /** Partition ids remembered per (tenant, queue, partition), so a push locks by primary key without a name probe. */
  static final int MAX_KNOWN_PARTITIONS = 200_000;
  /** A warm-up starts from the partition's last offset and dedup window (DedupCache#warmed)... */
  private static final String WARM_HEAD = "SELECT p.last_offset, q.dedup_window_seconds FROM queen.log_partitions p "
      + "JOIN queen.queues q ON q.id = p.queue_id WHERE p.id = $1";
  /**
   * ...then reads every log_txns row at or below that offset still inside the window, in offset order, a page at a
   * time. Offsets are allocated in the transaction that inserts their row, so every row at or below an offset read
   * as committed is visible to the later pages (or was purged, which only happens outside the window).
   */
  private static final String WARM_PAGE = "SELECT base_offset, end_offset, hashes, "
      + "(extract(epoch FROM created_at) * 1000000)::bigint AS at_us FROM queen.log_txns "
      + "WHERE partition_id = $1 AND base_offset > $2 AND base_offset <= $3 "
      + "AND created_at >= now() - make_interval(secs => $4) - interval '120 seconds' "
      + "ORDER BY base_offset LIMIT $5";
  private static final String FILL = "SELECT base_offset, end_offset, hashes, "
      + "(extract(epoch FROM created_at) * 1000000)::bigint AS at_us FROM queen.log_txns "
      + "WHERE partition_id = $1 AND base_offset > $2 ORDER BY base_offset LIMIT $3";

  record PartitionKey(UUID tenant, String queue, String partition) {}

  /** One frame waiting for its write, and the request it answers. */
  static final class Slot {
    final Frame frame;
    final byte[] hash;
    final Request owner;
    final int index;
    final List<Slot> flushFollowers = new ArrayList<>(0);
    int attempts;

    Slot(Frame frame, byte[] hash, Request owner, int index) {
      this.frame = frame;
      this.hash = hash;
      this.owner = owner;
      this.index = index;
    }
  }

  /** One push request: its outcomes fill in as its frames are written; replied when none is outstanding. */
  static final class Request {
    final PushCommand cmd;
    final java.util.function.Consumer<List<PushOutcome>> done;
    /** A spool replay: a failed write keeps the file instead of spooling again. */
    final boolean fromSpool;
    final PushOutcome[] out;
    final int[] leaderOf;
    /** A spool replay's items that failed: why (the write's error), or null when the reason was not a write error. */
    final Throwable[] causes;
    int outstanding;

    Request(PushCommand cmd, java.util.function.Consumer<List<PushOutcome>> done, boolean fromSpool) {
      this.cmd = cmd;
      this.done = done;
      this.fromSpool = fromSpool;
      this.out = new PushOutcome[cmd.items().size()];
      this.leaderOf = new int[cmd.items().size()];
      this.causes = fromSpool ? new Throwable[cmd.items().size()] : null;
    }
  }

  /** One segment of a bundle; the result fields are set when its write answers {@code queued}. */
  private static final class PackedSegment {
    final PartitionKey key;
    final List<Slot> slots;
    final byte[] blob;
    final byte[] hashes;
    final DedupCache.Claim claim;
    final UUID hint;
    boolean queued;
    UUID pid;
    long base;

    PackedSegment(PartitionKey key, List<Slot> slots, byte[] blob, byte[] hashes, DedupCache.Claim claim, UUID hint) {
      this.key = key;
      this.slots = slots;
      this.blob = blob;
      this.hashes = hashes;
      this.claim = claim;
      this.hint = hint;
    }
  }

  private final NodeContext node;
  private final Optional<EnvelopeCipher> cipher;
  private final QueueSettings settings;
  private final Transactions transactions;
  private final DedupCache dedup;
  /** Partitions whose dedup-cache warm-up or gap fill is running, and those too big to cache, until when. */
  private final Set<PartitionKey> dedupReading = new HashSet<>();
  private final Map<PartitionKey, Long> dedupSkipUntil = new HashMap<>();
  private Spool spool;
  private final Map<PartitionKey, ArrayList<Slot>> pending = new LinkedHashMap<>();
  /**
   * Spool replays wait here, apart from live pushes: a bundle holds one kind only, so a replay that fails never takes
   * live pushes down with it (nor the other way round), and the drain learns which of its own events failed and why.
   */
  private final Map<PartitionKey, ArrayList<Slot>> spoolPending = new LinkedHashMap<>();
  private final Set<PartitionKey> inFlight = new HashSet<>();
  /** (tenant, queue, partition) to partition id, learned from results; a stale one makes SQL answer QSTALE. */
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

  public LogWriterVerticle(NodeContext node, Optional<EnvelopeCipher> cipher) {
    this.node = node;
    this.cipher = cipher;
    this.settings = new QueueSettings(node.pool());
    this.transactions = new Transactions(node, cipher, settings);
    this.dedup = new DedupCache(node.config().dedupCacheMb());
  }

  @Override
  public Future<?> start() throws Exception {
    spool = new Spool(node.config().fileBufferDir(), node.config().fileBufferEventsPerFile());
    vertx.setPeriodic(Math.max(10, node.config().fileBufferFlushMs()), t -> drain());
    node.metrics().gauge("queen_file_buffer_pending", "push events waiting in this node's spool", spool::pendingEvents);
    node.metrics().gauge("queen_file_buffer_failed",
        "spooled push events the database refused, set aside in the spool's failed/ folder", spool::rejectedEvents);
    node.metrics().gauge("queen_file_buffer_db_healthy", "1 while the spool can drain, 0 while its replays fail",
        () -> bufferHealthy() ? 1 : 0);
    vertx.eventBus().<Object>localConsumer(Addresses.SPOOL_STATS, m -> m.reply(new JsonObject()
        .put("bufferedMessages", spool.pendingEvents()).put("bufferHealthy", bufferHealthy())
        .put("failedEvents", spool.rejectedEvents())));
    node.metrics().gauge("queen_dedup_cache_fingerprints", "transaction-id fingerprints in the push dedup cache",
        dedup::size);
    vertx.eventBus().<JsonObject>consumer(Addresses.QUEUE_CHANGED, m -> {
      settings.invalidate(m.body().getString("tenant"), m.body().getString("queue"));
      dedup.dropQueue(m.body().getString("tenant"), m.body().getString("queue"));
      forgetPartitions(m.body().getString("tenant"), m.body().getString("queue"));
    });
    var tx = vertx.eventBus().<TransactionCommand>localConsumer(Addresses.TRANSACTION,
        m -> transactions.run(vertx, m.body()).onComplete(ar -> {
          if (ar.succeeded()) m.reply(ar.result(), LocalCodec.OPTIONS);
          else m.fail(500, ar.cause().getMessage());
        }));
    return Future.all(tx.completion(),
        vertx.eventBus().<PushCommand>localConsumer(Addresses.PUSH, this::onPush).completion());
  }

  private void onPush(Message<PushCommand> msg) {
    node.metrics().pushRequests.increment();
    long t0 = System.nanoTime();
    var req = new Request(msg.body(), out -> {
      node.metrics().pushLatency.record(System.nanoTime() - t0, java.util.concurrent.TimeUnit.NANOSECONDS);
      msg.reply(out, LocalCodec.OPTIONS);
    }, false);
    List<PushItem> items = req.cmd.items();
    if (items.isEmpty()) {
      msg.reply(List.of(), LocalCodec.OPTIONS);
      return;
    }
    encryptionFor(req.cmd.tenant(), items).onComplete(ar -> {
      Set<String> encrypted = ar.succeeded() ? ar.result() : Set.of();
      if (node.maintenance().pushMaintenance()) spoolRequest(req, encrypted);
      else accept(req, encrypted);
    });
  }

  /** Push maintenance: every item goes to the disk spool and is answered {@code buffered} (or {@code failed}). */
  private void spoolRequest(Request req, Set<String> encryptedQueues) {
    List<PushItem> items = req.cmd.items();
    List<Spool.Event> events = new ArrayList<>(items.size());
    List<UUID> ids = new ArrayList<>(items.size());
    for (PushItem it : items) {
      UUID id = UuidV7.next();
      ids.add(id);
      // Missing transaction ids are minted now, so a replay of this event stays idempotent.
      String txn = it.transactionId() != null ? it.transactionId() : id.toString();
      byte[] payload = it.payload();
      boolean enc = false;
      if (encryptedQueues.contains(it.queue())) {
        payload = cipher.orElseThrow().encryptToBytes(payload);
        enc = true;
      }
      events.add(new Spool.Event(req.cmd.tenant().toString(), it.queue(), it.partition(), txn, req.cmd.producerSub(),
          enc, payload));
    }
    String status = spoolSafely(events) ? "buffered" : "failed";
    if ("buffered".equals(status)) node.metrics().bufferedMessages.increment(events.size());
    List<PushOutcome> out = new ArrayList<>(items.size());
    for (int i = 0; i < items.size(); i++) {
      out.add(new PushOutcome(i, ids.get(i), events.get(i).transactionId(), items.get(i).queue(), status, null, -1));
    }
    req.done.accept(out);
  }

  private boolean spoolSafely(List<Spool.Event> events) {
    try {
      spool.append(events);
      return true;
    } catch (Exception e) {
      log.error("spool write failed for {} events: {}", events.size(), e.toString());
      return false;
    }
  }

  /** The queues of this request whose payloads are stored encrypted (only when a key is configured). */
  private Future<Set<String>> encryptionFor(UUID tenant, List<PushItem> items) {
    if (cipher.isEmpty()) return Future.succeededFuture(Set.of());
    Set<String> queues = new HashSet<>();
    for (PushItem i : items) queues.add(i.queue());
    List<Future<Boolean>> checks = new ArrayList<>();
    List<String> names = new ArrayList<>(queues);
    for (String q : names) checks.add(settings.encryptionEnabled(tenant, q));
    return Future.join(checks).transform(ar -> {
      Set<String> on = new HashSet<>();
      for (int i = 0; i < names.size(); i++) {
        if (checks.get(i).succeeded() && Boolean.TRUE.equals(checks.get(i).result())) on.add(names.get(i));
      }
      return Future.succeededFuture(on);
    });
  }

  private void accept(Request req, Set<String> encryptedQueues) {
    List<PushItem> items = req.cmd.items();
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
      byte[] payload = it.payload();
      boolean enc = false;
      if (encryptedQueues.contains(it.queue())) {
        try {
          payload = cipher.orElseThrow().encryptToBytes(payload);
          enc = true;
        } catch (RuntimeException e) {
          log.warn("encryption failed for queue {}; storing plaintext: {}", it.queue(), e.toString());
        }
      }
      enqueue(req, i, new Frame(id, txn, null, req.cmd.producerSub(), payload, enc));
    }
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
    while (bundlesInFlight < node.config().pushBundlesInFlight()) {
      List<PackedSegment> bundle = new ArrayList<>();
      // Live pushes first, but a waiting replay always has one bundle going, so steady traffic cannot starve it.
      boolean replay = spoolBundlesInFlight == 0 && !spoolPending.isEmpty();
      List<PartitionKey> taken = replay ? ready(spoolPending) : List.of();
      if (taken.isEmpty()) {
        replay = false;
        taken = ready(pending);
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
        List<Slot> leaders = dedupWithinFlush(slots);
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
      if (taken.size() >= node.config().pushPartitionsPerBundle()) break;
    }
    return taken;
  }

  /** The first frame with a given hash leads the flush; the rest become its followers (ENGINE.md §3.2 layer 2). */
  private static List<Slot> dedupWithinFlush(List<Slot> slots) {
    Map<ByteBuffer, Slot> seen = new HashMap<>();
    List<Slot> leaders = new ArrayList<>(slots.size());
    for (Slot s : slots) {
      Slot lead = seen.putIfAbsent(ByteBuffer.wrap(s.hash), s);
      if (lead == null) leaders.add(s);
      else lead.flushFollowers.add(s);
    }
    return leaders;
  }

  private PackedSegment pack(PartitionKey key, List<Slot> slots) {
    List<Frame> frames = new ArrayList<>(slots.size());
    byte[] hashes = new byte[slots.size() * TxnHash.BYTES];
    for (int i = 0; i < slots.size(); i++) {
      frames.add(slots.get(i).frame);
      System.arraycopy(slots.get(i).hash, 0, hashes, i * TxnHash.BYTES, TxnHash.BYTES);
    }
    return new PackedSegment(key, new ArrayList<>(slots), Segment.pack(frames, node.config().zstdLevel()), hashes,
        dedup.claim(key, hashes), knownPartitions.get(key));
  }

  private void write(List<PackedSegment> bundle, List<PartitionKey> keys, boolean replay) {
    int n = bundle.size();
    UUID[] tenants = new UUID[n];
    String[] queues = new String[n];
    String[] partitions = new String[n];
    Integer[] counts = new Integer[n];
    Buffer[] hashes = new Buffer[n];
    Buffer[] blobs = new Buffer[n];
    Long[] verified = new Long[n];
    UUID[] expect = new UUID[n];
    UUID[] hints = new UUID[n];
    for (int i = 0; i < n; i++) {
      PackedSegment s = bundle.get(i);
      tenants[i] = s.key.tenant();
      queues[i] = s.key.queue();
      partitions[i] = s.key.partition();
      counts[i] = s.slots.size();
      hashes[i] = Buffer.buffer(s.hashes);
      blobs[i] = Buffer.buffer(s.blob);
      verified[i] = s.claim.verified();
      expect[i] = s.claim.partitionId();
      hints[i] = s.hint;
    }
    long t0 = System.nanoTime();
    node.metrics().pushWriteSegments.record(n);
    node.pool().preparedQuery(PUSH_MULTI)
        .execute(Tuple.of(tenants, queues, partitions, counts, hashes, blobs).addValue(verified).addValue(expect)
            .addValue(hints))
        .onComplete(ar -> {
          node.metrics().pushWrites.record(System.nanoTime() - t0, java.util.concurrent.TimeUnit.NANOSECONDS);
          List<Future<?>> followUps = new ArrayList<>();
          if (ar.failed() && isStale(ar.cause())) {
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
            for (PackedSegment s : bundle) spoolFailedWrite(s, ar.cause());
          } else {
            Map<String, Landed> landed = new LinkedHashMap<>();
            int i = 0;
            for (io.vertx.sqlclient.Row r : ar.result()) {
              PackedSegment s = bundle.get(i++);
              followUps.add(onSegmentResult(s, r, landed));
            }
            // Announced before the requests are answered: a parked pop may already be on its way when they are.
            for (Landed l : landed.values()) announce(l);
            for (PackedSegment s : bundle) if (s.queued) for (int k = 0; k < s.slots.size(); k++) {
              resolve(s.slots.get(k), "queued", s.pid, s.base + k, null);
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
    return e.getMessage() != null && e.getMessage().contains(STALE);
  }

  /** Back to the head of the partition's queue, ahead of frames that arrived during this write. */
  private void requeue(PartitionKey key, List<Slot> slots) {
    List<Slot> again = new ArrayList<>(slots.size());
    for (Slot s : slots) {
      if (++s.attempts > MAX_DUPLICATE_RETRIES) resolveFailed(s);
      else again.add(s);
    }
    if (!again.isEmpty()) waiting(again.get(0).owner).computeIfAbsent(key, k -> new ArrayList<>()).addAll(0, again);
  }

  private void forgetPartitions(String tenant, String queue) {
    knownPartitions.keySet().removeIf(k -> (tenant == null || k.tenant().toString().equals(tenant))
        && (queue == null || k.queue().equals(queue)));
  }

  /** What one bundle landed in one (tenant, queue): one announcement, whatever the number of its partitions. */
  private static final class Landed {
    final PartitionKey first;
    final UUID pid;
    final long lastOffset;
    int partitions;

    Landed(PartitionKey first, UUID pid, long lastOffset) {
      this.first = first;
      this.pid = pid;
      this.lastOffset = lastOffset;
    }
  }

  private Future<?> onSegmentResult(PackedSegment seg, io.vertx.sqlclient.Row r, Map<String, Landed> landed) {
    UUID pid = r.getUUID("partition_id");
    if (pid != null) knownPartitions.put(seg.key, pid);
    if ("queued".equals(r.getString("status"))) {
      long base = r.getLong("base_offset");
      seg.queued = true;
      seg.pid = pid;
      seg.base = base;
      node.metrics().pushedMessages.increment(seg.slots.size());
      landed.computeIfAbsent(seg.key.tenant() + "\u001f" + seg.key.queue(),
          k -> new Landed(seg.key, pid, base + seg.slots.size() - 1)).partitions++;
      remember(seg, pid, base, r);
      return Future.succeededFuture();
    }
    // duplicate: the frames named in "dups" exist in the window; nothing was written, so the others go again.
    Map<Integer, Long> dups = new HashMap<>();
    Object raw = r.getValue("dups");
    JsonArray list = raw instanceof JsonArray a ? a : new JsonArray();
    for (Object o : list) {
      JsonObject d = (JsonObject) o;
      dups.put(d.getInteger("i"), d.getLong("off"));
    }
    List<Slot> retry = new ArrayList<>();
    List<Future<?>> lookups = new ArrayList<>();
    for (int i = 0; i < seg.slots.size(); i++) {
      Slot s = seg.slots.get(i);
      Long off = dups.get(i);
      if (off != null) {
        lookups.add(originalMessageId(pid, off).onComplete(id -> resolve(s, "duplicate", pid, off,
            id.succeeded() ? id.result() : UuidV7.ZERO)));
      } else if (++s.attempts > MAX_DUPLICATE_RETRIES) {
        resolveFailed(s);
      } else {
        retry.add(s);
      }
    }
    if (!retry.isEmpty()) {
      waiting(retry.get(0).owner).computeIfAbsent(seg.key, k -> new ArrayList<>()).addAll(0, retry);
    }
    return Future.join(lookups);
  }

  // ---- dedup cache upkeep ----------------------------------------------------------------------------------

  /** Teaches the dedup cache a committed segment, and starts the read it asks for (warm-up or gap fill). */
  private void remember(PackedSegment seg, UUID pid, long base, io.vertx.sqlclient.Row r) {
    if (!dedup.enabled()) return;
    var createdAt = r.getOffsetDateTime("created_at");
    if (createdAt == null) {
      dedup.drop(seg.key);
      return;
    }
    long at = createdAt.toEpochSecond() * 1_000_000L + createdAt.getNano() / 1000;
    switch (dedup.written(seg.key, pid, base, seg.slots.size(), seg.hashes, at, r.getInteger("window_seconds"))) {
      case WARM -> warm(seg.key, pid);
      case FILL -> fill(seg.key, pid);
      default -> { }
    }
  }

  private void warm(PartitionKey key, UUID pid) {
    Long skip = dedupSkipUntil.get(key);
    if (skip != null && skip > System.currentTimeMillis()) return;
    if (!dedupReading.add(key)) return;
    node.pool().preparedQuery(WARM_HEAD).execute(Tuple.of(pid)).onComplete(ar -> {
      if (ar.failed() || ar.result().size() == 0) {
        dedupReading.remove(key);
        if (ar.failed()) log.debug("dedup cache warm-up of {} failed: {}", pid, ar.cause().toString());
        return;
      }
      var head = ar.result().iterator().next();
      long last = head.getLong(0);
      int window = head.getInteger(1);
      if (window <= 0) {
        dedupReading.remove(key);
        return;
      }
      warmPage(key, pid, window, last, -1, new ArrayList<>());
    });
  }

  private void warmPage(PartitionKey key, UUID pid, int window, long last, long after, List<DedupCache.TxnRow> rows) {
    node.pool().preparedQuery(WARM_PAGE).execute(Tuple.of(pid, after, last, window, WARM_PAGE_ROWS)).onComplete(ar -> {
      if (ar.failed()) {
        dedupReading.remove(key);
        log.debug("dedup cache warm-up of {} failed: {}", pid, ar.cause().toString());
        return;
      }
      long next = after;
      for (var row : ar.result()) {
        DedupCache.TxnRow r = txnRow(row, 0);
        rows.add(r);
        next = r.baseOffset();
      }
      if (ar.result().size() == WARM_PAGE_ROWS) {
        if (rows.size() < WARM_MAX_ROWS) {
          warmPage(key, pid, window, last, next, rows);
          return;
        }
        // too much of the window to hold: this partition is probed in full for a while
        dedupReading.remove(key);
        dedupSkipUntil.put(key, System.currentTimeMillis() + 60_000);
        return;
      }
      dedupReading.remove(key);
      dedupSkipUntil.remove(key);
      dedup.warmed(key, pid, window, last, rows);
    });
  }

  private void fill(PartitionKey key, UUID pid) {
    long from = dedup.gapStart(key, pid);
    if (from < -1 || !dedupReading.add(key)) return;
    node.pool().preparedQuery(FILL).execute(Tuple.of(pid, from, FILL_ROWS)).onComplete(ar -> {
      dedupReading.remove(key);
      if (ar.failed()) {
        dedup.drop(key);
        return;
      }
      List<DedupCache.TxnRow> rows = new ArrayList<>(ar.result().size());
      for (var row : ar.result()) rows.add(txnRow(row, 0));
      if (dedup.filled(key, pid, from, rows)) {
        if (rows.size() >= FILL_ROWS) fill(key, pid);
        else dedup.drop(key); // a committed segment of ours not visible: do not trust this entry
      }
    });
  }

  private static DedupCache.TxnRow txnRow(io.vertx.sqlclient.Row row, int at) {
    return new DedupCache.TxnRow(row.getLong(at), row.getLong(at + 1), row.getBuffer(at + 2).getBytes(),
        row.getLong(at + 3));
  }

  /** The id of the frame already stored at {@code off}: decoded from its covering segment, else the all-zero uuid. */
  private Future<UUID> originalMessageId(UUID pid, long off) {
    return node.pool()
        .preparedQuery("SELECT base_offset, blob FROM queen.log_segment_at_v1($1, $2)")
        .execute(Tuple.of(pid, off))
        .map(rows -> {
          var it = rows.iterator();
          if (!it.hasNext()) return UuidV7.ZERO;
          var row = it.next();
          try {
            var seg = Segment.decode(row.getBuffer("blob").getBytes());
            return seg.frame((int) (off - row.getLong("base_offset"))).messageId();
          } catch (Exception e) {
            return UuidV7.ZERO;
          }
        })
        .otherwise(UuidV7.ZERO);
  }

  private void announce(Landed l) {
    vertx.eventBus().publish(Addresses.LANDED, new JsonObject()
        .put("tenant", l.first.tenant().toString())
        .put("queue", l.first.queue())
        .put("partition", l.first.partition())
        .put("partitionId", l.pid.toString())
        .put("lastOffset", l.lastOffset)
        .put("partitions", l.partitions));
  }

  /**
   * A write that failed outright: its frames go to the spool and are answered {@code buffered} (ENGINE.md §9.5), or
   * {@code failed} when the spool write fails too. A spool replay that fails keeps its file instead, and is told why.
   */
  private void spoolFailedWrite(PackedSegment seg, Throwable cause) {
    List<Slot> toSpool = new ArrayList<>();
    for (Slot s : seg.slots) {
      if (s.owner.fromSpool) {
        s.owner.causes[s.index] = cause;
        for (Slot f : s.flushFollowers) if (f.owner.causes != null) f.owner.causes[f.index] = cause;
        resolveFailed(s);
      } else {
        toSpool.add(s);
      }
    }
    if (toSpool.isEmpty()) return;
    List<Spool.Event> events = new ArrayList<>();
    for (Slot s : toSpool) {
      events.add(new Spool.Event(seg.key.tenant().toString(), seg.key.queue(), seg.key.partition(),
          s.frame.transactionId(), s.frame.producerSub(), s.frame.encrypted(), s.frame.payload()));
      for (Slot f : s.flushFollowers) {
        events.add(new Spool.Event(seg.key.tenant().toString(), seg.key.queue(), seg.key.partition(),
            f.frame.transactionId(), f.frame.producerSub(), f.frame.encrypted(), f.frame.payload()));
      }
    }
    boolean ok = spoolSafely(events);
    for (Slot s : toSpool) resolve(s, ok ? "buffered" : "failed", null, -1, s.frame.messageId());
  }

  // ---- spool drain ------------------------------------------------------------------------------------------
  //
  // The oldest spool file is replayed until the database has taken every event of it. Events that land are cut out
  // of the file at once. A transient failure (the database unreachable or busy) keeps the events and waits, 100 ms
  // doubling to 5 s, for as long as it lasts, restarts included. A permanent one (the database rejects the data)
  // splits the failed events in halves, replayed apart, until the event it rejects is alone: only that one is set
  // aside into failed/, with the reason.

  private boolean draining;
  /** Replays in a row that failed transiently; the spool is unhealthy while this is not zero. */
  private int drainFailures;
  private long drainBackoffMs;
  private long nextDrainAt;
  /** The file being replayed, its events not yet landed nor set aside, and the batches to replay next. */
  private java.nio.file.Path drainFile;
  private List<Spool.Event> drainLeft;
  private final java.util.ArrayDeque<List<Spool.Event>> drainPlan = new java.util.ArrayDeque<>();

  /** What became of one spooled event in a replay: landed, or failed with the write's error (null if none). */
  private record Replayed(Spool.Event event, boolean landed, Throwable cause) {}

  /** False while the spool cannot drain (its last replay failed transiently). */
  private boolean bufferHealthy() {
    return drainFailures == 0;
  }

  /**
   * Whether this node has read the push-maintenance switch itself since it started: until then a spool left by a
   * node stopped under maintenance must not be replayed (the boot read of the switch is not awaited by anyone).
   */
  private boolean switchRead;
  private boolean switchReading;

  private void readSwitch() {
    if (switchReading) return;
    switchReading = true;
    node.pool().query("SELECT (value->>'enabled')::boolean FROM queen.system_state WHERE key = 'maintenance_mode'")
        .execute().onComplete(ar -> {
          switchReading = false;
          if (ar.failed()) { // tried again on the next tick; meanwhile the spool cannot drain
            if (spool.pendingEvents() > 0) drainFailures = Math.max(1, drainFailures);
            return;
          }
          var it = ar.result().iterator();
          boolean on = it.hasNext() && Boolean.TRUE.equals(it.next().getBoolean(0));
          if (on) node.maintenance().setPush(true);
          switchRead = true;
        });
  }

  private void drain() {
    if (!switchRead) {
      readSwitch();
      return;
    }
    if (draining || node.maintenance().pushMaintenance()) return;
    if (System.currentTimeMillis() < nextDrainAt) return;
    try {
      if (drainFile == null) {
        spool.rotate();
        List<java.nio.file.Path> files = spool.sealed();
        if (files.isEmpty()) {
          drainFailures = 0;
          return;
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
        return;
      }
    } catch (Exception e) {
      log.warn("spool drain could not read: {}", e.toString());
      drainFile = null;
      return;
    }
    List<Spool.Event> batch = drainPlan.pollFirst();
    draining = true;
    replay(batch).onComplete(ar -> {
      draining = false;
      try {
        settle(batch, ar.succeeded() ? ar.result() : List.of());
      } catch (Exception e) {
        log.warn("spool bookkeeping failed: {}", e.toString());
        drainFile = null; // read the file again from disk on the next tick
        drainPlan.clear();
      }
    });
  }

  /** Replays {@code batch}, one internal request per (tenant, producerSub); frames keep their stored payload. */
  private Future<List<Replayed>> replay(List<Spool.Event> batch) {
    Map<String, List<Spool.Event>> byOrigin = new LinkedHashMap<>();
    for (Spool.Event e : batch) {
      byOrigin.computeIfAbsent(e.tenant() + "\u001f" + e.producerSub(), k -> new ArrayList<>()).add(e);
    }
    List<Future<List<Replayed>>> parts = new ArrayList<>();
    for (List<Spool.Event> group : byOrigin.values()) {
      var promise = io.vertx.core.Promise.<List<Replayed>>promise();
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
        enqueue(self[0], i, new Frame(UuidV7.next(), e.transactionId(), null, e.producerSub(), e.payload(),
            e.encrypted()));
      }
    }
    scheduleDispatch();
    return Future.all(parts).map(all -> {
      List<Replayed> r = new ArrayList<>(batch.size());
      for (int i = 0; i < parts.size(); i++) r.addAll(parts.get(i).result());
      return r;
    });
  }

  /** Cuts what landed out of the file, sets aside what is rejected alone, and plans what is left. */
  private void settle(List<Spool.Event> batch, List<Replayed> results) throws java.io.IOException {
    Set<Spool.Event> done = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    List<Spool.Event> retry = new ArrayList<>();
    List<Replayed> rejected = new ArrayList<>();
    Set<Spool.Event> seen = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    for (Replayed r : results) {
      seen.add(r.event());
      if (r.landed()) done.add(r.event());
      else if (permanent(r.cause())) rejected.add(r);
      else retry.add(r.event());
    }
    for (Spool.Event e : batch) if (!seen.contains(e)) retry.add(e); // the replay itself failed
    int landed = done.size();
    List<List<Spool.Event>> halves = new ArrayList<>();
    if (rejected.size() == 1) {
      // Alone in its write and refused by the database: the one event it will never accept.
      Replayed r = rejected.get(0);
      String reason = reason(r.cause());
      spool.reject(r.event(), reason);
      done.add(r.event());
      log.error("spool event set aside into failed/ (queue {}, partition {}, transactionId {}): {}",
          r.event().queue(), r.event().partition(), r.event().transactionId(), reason);
    } else if (!rejected.isEmpty()) {
      List<Spool.Event> bad = new ArrayList<>(rejected.size());
      for (Replayed r : rejected) bad.add(r.event());
      int mid = bad.size() / 2;
      halves.add(new ArrayList<>(bad.subList(0, mid)));
      halves.add(new ArrayList<>(bad.subList(mid, bad.size())));
      log.warn("spool replay of {} events refused by the database ({}); replaying them apart to find the bad ones",
          bad.size(), reason(rejected.get(0).cause()));
    }
    for (int i = halves.size() - 1; i >= 0; i--) drainPlan.addFirst(halves.get(i));
    if (!retry.isEmpty()) {
      drainPlan.addFirst(retry);
      drainFailures++;
      drainBackoffMs = drainBackoffMs == 0 ? DRAIN_BACKOFF_FIRST_MS : Math.min(DRAIN_BACKOFF_MAX_MS, drainBackoffMs * 2);
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
    drainLeft.removeIf(done::contains);
    if (drainLeft.isEmpty()) {
      spool.delete(drainFile, done.size());
      log.info("spool file {} replayed", drainFile.getFileName());
      drainFile = null;
      drainPlan.clear();
    } else {
      spool.rewrite(drainFile, drainLeft, done.size());
      if (landed > 0) log.info("spool file {}: {} events replayed, {} left", drainFile.getFileName(), landed,
          drainLeft.size());
    }
  }

  /**
   * Whether the database refused the data itself, so that a replay can never succeed: a data exception (SQLSTATE
   * class 22), a constraint violation (23), a program limit such as an over-long index row (54), or the push
   * function's own refusal of a malformed segment. Anything else, unreachable, closed, busy, out of resources,
   * serialization failures, unknown errors, is transient: the event waits and is replayed.
   */
  static boolean permanent(Throwable t) {
    if (!(t instanceof io.vertx.pgclient.PgException pg) || pg.getSqlState() == null) return false;
    String state = pg.getSqlState();
    if (state.startsWith("22") || state.startsWith("23") || state.startsWith("54")) return true;
    return "P0001".equals(state) && pg.getMessage() != null && pg.getMessage().contains("QPUSH bad");
  }

  private static String reason(Throwable t) {
    if (t instanceof io.vertx.pgclient.PgException pg) return "SQLSTATE " + pg.getSqlState() + ": " + pg.getErrorMessage();
    return String.valueOf(t);
  }

  private void resolveFailed(Slot s) {
    resolve(s, "failed", null, -1, s.frame.messageId());
  }

  /** Records a leader's verdict, and its followers' (a follower of a stored frame is its duplicate). */
  private void resolve(Slot s, String status, UUID pid, long offset, UUID duplicateOf) {
    PushItem item = s.owner.cmd.items().get(s.index);
    UUID id = "queued".equals(status) || "failed".equals(status) ? s.frame.messageId() : duplicateOf;
    complete(s.owner, s.index, new PushOutcome(s.index, id, s.frame.transactionId(), item.queue(), status, pid, offset));
    for (Slot f : s.flushFollowers) {
      String fs = "failed".equals(status) ? "failed" : "duplicate";
      PushItem fi = f.owner.cmd.items().get(f.index);
      complete(f.owner, f.index, new PushOutcome(f.index, "failed".equals(fs) ? f.frame.messageId() : id,
          f.frame.transactionId(), fi.queue(), fs, pid, offset));
    }
  }

  private void complete(Request req, int index, PushOutcome o) {
    req.out[index] = o;
    if (--req.outstanding > 0) return;
    // Followers inside the request copy their leader's final id and inherit its failure.
    for (int i = 0; i < req.out.length; i++) {
      int lead = req.leaderOf[i];
      if (lead == i) continue;
      PushOutcome l = req.out[lead];
      String st = "failed".equals(l.status()) ? "failed" : "duplicate";
      req.out[i] = new PushOutcome(i, l.messageId(), l.transactionId(), l.queue(), st, l.partitionId(), l.offset());
    }
    req.done.accept(Arrays.asList(req.out));
  }
}
