package io.queenvertx.log;

import io.queenvertx.bus.PushCommand;
import io.queenvertx.bus.PushOutcome;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;

/**
 * One push request in the log writer: its outcomes fill in as its frames are written; replied when none is
 * outstanding. Used only from the log writer's event-loop thread (no locking).
 */
final class Request {
  final PushCommand cmd;
  final Consumer<List<PushOutcome>> done;
  /** A spool replay: a failed write keeps the file instead of spooling again. */
  final boolean fromSpool;
  final PushOutcome[] out;
  final int[] leaderOf;
  /** A spool replay's items that failed: why (the write's error), or null when the reason was not a write error. */
  final Throwable[] causes;
  int outstanding;

  Request(PushCommand cmd, Consumer<List<PushOutcome>> done, boolean fromSpool) {
    this.cmd = cmd;
    this.done = done;
    this.fromSpool = fromSpool;
    this.out = new PushOutcome[cmd.items().size()];
    this.leaderOf = new int[cmd.items().size()];
    this.causes = fromSpool ? new Throwable[cmd.items().size()] : null;
  }

  /** Records item {@code index}'s outcome; the last one outstanding answers the request. */
  void complete(int index, PushOutcome o) {
    out[index] = o;
    if (--outstanding > 0) return;
    // Followers inside the request copy their leader's final id and inherit its failure.
    for (int i = 0; i < out.length; i++) {
      int lead = leaderOf[i];
      if (lead == i) continue;
      PushOutcome l = out[lead];
      String st = "failed".equals(l.status()) ? "failed" : "duplicate";
      out[i] = new PushOutcome(i, l.messageId(), l.transactionId(), l.queue(), st, l.partitionId(), l.offset());
    }
    done.accept(Arrays.asList(out));
  }
}
