package io.queenvertx.log;

import io.queenvertx.bus.PushItem;
import io.queenvertx.bus.PushOutcome;
import io.queenvertx.codec.Frame;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * One frame waiting for its write in the log writer, and the request it answers. Used only from the log writer's
 * context (no locking); a large bundle's frames are read, not changed, by its packing on the worker pool.
 */
final class Slot {
  /** Replaced only by an encrypted copy when the write answered QV103. */
  Frame frame;
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

  /**
   * The leaders of a partition's waiting slots: the first frame with a given hash leads the flush, the rest become its
   * followers (ENGINE.md §3.2 layer 2).
   */
  static List<Slot> leadersOf(List<Slot> slots) {
    Map<ByteBuffer, Slot> seen = new HashMap<>();
    List<Slot> leaders = new ArrayList<>(slots.size());
    for (Slot s : slots) {
      Slot lead = seen.putIfAbsent(ByteBuffer.wrap(s.hash), s);
      if (lead == null) leaders.add(s);
      else lead.flushFollowers.add(s);
    }
    return leaders;
  }

  /** This slot (and its flush followers) answered {@code failed}. */
  void fail() {
    resolve("failed", null, -1, frame.messageId());
  }

  /** Records a leader's verdict, and its followers' (a follower of a stored frame is its duplicate). */
  void resolve(String status, UUID pid, long offset, UUID duplicateOf) {
    PushItem item = owner.cmd.items().get(index);
    UUID id = "queued".equals(status) || "failed".equals(status) ? frame.messageId() : duplicateOf;
    owner.complete(index, new PushOutcome(index, id, frame.transactionId(), item.queue(), status, pid, offset));
    for (Slot f : flushFollowers) {
      String fs = "failed".equals(status) ? "failed" : "duplicate";
      PushItem fi = f.owner.cmd.items().get(f.index);
      f.owner.complete(f.index, new PushOutcome(f.index, "failed".equals(fs) ? f.frame.messageId() : id,
          f.frame.transactionId(), fi.queue(), fs, pid, offset));
    }
  }
}
