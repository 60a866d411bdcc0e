package io.queenvertx.log;

import io.vertx.core.Context;
import io.vertx.core.Future;
import java.util.concurrent.Callable;

/**
 * Where the log writer's blocking work runs. The writer lives on an event loop (its SQL round trips then need no
 * hand-off between threads); what could hold that loop goes to the worker pool instead:
 * <ul>
 *   <li>CPU work (zstd packing, payload encryption) over more than {@link #INLINE_MAX_BYTES} of payload; smaller work
 *       runs at once on the loop, where it costs less than the hop to a worker thread and back (the same bound as the
 *       consumer's inline decode, {@code FrameDecoder.INLINE_MAX_BYTES});</li>
 *   <li>every access to the spool's files, one task at a time in the order submitted, so the spool is never touched by
 *       two threads at once.</li>
 * </ul>
 * Either way the returned future completes on the writer's context.
 */
final class Offload {
  /** Payload bytes up to which CPU work runs on the writer's event loop. */
  static final int INLINE_MAX_BYTES = 64 * 1024;

  private Offload() {}

  /** {@code work} over {@code bytes} of payload: here when small, else on the worker pool (unordered). */
  static <T> Future<T> cpu(Context context, long bytes, Callable<T> work) {
    if (bytes <= INLINE_MAX_BYTES) {
      try {
        return Future.succeededFuture(work.call());
      } catch (Exception e) {
        return Future.failedFuture(e);
      }
    }
    return context.executeBlocking(work, false);
  }

  /** Spool file access on the worker pool, after every earlier one submitted from {@code context}. */
  static <T> Future<T> disk(Context context, Callable<T> work) {
    return context.executeBlocking(work, true);
  }
}
