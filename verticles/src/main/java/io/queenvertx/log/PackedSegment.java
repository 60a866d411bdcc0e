package io.queenvertx.log;

import io.vertx.core.buffer.Buffer;
import io.vertx.sqlclient.Tuple;
import java.util.List;
import java.util.UUID;

/**
 * One segment of a push bundle; the result fields are set when its write answers {@code queued}. Used only from the
 * log writer's single worker thread.
 */
final class PackedSegment {
  final LogWriterVerticle.PartitionKey key;
  final List<Slot> slots;
  final byte[] blob;
  final byte[] hashes;
  final DedupCache.Claim claim;
  final UUID hint;
  boolean queued;
  UUID pid;
  long base;

  PackedSegment(LogWriterVerticle.PartitionKey key, List<Slot> slots, byte[] blob, byte[] hashes,
      DedupCache.Claim claim, UUID hint) {
    this.key = key;
    this.slots = slots;
    this.blob = blob;
    this.hashes = hashes;
    this.claim = claim;
    this.hint = hint;
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
