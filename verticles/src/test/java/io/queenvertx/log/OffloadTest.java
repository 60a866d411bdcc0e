package io.queenvertx.log;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Where the log writer's work runs, on a real Vert.x event-loop context (the writer's kind): small CPU work at once on
 * the loop, large CPU work and every spool access on worker threads, spool accesses one at a time in order, and every
 * answer back on the loop.
 */
class OffloadTest {
  Vertx vertx;
  Context loop;

  @BeforeEach
  void start() {
    vertx = Vertx.vertx();
    loop = vertx.getOrCreateContext();
  }

  @AfterEach
  void stop() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  /** Runs {@code call} on the loop and waits for the future it returns; records where the answer arrived. */
  <T> T onLoop(java.util.function.Supplier<Future<T>> call, List<Boolean> answeredOnLoop) throws Exception {
    CompletableFuture<T> out = new CompletableFuture<>();
    loop.runOnContext(v -> call.get().onComplete(ar -> {
      answeredOnLoop.add(Context.isOnEventLoopThread() && Vertx.currentContext() == loop);
      if (ar.succeeded()) out.complete(ar.result());
      else out.completeExceptionally(ar.cause());
    }));
    return out.get(10, TimeUnit.SECONDS);
  }

  @Test
  void workOnAtMost64KiBRunsAtOnceOnTheLoopAndLargerWorkOnAWorkerThread() throws Exception {
    List<Boolean> answers = new ArrayList<>();
    String small = onLoop(() -> {
      Thread caller = Thread.currentThread();
      Future<String> f = Offload.cpu(loop, Offload.INLINE_MAX_BYTES, () ->
          Thread.currentThread() == caller ? "inline" : "elsewhere");
      assertThat(f.isComplete()).as("small work is done before cpu() returns").isTrue();
      return f;
    }, answers);
    assertThat(small).isEqualTo("inline");

    String large = onLoop(() -> Offload.cpu(loop, Offload.INLINE_MAX_BYTES + 1L,
        () -> Context.isOnWorkerThread() ? "worker" : Thread.currentThread().getName()), answers);
    assertThat(large).isEqualTo("worker");

    Exception boom = new IllegalStateException("boom");
    List<Throwable> failures = new ArrayList<>();
    for (long bytes : new long[] {10, 1 << 20}) {
      try {
        onLoop(() -> Offload.cpu(loop, bytes, () -> {
          throw boom;
        }), answers);
      } catch (java.util.concurrent.ExecutionException e) {
        failures.add(e.getCause());
      }
    }
    assertThat(failures).as("a throwing task fails its future, inline or not").containsExactly(boom, boom);
    assertThat(answers).as("every answer arrives on the writer's loop").containsOnly(true).hasSize(4);
  }

  @Test
  void spoolAccessRunsOnWorkerThreadsOneAtATimeInSubmissionOrder() throws Exception {
    int tasks = 40;
    List<Integer> order = Collections.synchronizedList(new ArrayList<>());
    AtomicInteger running = new AtomicInteger();
    AtomicInteger overlaps = new AtomicInteger();
    AtomicInteger onWorker = new AtomicInteger();
    List<Boolean> answers = Collections.synchronizedList(new ArrayList<>());
    onLoop(() -> {
      List<Future<Integer>> all = new ArrayList<>();
      for (int i = 0; i < tasks; i++) {
        int n = i;
        all.add(Offload.disk(loop, () -> {
          if (running.incrementAndGet() > 1) overlaps.incrementAndGet();
          if (Context.isOnWorkerThread()) onWorker.incrementAndGet();
          long until = System.nanoTime() + 1_000_000; // busy for 1 ms: an unordered pool would overlap two tasks
          while (System.nanoTime() < until) Thread.onSpinWait();
          order.add(n);
          running.decrementAndGet();
          return n;
        }).andThen(ar -> answers.add(Context.isOnEventLoopThread())));
      }
      return Future.all(all).map(done -> null);
    }, new ArrayList<>());
    List<Integer> expected = new ArrayList<>();
    for (int i = 0; i < tasks; i++) expected.add(i);
    assertThat(order).containsExactlyElementsOf(expected);
    assertThat(overlaps.get()).isZero();
    assertThat(onWorker.get()).isEqualTo(tasks);
    assertThat(answers).containsOnly(true).hasSize(tasks);
  }
}
