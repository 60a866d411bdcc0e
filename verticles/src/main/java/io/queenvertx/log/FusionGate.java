package io.queenvertx.log;

import io.queenvertx.kernel.EngineSettings;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxInternal;
import java.util.ArrayList;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;

/**
 * The log writer's adaptive fusion window (ENGINE.md §14 "push fusion"): whether the next bundle of live pushes leaves
 * now or waits a little for more requests to join it.
 *
 * <p>A bundle never waits while no bundle is in flight: a lone push (low load) leaves at once, so its latency is what it
 * was without the window. While bundles are in flight, requests keep coming and each bundle would otherwise carry
 * only the few frames that arrived since the last one left; then the next bundle waits until {@link #TARGET_FRAMES}
 * frames are waiting, {@link #partitionsPerBundle} partitions are ready, the last bundle in flight completes, or the
 * hold ({@code QUEEN_PUSH_FUSION_HOLD_US}) has passed since the first frame was held, whichever comes first. So the
 * wait is never longer than the hold nor than the writes already in flight, and more frames share each commit.
 *
 * <p>Used only from the log writer's event-loop thread (no locking); the timer only asks that thread to look again.
 */
final class FusionGate {
  /** Ready frames that make a bundle worth sending without waiting (a batched push brings this many at once). */
  static final int TARGET_FRAMES = 64;

  private final long holdNanos;
  private final int partitionsPerBundle;
  /** Arms a timer that calls the log writer back on its thread after the given nanoseconds. */
  private final LongConsumer timer;
  /** Monotonic nanoseconds ({@link System#nanoTime} in the broker; a hand-moved clock in the unit test). */
  private final LongSupplier clock;
  /** nanoTime at which the current hold ends; meaningful only while {@link #holding}. */
  private long holdUntil;
  private boolean holding;
  private boolean timerArmed;

  FusionGate(long holdMicros, int partitionsPerBundle, LongConsumer timer) {
    this(holdMicros, partitionsPerBundle, timer, System::nanoTime);
  }

  FusionGate(long holdMicros, int partitionsPerBundle, LongConsumer timer, LongSupplier clock) {
    this.holdNanos = TimeUnit.MICROSECONDS.toNanos(Math.max(0, holdMicros));
    this.partitionsPerBundle = partitionsPerBundle;
    this.timer = timer;
    this.clock = clock;
  }

  /** A gate whose timer runs {@code dispatch} on {@code context} (the log writer's) when a hold ends. */
  static FusionGate on(Vertx vertx, Context context, EngineSettings engine, Runnable dispatch) {
    FusionGate[] gate = new FusionGate[1];
    gate[0] = new FusionGate(engine.pushFusionHoldMicros(), engine.pushPartitionsPerBundle(),
        nanos -> ((VertxInternal) vertx).nettyEventLoopGroup().schedule(() -> context.runOnContext(v -> {
          gate[0].timerFired();
          dispatch.run();
        }), nanos, TimeUnit.NANOSECONDS));
    return gate[0];
  }

  /**
   * Whether the live frames in {@code pending} that could leave (those of partitions not in {@code inFlight}) should
   * wait for more. {@link #TARGET_FRAMES} counts every waiting frame, so batched pushes (a request brings many frames)
   * are never held; only the ready partitions count towards {@link #partitionsPerBundle}. Arms the timer that ends
   * the hold when it starts one.
   */
  <K> boolean holds(int bundlesInFlight, Map<K, ArrayList<Slot>> pending, Set<K> inFlight) {
    if (holdNanos == 0 || bundlesInFlight == 0 || pending.isEmpty()) return release();
    int frames = 0;
    int partitions = 0;
    for (var e : pending.entrySet()) {
      frames += e.getValue().size();
      if (!inFlight.contains(e.getKey())) partitions++;
      if (frames >= TARGET_FRAMES || partitions >= partitionsPerBundle) return release();
    }
    if (partitions == 0) return false; // nothing could leave anyway; no hold starts
    long now = clock.getAsLong();
    if (!holding) {
      holding = true;
      holdUntil = now + holdNanos;
    } else if (now - holdUntil >= 0) {
      return release();
    }
    if (!timerArmed) {
      timerArmed = true;
      timer.accept(holdUntil - now);
    }
    return true;
  }

  /** The timer armed by {@link #holds} has fired (on the log writer's thread). */
  void timerFired() {
    timerArmed = false;
  }

  private boolean release() {
    holding = false;
    return false;
  }
}
