package io.queenvertx.log;

import io.queenvertx.bus.PushItem;
import io.queenvertx.bus.PushOutcome;
import io.queenvertx.codec.Frame;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * One frame waiting for its write in the log writer, and the request it answers. Used only from the log writer's
 * single worker thread (no locking).
 */
final class Slot {
  /** Replaced only by an encrypted copy when the write answered QCRYPT. */
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
