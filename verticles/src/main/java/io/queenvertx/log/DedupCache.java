package io.queenvertx.log;

import io.queenvertx.codec.TxnHash;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

/**
 * The broker dedup cache (ENGINE.md §3.6): per partition, a fingerprint of every transaction-id hash stored at the
 * offsets it covers. When none of a push's hashes is in it, the push promises SQL {@code verified = coveredTo} ("no
 * incoming hash exists at an offset at or below it") and the dedup probe shrinks from the whole window to the offsets
 * other writers added since, which on a single node is none.
 *
 * <p>The cache never decides a verdict. A fingerprint hit, a real duplicate or a 64-bit collision, only withdraws
 * the promise, and SQL probes the whole window. The promise is bound to the partition id it was made about, and SQL
 * ignores it when the name resolves to another partition (a queue deleted and re-created).
 *
 * <p>Coverage is contiguous: {@code coveredTo} is the highest offset below which every hash still inside the dedup
 * window is known. Segments written here beyond a gap (another node, a transaction, a DLQ move wrote in between) are
 * remembered in {@code ahead} until the gap is filled from the segments' hashes. Fingerprints older than the window are
 * dropped a generation at a time, by the database's own timestamps.
 *
 * <p>Used only from the log writer's event-loop context: no locks.
 */
final class DedupCache {
  /** A push's promise to SQL: the verified offset and the partition it holds for; {@link #NONE} promises nothing. */
  record Claim(long verified, UUID partitionId) {
    static final Claim NONE = new Claim(-1, null);
  }

  /** One segment's hashes (log_segments.hashes): its offsets, packed hashes and timestamp in µs since the epoch. */
  record TxnRow(long baseOffset, long endOffset, byte[] hashes, long createdMicros) {}

  /** What the caller must do after {@link #written}. */
  enum Next { NOTHING, WARM, FILL }

  /** Fingerprints that outlive the window by this much before they are dropped (statement-time jitter). */
  static final long EXPIRY_MARGIN_MICROS = 120_000_000L;
  private static final int GENERATIONS_PER_WINDOW = 4;
  private static final int MAX_GENERATION_SIZE = 1 << 20;
  /** Bytes per fingerprint at the set's worst load factor (two slots of 8 bytes). */
  static final int BYTES_PER_ENTRY = 16;

  private final long maxEntries;
  private final Map<PartitionKey, Entry> entries = new LinkedHashMap<>(64, 0.75f, true);
  private long size;

  DedupCache(int budgetMb) {
    this.maxEntries = (long) budgetMb * 1024 * 1024 / BYTES_PER_ENTRY;
  }

  boolean enabled() {
    return maxEntries > 0;
  }

  long size() {
    return size;
  }

  int partitions() {
    return entries.size();
  }

  /** The promise a push of {@code hashes} (packed, {@link TxnHash#BYTES} each) may make for {@code key}. */
  Claim claim(PartitionKey key, byte[] hashes) {
    Entry e = entries.get(key);
    if (e == null || e.coveredTo < 0) return Claim.NONE;
    for (int off = 0; off < hashes.length; off += TxnHash.BYTES) {
      if (e.contains(fingerprint(hashes, off))) return Claim.NONE;
    }
    return new Claim(e.coveredTo, e.pid);
  }

  /** Records a committed segment of {@code count} frames at {@code base} in partition {@code pid}. */
  Next written(PartitionKey key, UUID pid, long base, int count, byte[] hashes, long createdMicros,
      int windowSeconds) {
    if (!enabled() || windowSeconds <= 0) {
      drop(key);
      return Next.NOTHING;
    }
    Entry e = entries.get(key);
    if (e != null && (!e.pid.equals(pid) || windowSeconds > e.windowSeconds)) {
      // another partition under the same name, or a longer window than the fingerprints kept: start over
      drop(key);
      e = null;
    }
    if (e == null) {
      if (base != 0) return Next.WARM;
      // the partition's first segment: nothing older exists, coverage starts empty
      e = new Entry(pid, windowSeconds, -1);
      entries.put(key, e);
    }
    e.windowSeconds = windowSeconds;
    long end = base + count - 1;
    if (base <= e.coveredTo) {
      drop(key); // cannot happen with offsets allocated in commit order; never trust an inconsistent entry
      return Next.NOTHING;
    }
    add(e, hashes, createdMicros);
    Next next = Next.NOTHING;
    if (base == e.coveredTo + 1) {
      e.coveredTo = end;
      absorbAhead(e);
    } else {
      e.ahead.put(base, end);
      next = Next.FILL;
    }
    expire(e);
    evictOverBudget(key);
    return next;
  }

  /**
   * A warm-up read of the partition: its {@code last_offset}, then every segment's hashes at or below it still
   * inside the window (read in pages after it), so every in-window hash at or below {@code lastOffset} is among
   * {@code rows}.
   */
  void warmed(PartitionKey key, UUID pid, int windowSeconds, long lastOffset, List<TxnRow> rows) {
    drop(key);
    if (!enabled() || windowSeconds <= 0) return;
    Entry e = new Entry(pid, windowSeconds, lastOffset);
    entries.put(key, e);
    for (TxnRow r : rows) add(e, r.hashes(), r.createdMicros());
    expire(e);
    evictOverBudget(key);
  }

  /** The offset a gap fill starts after, or -2 when {@code key} has no entry for {@code pid} or no gap. */
  long gapStart(PartitionKey key, UUID pid) {
    Entry e = entries.get(key);
    if (e == null || !e.pid.equals(pid) || e.ahead.isEmpty()) return -2;
    return e.coveredTo;
  }

  /**
   * The segments' hashes with {@code base_offset > from}, in offset order, read in one statement. Offsets commit
   * in order per partition, so they are a prefix of what follows {@code from}; hashes that are missing were purged,
   * and purged hashes are older than any dedup window. Returns whether a gap remains.
   */
  boolean filled(PartitionKey key, UUID pid, long from, List<TxnRow> rows) {
    Entry e = entries.get(key);
    if (e == null || !e.pid.equals(pid) || e.coveredTo != from) return false;
    for (TxnRow r : rows) {
      if (r.endOffset() <= e.coveredTo) continue;
      if (!e.ahead.containsKey(r.baseOffset())) add(e, r.hashes(), r.createdMicros());
      e.ahead.remove(r.baseOffset());
      e.coveredTo = r.endOffset();
    }
    absorbAhead(e);
    expire(e);
    evictOverBudget(key);
    return !e.ahead.isEmpty();
  }

  void drop(PartitionKey key) {
    Entry e = entries.remove(key);
    if (e != null) size -= e.size();
  }

  /** Forgets every partition of a queue (configured or deleted: its window or its partitions may have changed). */
  void dropQueue(String tenant, String queue) {
    for (Iterator<Map.Entry<PartitionKey, Entry>> it = entries.entrySet().iterator();
        it.hasNext(); ) {
      var me = it.next();
      var k = me.getKey();
      if ((tenant == null || k.tenant().toString().equals(tenant)) && (queue == null || k.queue().equals(queue))) {
        size -= me.getValue().size();
        it.remove();
      }
    }
  }

  static long fingerprint(byte[] hashes, int offset) {
    long fp = 0;
    for (int i = 0; i < 8; i++) fp = (fp << 8) | (hashes[offset + i] & 0xFF);
    return fp == 0 ? 1 : fp; // 0 marks an empty slot; the alias only adds a harmless false positive
  }

  private void add(Entry e, byte[] hashes, long createdMicros) {
    Generation g = e.gens.peekLast();
    long span = Math.max(1_000_000L, e.windowSeconds * 1_000_000L / GENERATIONS_PER_WINDOW);
    if (g == null || g.set.size() >= MAX_GENERATION_SIZE || createdMicros - g.oldestMicros > span) {
      g = new Generation(createdMicros);
      e.gens.addLast(g);
    }
    int n = hashes.length / TxnHash.BYTES;
    for (int i = 0; i < n; i++) {
      if (g.set.add(fingerprint(hashes, i * TxnHash.BYTES))) size++;
    }
    g.newestMicros = Math.max(g.newestMicros, createdMicros);
    e.newestMicros = Math.max(e.newestMicros, createdMicros);
  }

  private static void absorbAhead(Entry e) {
    while (!e.ahead.isEmpty() && e.ahead.firstKey() == e.coveredTo + 1) {
      e.coveredTo = e.ahead.pollFirstEntry().getValue();
    }
  }

  /** Drops the generations whose newest fingerprint left the window (plus margin) by the database's clock. */
  private void expire(Entry e) {
    long cutoff = e.newestMicros - e.windowSeconds * 1_000_000L - EXPIRY_MARGIN_MICROS;
    while (e.gens.size() > 1 && e.gens.peekFirst().newestMicros < cutoff) {
      size -= e.gens.pollFirst().set.size();
    }
  }

  /** Over budget: forget the least recently used partitions (they warm up again on their next push). */
  private void evictOverBudget(PartitionKey keep) {
    if (size <= maxEntries) return;
    long target = maxEntries - maxEntries / 10;
    for (Iterator<Map.Entry<PartitionKey, Entry>> it = entries.entrySet().iterator();
        it.hasNext() && size > target; ) {
      var me = it.next();
      if (me.getKey().equals(keep)) continue;
      size -= me.getValue().size();
      it.remove();
    }
    if (size > maxEntries) drop(keep); // one partition alone exceeds the budget: it goes uncached
  }

  private static final class Entry {
    final UUID pid;
    int windowSeconds;
    long coveredTo;
    long newestMicros = Long.MIN_VALUE;
    final ArrayDeque<Generation> gens = new ArrayDeque<>(4);
    final TreeMap<Long, Long> ahead = new TreeMap<>();

    Entry(UUID pid, int windowSeconds, long coveredTo) {
      this.pid = pid;
      this.windowSeconds = windowSeconds;
      this.coveredTo = coveredTo;
    }

    boolean contains(long fp) {
      for (Generation g : gens) if (g.set.contains(fp)) return true;
      return false;
    }

    long size() {
      long n = 0;
      for (Generation g : gens) n += g.set.size();
      return n;
    }
  }

  private static final class Generation {
    final LongSet set = new LongSet();
    final long oldestMicros;
    long newestMicros;

    Generation(long createdMicros) {
      this.oldestMicros = createdMicros;
      this.newestMicros = createdMicros;
    }
  }

  /** An open-addressing set of non-zero longs (linear probing, load at most 1/2). */
  static final class LongSet {
    private long[] slots = new long[16];
    private int size;

    int size() {
      return size;
    }

    boolean contains(long v) {
      int mask = slots.length - 1;
      for (int i = index(v, mask); ; i = (i + 1) & mask) {
        long s = slots[i];
        if (s == v) return true;
        if (s == 0) return false;
      }
    }

    boolean add(long v) {
      if ((size + 1) * 2 > slots.length) grow();
      int mask = slots.length - 1;
      for (int i = index(v, mask); ; i = (i + 1) & mask) {
        long s = slots[i];
        if (s == v) return false;
        if (s == 0) {
          slots[i] = v;
          size++;
          return true;
        }
      }
    }

    private void grow() {
      long[] old = slots;
      slots = new long[old.length * 2];
      int mask = slots.length - 1;
      for (long v : old) {
        if (v == 0) continue;
        int i = index(v, mask);
        while (slots[i] != 0) i = (i + 1) & mask;
        slots[i] = v;
      }
    }

    private static int index(long v, int mask) {
      return (int) (v ^ (v >>> 29) ^ (v >>> 47)) & mask;
    }
  }
}
