package io.queenvertx.log;

import io.queenvertx.codec.Frame;
import io.queenvertx.codec.Segment;
import io.vertx.core.buffer.Buffer;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * One segment of a push bundle; its blob is packed just before the write, the result fields are set when the write
 * answers {@code queued}. Used from the log writer's context, except {@link #compress}, which runs on the worker pool
 * for a large bundle (nothing else touches the bundle meanwhile).
 */
final class PackedSegment {
  final LogWriterVerticle.PartitionKey key;
  final List<Slot> slots;
  byte[] blob;
  final byte[] hashes;
  final DedupCache.Claim claim;
  final UUID hint;
  boolean queued;
  UUID pid;
  long base;

  PackedSegment(LogWriterVerticle.PartitionKey key, List<Slot> slots, byte[] hashes, DedupCache.Claim claim,
      UUID hint) {
    this.key = key;
    this.slots = slots;
    this.hashes = hashes;
    this.claim = claim;
    this.hint = hint;
  }

  /** The payload bytes of every frame of {@code bundle}: what packing it costs ({@link Offload#cpu}). */
  static long payloadBytes(List<PackedSegment> bundle) {
    long bytes = 0;
    for (PackedSegment s : bundle) for (Slot slot : s.slots) bytes += slot.frame.payload().length;
    return bytes;
  }

  /** Packs each segment's frames into its zstd blob; returns {@code bundle}. */
  static List<PackedSegment> compress(List<PackedSegment> bundle, int zstdLevel) {
    for (PackedSegment s : bundle) {
      List<Frame> frames = new ArrayList<>(s.slots.size());
      for (Slot slot : s.slots) frames.add(slot.frame);
      s.blob = Segment.pack(frames, zstdLevel);
    }
    return bundle;
  }

  /**
   * The parameters of one {@code queen.log_push_multi} call writing {@code bundle}: one array per column, one element
   * per segment, in bundle order (the order of the call's result rows).
   */
  static Tuple params(List<PackedSegment> bundle) {
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
    Boolean[] encrypted = new Boolean[n];
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
      encrypted[i] = PushEncryption.allEncrypted(s.slots);
    }
    return Tuple.of(tenants, queues, partitions, counts, hashes, blobs).addValue(verified).addValue(expect)
        .addValue(hints).addValue(encrypted);
  }
}
