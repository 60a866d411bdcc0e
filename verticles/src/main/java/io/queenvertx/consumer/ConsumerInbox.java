package io.queenvertx.consumer;

import io.queenvertx.bus.AckCommand;
import io.queenvertx.bus.PopCommand;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.json.JsonArray;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The HTTP pop and ack routes' way into the consumer verticle that runs on their own event loop: a direct call on the
 * same thread instead of an event-bus request, so a pop or an ack crosses no thread on its way in or out (no message,
 * no reply address, no timeout timer, no wake-up of another event loop). The consumer is deployed once per event loop
 * ({@code Node}), so every HTTP event loop has one; a caller on a thread without one gets {@code null} and uses the
 * event bus ({@code Addresses.POP} / {@code Addresses.ACK}), which the other callers (webhooks, the event-bus API)
 * always use and which behaves the same.
 *
 * <p>The call runs on the consumer's own context ({@link ContextInternal#emit}), so its timers and state stay its
 * own; its answer completes a promise of the caller's context. A failure arrives as the same {@link ReplyException}
 * (recipient failure, status code, text) that the event-bus request would have failed with.
 */
public final class ConsumerInbox {
  /** Where a consumer sends its answer: the event-bus message it serves or a direct caller's promise. */
  interface Reply<T> {
    void ok(T value);

    void fail(int code, String message);

    static <T> Reply<T> of(Promise<T> promise) {
      return new Reply<>() {
        @Override
        public void ok(T value) {
          promise.tryComplete(value);
        }

        @Override
        public void fail(int code, String message) {
          promise.tryFail(new ReplyException(ReplyFailure.RECIPIENT_FAILURE, code, message));
        }
      };
    }
  }

  /**
   * The consumer of each event-loop thread. An event-loop thread belongs to one Vert.x instance, so one map serves
   * every node of the JVM (tests run several) without a per-call shared-data lookup.
   */
  private static final Map<Thread, ConsumerVerticle> BY_LOOP = new ConcurrentHashMap<>();

  private ConsumerInbox() {}

  /** Called by a consumer on its own event loop when it starts. */
  static void register(ConsumerVerticle consumer) {
    BY_LOOP.putIfAbsent(Thread.currentThread(), consumer);
  }

  /** Called by a consumer on its own event loop when it stops: callers on this loop use the event bus again. */
  static void unregister(ConsumerVerticle consumer) {
    BY_LOOP.remove(Thread.currentThread(), consumer);
  }

  /** A pop served by the consumer of the calling event loop, or {@code null} when this loop has none. */
  public static Future<Buffer> pop(PopCommand cmd) {
    return direct(cmd, ConsumerVerticle::pop);
  }

  /** An ack served by the consumer of the calling event loop, or {@code null} when this loop has none. */
  public static Future<JsonArray> ack(AckCommand cmd) {
    return direct(cmd, ConsumerVerticle::ack);
  }

  /**
   * A fetch's wait for a landing, parked by the consumer of the calling event loop: true when one of its queues
   * landed, false when its safety re-poll is due; {@code null} when this loop has no consumer (the caller re-reads on
   * a timer instead).
   */
  public static Future<Boolean> watch(LandingWatch w) {
    return direct(w, ConsumerVerticle::watch);
  }

  /** What a consumer does with a command and the channel of its answer. */
  private interface Handling<C, R> {
    void handle(ConsumerVerticle consumer, C cmd, Reply<R> reply);
  }

  private static <C, R> Future<R> direct(C cmd, Handling<C, R> handling) {
    ConsumerVerticle consumer = local();
    if (consumer == null) return null;
    Promise<R> answer = ((ContextInternal) Vertx.currentContext()).promise();
    consumer.ownContext().emit(cmd, c -> {
      try {
        handling.handle(consumer, c, Reply.of(answer));
      } catch (RuntimeException e) {
        // a consumer handler that throws fails its caller at once instead of leaving the request without an answer
        answer.tryFail(new ReplyException(ReplyFailure.RECIPIENT_FAILURE, 500, e.getMessage()));
      }
    });
    return answer.future();
  }

  private static ConsumerVerticle local() {
    if (Vertx.currentContext() == null) return null;
    ConsumerVerticle consumer = BY_LOOP.get(Thread.currentThread());
    return consumer != null && consumer.ownContext().inThread() ? consumer : null;
  }
}
