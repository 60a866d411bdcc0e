package io.queenvertx.log;

import io.queenvertx.codec.Frame;
import io.queenvertx.codec.Segment;
import io.queenvertx.codec.TxnHash;
import io.queenvertx.db.PushProcedures;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * One segment of a push bundle, the one packer of every push: the log writer's (HTTP, event bus and spool replay,
 * fused) and a transaction's. Its blob is packed just before the write ({@link #compress}), and the bundle becomes
 * one {@code log_push_multi} call ({@link #segments}); the result fields are set when the write answers
 * {@code queued}. Used from the log writer's context, except {@link #compress}, which runs on the worker pool for a
 * large bundle (nothing else touches the bundle meanwhile).
 */
final class PackedSegment {
  final PartitionKey key;
  /** The waiting frames it answers (the log writer's); empty for a transaction's segment. */
  final List<Slot> slots;
  final List<Frame> frames;
  byte[] blob;
  final byte[] hashes;
  /** The dedup cache's promise and the partition id hint; null when there is none (a transaction's). */
  final DedupCache.Claim claim;
  final UUID hint;
  boolean queued;
  UUID pid;
  long base;

  PackedSegment(PartitionKey key, List<Slot> slots, byte[] hashes, DedupCache.Claim claim,
      UUID hint) {
    this.key = key;
    this.slots = slots;
    this.frames = new ArrayList<>(slots.size());
    for (Slot slot : slots) frames.add(slot.frame);
    this.hashes = hashes;
    this.claim = claim;
    this.hint = hint;
  }

  private PackedSegment(PartitionKey key, List<Frame> frames) {
    this.key = key;
    this.slots = List.of();
    this.frames = frames;
    this.hashes = new byte[frames.size() * TxnHash.BYTES];
    for (int j = 0; j < frames.size(); j++) {
      System.arraycopy(TxnHash.of(frames.get(j).transactionId()), 0, hashes, j * TxnHash.BYTES, TxnHash.BYTES);
    }
    this.claim = null;
    this.hint = null;
  }

  /** A segment of {@code frames} without a dedup promise (a transaction's: the database probes the whole window). */
  static PackedSegment of(PartitionKey key, List<Frame> frames) {
    return new PackedSegment(key, frames);
  }

  /** The frame count of the segment. */
  int count() {
    return frames.size();
  }

  /** The payload bytes of every frame of {@code bundle}: what packing it costs ({@link Offload#cpu}). */
  static long payloadBytes(List<PackedSegment> bundle) {
    long bytes = 0;
    for (PackedSegment s : bundle) for (Frame f : s.frames) bytes += f.payload().length;
    return bytes;
  }

  /** Packs each segment's frames into its zstd blob; returns {@code bundle}. */
  static List<PackedSegment> compress(List<PackedSegment> bundle, int zstdLevel) {
    for (PackedSegment s : bundle) {
      // a frame may have been replaced by its encrypted copy since the segment was made (the retry after QV103)
      if (!s.slots.isEmpty()) for (int i = 0; i < s.slots.size(); i++) s.frames.set(i, s.slots.get(i).frame);
      s.blob = Segment.pack(s.frames, zstdLevel);
    }
    return bundle;
  }

  /**
   * The arguments of one {@code queen.log_push_multi} call writing {@code bundle}: one element per segment, in
   * bundle order (the order of the call's result rows).
   */
  static PushProcedures.Segments segments(List<PackedSegment> bundle) {
    var a = PushProcedures.Segments.of(bundle.size());
    for (int i = 0; i < bundle.size(); i++) {
      PackedSegment s = bundle.get(i);
      a.tenants()[i] = s.key.tenant();
      a.queues()[i] = s.key.queue();
      a.partitions()[i] = s.key.partition();
      a.counts()[i] = s.count();
      a.hashes()[i] = s.hashes;
      a.blobs()[i] = s.blob;
      a.verified()[i] = s.claim == null ? null : s.claim.verified();
      a.expect()[i] = s.claim == null ? null : s.claim.partitionId();
      a.hints()[i] = s.hint;
      a.encrypted()[i] = allEncrypted(s.frames);
    }
    return a;
  }

  static boolean allEncrypted(List<Frame> frames) {
    for (Frame f : frames) if (!f.encrypted()) return false;
    return true;
  }
}
