package io.queenvertx.log;

import io.queenvertx.bus.PushCommand;
import io.queenvertx.bus.PushOutcome;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.shareddata.Shareable;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * The HTTP push route's way into this node's log writer, cheaper than an event-bus request: no reply address, no
 * timeout timer, no message objects per push. Requests queue here and the log writer takes every queued one in one
 * turn of its thread, so under load one hand-off to the worker serves many pushes. Each answer completes a promise of
 * the caller's context, so the HTTP response is still written on its event loop.
 *
 * <p>One per node (Vert.x instance), published in a local map by the log writer when it starts; the event-bus address
 * ({@code Addresses.PUSH}) stays for the other callers and behaves the same.
 */
public final class PushInbox implements Shareable {
  private static final String MAP = "queen.push";
  private static final String KEY = "inbox";

  private record Entry(PushCommand cmd, Promise<List<PushOutcome>> answer) {}

  private final Context writer;
  private final BiConsumer<PushCommand, Consumer<List<PushOutcome>>> accept;
  private final Queue<Entry> queue = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean drainScheduled = new AtomicBoolean();

  private PushInbox(Context writer, BiConsumer<PushCommand, Consumer<List<PushOutcome>>> accept) {
    this.writer = writer;
    this.accept = accept;
  }

  /** Publishes the inbox of the log writer running on {@code writer}; {@code accept} runs on that context. */
  static void open(Vertx vertx, Context writer, BiConsumer<PushCommand, Consumer<List<PushOutcome>>> accept) {
    vertx.sharedData().getLocalMap(MAP).put(KEY, new PushInbox(writer, accept));
  }

  /** Withdraws the inbox (the log writer stops); pushes still queued in it fail instead of waiting forever. */
  static void close(Vertx vertx) {
    PushInbox inbox = (PushInbox) vertx.sharedData().getLocalMap(MAP).remove(KEY);
    if (inbox == null) return;
    for (Entry e = inbox.queue.poll(); e != null; e = inbox.queue.poll()) {
      e.answer.tryFail(new IllegalStateException("the log writer stopped"));
    }
  }

  /** This node's inbox, or null before its log writer started. */
  public static PushInbox of(Vertx vertx) {
    return (PushInbox) vertx.sharedData().getLocalMap(MAP).get(KEY);
  }

  /**
   * Hands {@code cmd} to the log writer; the future completes on the calling context (call it from a Vert.x context)
   * with the outcomes, or fails if the writer threw.
   */
  public Future<List<PushOutcome>> push(PushCommand cmd) {
    Context caller = Vertx.currentContext();
    Promise<List<PushOutcome>> answer = caller != null ? ((ContextInternal) caller).promise() : Promise.promise();
    queue.add(new Entry(cmd, answer));
    if (drainScheduled.compareAndSet(false, true)) writer.runOnContext(v -> drain());
    return answer.future();
  }

  private void drain() {
    drainScheduled.set(false); // before polling: a push queued from here on schedules its own turn
    for (Entry e = queue.poll(); e != null; e = queue.poll()) {
      try {
        accept.accept(e.cmd, e.answer::tryComplete);
      } catch (RuntimeException err) {
        e.answer.tryFail(err);
      }
    }
  }
}
