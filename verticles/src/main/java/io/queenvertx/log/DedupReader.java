package io.queenvertx.log;

import io.queenvertx.codec.Segment;
import io.queenvertx.db.PushProcedures;
import io.queenvertx.db.SegmentProcedures;
import io.queenvertx.codec.UuidV7;
import io.vertx.core.Future;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the push dedup cache ({@link DedupCache}) fed: teaches it each committed segment and runs the reads it asks
 * for, a warm-up of a partition's window (paged) or the fill of a gap after a segment it did not see; and reads the
 * message id a duplicate answers with ({@link #originalMessageId}).
 *
 * <p>A plain object owned by the log writer and used only from its event-loop thread: the reads' callbacks run on
 * that thread too, so its bookkeeping needs no locks.
 */
final class DedupReader {
  private static final Logger log = LoggerFactory.getLogger(LogWriterVerticle.class);
  /** A warm-up reads the window's segment hashes in pages of this many rows; it gives up past WARM_MAX_ROWS. */
  static final int WARM_PAGE_ROWS = 4096;
  static final int WARM_MAX_ROWS = 1_000_000;
  static final int FILL_ROWS = 512;
  /** A partition whose window is too big to cache is probed in full for this long before another warm-up. */
  static final long SKIP_MS = 60_000;
  // A warm-up starts from the partition's last offset and dedup window (DedupCache#warmed), then reads every
  // segment's hashes at or below that offset still inside the window, in offset order, a page at a time; a gap fill
  // reads the rows after an offset with no upper bound and no window (R__20_push.sql).
  private final PushProcedures pushes;
  private final SegmentProcedures segments;
  private final DedupCache dedup;
  /** Partitions whose dedup-cache warm-up or gap fill is running, and those too big to cache, until when. */
  private final Set<PartitionKey> reading = new HashSet<>();
  private final Map<PartitionKey, Long> skipUntil = new HashMap<>();

  DedupReader(PushProcedures pushes, SegmentProcedures segments, DedupCache dedup) {
    this.pushes = pushes;
    this.segments = segments;
    this.dedup = dedup;
  }

  /**
   * Teaches the dedup cache a committed segment ({@code count} frames from {@code base}, the row of its
   * {@code log_push_multi} result), and starts the read it asks for (warm-up or gap fill).
   */
  void remember(PartitionKey key, UUID pid, long base, int count, byte[] hashes,
                PushProcedures.Written r) {
    if (!dedup.enabled()) return;
    var createdAt = r.createdAt();
    if (createdAt == null) {
      dedup.drop(key);
      return;
    }
    switch (dedup.written(key, pid, base, count, hashes, micros(createdAt), r.windowSeconds())) {
      case WARM -> warm(key, pid);
      case FILL -> fill(key, pid);
      default -> { }
    }
  }

  /** {@code t} in microseconds since the epoch (the unit of the cache's timestamps and of the reads' at_us). */
  static long micros(OffsetDateTime t) {
    return t.toEpochSecond() * 1_000_000L + t.getNano() / 1000;
  }

  private void warm(PartitionKey key, UUID pid) {
    Long skip = skipUntil.get(key);
    if (skip != null && skip > System.currentTimeMillis()) return;
    if (!reading.add(key)) return;
    pushes.dedupHead(pid).onComplete(ar -> {
      if (ar.failed() || ar.result() == null) {
        reading.remove(key);
        if (ar.failed()) log.debug("dedup cache warm-up of {} failed: {}", pid, ar.cause().toString());
        return;
      }
      var head = ar.result();
      long last = head.lastOffset();
      int window = head.windowSeconds();
      if (window <= 0) {
        reading.remove(key);
        return;
      }
      warmPage(key, pid, window, last, -1, new ArrayList<>());
    });
  }

  private void warmPage(PartitionKey key, UUID pid, int window, long last, long after,
      List<DedupCache.TxnRow> rows) {
    pushes.dedupTxns(pid, after, last, window, WARM_PAGE_ROWS).onComplete(ar -> {
      if (ar.failed()) {
        reading.remove(key);
        log.debug("dedup cache warm-up of {} failed: {}", pid, ar.cause().toString());
        return;
      }
      long next = after;
      for (var row : ar.result()) {
        DedupCache.TxnRow r = txnRow(row);
        rows.add(r);
        next = r.baseOffset();
      }
      if (ar.result().size() == WARM_PAGE_ROWS) {
        if (rows.size() < WARM_MAX_ROWS) {
          warmPage(key, pid, window, last, next, rows);
          return;
        }
        // too much of the window to hold: this partition is probed in full for a while
        reading.remove(key);
        skipUntil.put(key, System.currentTimeMillis() + SKIP_MS);
        return;
      }
      reading.remove(key);
      skipUntil.remove(key);
      dedup.warmed(key, pid, window, last, rows);
    });
  }

  private void fill(PartitionKey key, UUID pid) {
    long from = dedup.gapStart(key, pid);
    if (from < -1 || !reading.add(key)) return;
    pushes.dedupTxns(pid, from, Long.MAX_VALUE, null, FILL_ROWS).onComplete(ar -> {
      reading.remove(key);
      if (ar.failed()) {
        dedup.drop(key);
        return;
      }
      List<DedupCache.TxnRow> rows = new ArrayList<>(ar.result().size());
      for (var row : ar.result()) rows.add(txnRow(row));
      if (dedup.filled(key, pid, from, rows)) {
        if (rows.size() >= FILL_ROWS) fill(key, pid);
        else dedup.drop(key); // a committed segment of ours not visible: do not trust this entry
      }
    });
  }

  private static DedupCache.TxnRow txnRow(PushProcedures.TxnRow row) {
    return new DedupCache.TxnRow(row.baseOffset(), row.endOffset(), row.hashes(), row.atMicros());
  }

  /** The id of the frame already stored at {@code off}: decoded from its covering segment, else the all-zero uuid. */
  Future<UUID> originalMessageId(UUID pid, long off) {
    return segments.at(pid, off)
        .map(row -> {
          if (row == null) return UuidV7.ZERO;
          try {
            var seg = Segment.decode(row.blob());
            return seg.frame((int) (off - row.baseOffset())).messageId();
          } catch (Exception e) {
            return UuidV7.ZERO;
          }
        })
        .otherwise(UuidV7.ZERO);
  }
}
