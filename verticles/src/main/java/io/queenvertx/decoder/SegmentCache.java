package io.queenvertx.decoder;

import io.queenvertx.codec.DecodedSegment;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Decoded segments keyed by (partitionId, baseOffset), least recently used evicted first. Segments are immutable, so
 * an entry never goes stale; retention removing a segment only means it is no longer asked for. Shared by every
 * decoder instance of a node. Counters are exposed for metrics and for the "one decode per segment per page" tests.
 */
public final class SegmentCache {
  record Key(UUID partitionId, long base) {}

  private final int capacity;
  private final Map<Key, DecodedSegment> map;
  private final AtomicLong hits = new AtomicLong();
  private final AtomicLong misses = new AtomicLong();
  private final AtomicLong decodes = new AtomicLong();

  public SegmentCache(int capacity) {
    this.capacity = Math.max(16, capacity);
    this.map = new LinkedHashMap<>(256, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<Key, DecodedSegment> e) {
        return size() > SegmentCache.this.capacity;
      }
    };
  }

  synchronized DecodedSegment get(UUID pid, long base) {
    DecodedSegment s = map.get(new Key(pid, base));
    if (s == null) misses.incrementAndGet();
    else hits.incrementAndGet();
    return s;
  }

  synchronized void put(UUID pid, long base, DecodedSegment s) {
    map.put(new Key(pid, base), s);
  }

  void countDecode() {
    decodes.incrementAndGet();
  }

  public long hits() {
    return hits.get();
  }

  public long misses() {
    return misses.get();
  }

  /** How many blobs were zstd-decoded since start. */
  public long decodes() {
    return decodes.get();
  }

  public synchronized int size() {
    return map.size();
  }
}
