package io.queenvertx.consumer;

import io.queenvertx.metrics.BrokerMetrics;
import io.queenvertx.db.Database;
import io.queenvertx.kernel.Config;
import io.queenvertx.bus.AckCommand;
import io.queenvertx.bus.Addresses;
import io.queenvertx.bus.LeaseCommand;
import io.queenvertx.bus.LocalCodec;
import io.queenvertx.bus.PopCommand;
import io.queenvertx.codec.SegmentDecodeException;
import io.queenvertx.codec.UuidV7;
import io.queenvertx.db.PopFusion;
import io.queenvertx.decoder.FrameDecoder;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.Message;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The consumer, deployed with one instance per event loop (each with its own gates; every instance hears every
 * {@code landed}), so the HTTP routes of each event loop reach one on their own thread ({@link ConsumerInbox}): pop
 * (claim a lease on partitions with work for the group), ack, lease extension, and long-poll parking. A parked pop
 * holds no database connection; it is retried when a {@code landed} announcement for its (tenant, queue) arrives from
 * any node, and on a slow safety re-poll with backoff (API.md §5.4). A fetch's long poll ({@link LandingWatch}) parks
 * on the same gates and is answered by the same announcements.
 */
public final class ConsumerVerticle extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(ConsumerVerticle.class);

  /** One parked long poll, on one gate or more: woken by a landing on any of them, or by its safety timer. */
  private abstract static class Parked {
    final List<String> gates;
    final long deadline;
    int emptyChecks;
    long timer = -1;
    boolean done;

    Parked(List<String> gates, long deadline, int emptyChecks) {
      this.gates = gates;
      this.deadline = deadline;
      this.emptyChecks = emptyChecks;
    }

    /** A landing on one of its gates (its timer already cancelled). */
    abstract void landed();

    /** Its safety timer ran out (it is no longer parked). */
    abstract void timedOut();
  }

  /** A parked pop: claimed again when woken. */
  private final class Waiter extends Parked {
    final ConsumerInbox.Reply<Buffer> reply;
    final PopCommand cmd;
    final String leaseId;

    Waiter(PopCommand cmd, ConsumerInbox.Reply<Buffer> reply, String leaseId) {
      super(List.of(cmd.queue() == null ? LongPollGates.anyGate(cmd.tenant().toString())
          : LongPollGates.queueGate(cmd.tenant().toString(), cmd.queue())),
          System.currentTimeMillis() + Math.max(0, cmd.timeoutMs()), 0);
      this.reply = reply;
      this.cmd = cmd;
      this.leaseId = leaseId;
    }

    @Override
    void landed() {
      emptyChecks = 0;
      attempt(this);
    }

    @Override
    void timedOut() {
      attempt(this);
    }
  }

  /** A parked fetch: answered true when one of its queues lands, false when its safety timer runs out. */
  private final class Watch extends Parked {
    final ConsumerInbox.Reply<Boolean> reply;

    Watch(LandingWatch w, ConsumerInbox.Reply<Boolean> reply) {
      super(w.queues().stream().map(q -> LongPollGates.queueGate(w.tenant().toString(), q)).toList(), w.deadline(),
          w.emptyChecks());
      this.reply = reply;
    }

    @Override
    void landed() {
      finish(this);
      reply.ok(true);
    }

    @Override
    void timedOut() {
      finish(this);
      reply.ok(false);
    }
  }

  private final Config config;
  private final Database db;
  private final BrokerMetrics metrics;
  private final FrameDecoder decoder;
  private final LongPollGates<Parked> gates = new LongPollGates<>();
  private Acks acks;
  private PopFusion pops;
  private Autopilot autopilot;
  private long reportedParked;

  public ConsumerVerticle(Config config, Database db, BrokerMetrics metrics, FrameDecoder decoder) {
    this.config = config;
    this.db = db;
    this.metrics = metrics;
    this.decoder = decoder;
  }

  @Override
  public Future<?> start() {
    acks = new Acks(db, metrics, vertx);
    pops = db.popFusion();
    autopilot = Autopilot.of(vertx);
    ConsumerInbox.register(this);
    var bus = vertx.eventBus();
    bus.<JsonObject>consumer(Addresses.LANDED, m -> onLanded(m.body()));
    metrics.stats.parkedSource(context, gates::sizes);
    return Future.all(
        bus.<PopCommand>localConsumer(Addresses.POP, m -> pop(m.body(), busReply(m))).completion(),
        bus.<AckCommand>localConsumer(Addresses.ACK, m -> ack(m.body(), busReply(m))).completion(),
        bus.<LeaseCommand>localConsumer(Addresses.LEASE, this::onLease).completion());
  }

  @Override
  public Future<?> stop() {
    ConsumerInbox.unregister(this);
    return Future.succeededFuture();
  }

  /** This verticle's context, for {@link ConsumerInbox}'s direct calls. */
  ContextInternal ownContext() {
    return (ContextInternal) context;
  }

  private static <T> ConsumerInbox.Reply<T> busReply(Message<?> m) {
    return new ConsumerInbox.Reply<>() {
      @Override
      public void ok(T value) {
        m.reply(value, LocalCodec.OPTIONS);
      }

      @Override
      public void fail(int code, String message) {
        m.fail(code, message);
      }
    };
  }

  /** Instances share the node's gauge: each adds the change of its own count. */
  private void reportParked() {
    long now = gates.parked();
    metrics.parkedPolls.addAndGet(now - reportedParked);
    reportedParked = now;
  }

  // ---- pop --------------------------------------------------------------------------------------------------

  /** A pop asking for more than {@code QUEEN_POP_MAX_BATCH} messages is served as if it asked for that many. */
  void pop(PopCommand cmd, ConsumerInbox.Reply<Buffer> reply) {
    metrics.popRequests.increment();
    attempt(new Waiter(cmd.atMost(config.pop().maxBatch()), reply, UuidV7.next().toString()));
  }

  /**
   * Parks a fetch's long poll on its queues' gates until one of them lands (answered true) or its safety re-poll is
   * due (the pop's schedule after {@code emptyChecks} earlier waits), at most its deadline (false); the caller then
   * reads again.
   */
  void watch(LandingWatch w, ConsumerInbox.Reply<Boolean> reply) {
    long now = System.currentTimeMillis();
    if (now >= w.deadline()) {
      reply.ok(false);
      return;
    }
    park(new Watch(w, reply), now);
  }

  // ---- ack --------------------------------------------------------------------------------------------------

  void ack(AckCommand cmd, ConsumerInbox.Reply<JsonArray> reply) {
    acks.ack(cmd).onSuccess(reply::ok).onFailure(e -> reply.fail(500, e.getMessage()));
  }

  private void attempt(Waiter w) {
    long t0 = System.nanoTime();
    popOnce(w.cmd, w.leaseId).onComplete(ar -> {
      if (w.done) return;
      if (ar.failed()) {
        // A database failure never parks the request (API.md §5.4).
        log.warn("pop failed: {}", ar.cause().getMessage());
        metrics.stats.dbError();
        finish(w);
        w.reply.fail(500, "pop failed");
        return;
      }
      Buffer body = ar.result();
      long now = System.currentTimeMillis();
      if (body != null || !w.cmd.longPoll() || now >= w.deadline) {
        finish(w);
        if (body == null) metrics.emptyPops.increment();
        if (body == null && w.cmd.autopilot() != null) autopilot.answered(w.cmd, w.leaseId, 0);
        metrics.stats.pop(w.cmd.tenant(), w.cmd.queue(), body == null, System.nanoTime() - t0);
        w.reply.ok(body);
        return;
      }
      park(w, now);
    });
  }

  private void park(Parked w, long now) {
    for (String g : w.gates) gates.park(g, w);
    reportParked();
    w.emptyChecks++;
    long delay = Math.min(repollInterval(w.emptyChecks), w.deadline - now);
    w.timer = vertx.setTimer(Math.max(1, delay), t -> {
      w.timer = -1;
      for (String g : w.gates) gates.unpark(g, w);
      reportParked();
      w.timedOut();
    });
  }

  /** The safety re-poll: the initial interval, growing after the threshold of empty checks, capped. */
  long repollInterval(int emptyChecks) {
    var c = config.pop();
    if (emptyChecks <= c.waitBackoffThreshold()) return c.waitInitialIntervalMs();
    long grown = (long) (c.waitInitialIntervalMs() * emptyChecks * c.waitBackoffMultiplier());
    return Math.min(grown, c.waitMaxIntervalMs());
  }

  private void finish(Parked w) {
    w.done = true;
    if (w.timer >= 0) vertx.cancelTimer(w.timer);
    for (String g : w.gates) gates.unpark(g, w);
    reportParked();
  }

  private void onLanded(JsonObject landed) {
    String tenant = landed.getString("tenant");
    List<Parked> woken = new ArrayList<>(gates.drain(LongPollGates.queueGate(tenant, landed.getString("queue"))));
    woken.addAll(gates.drain(LongPollGates.anyGate(tenant)));
    for (Parked w : woken) {
      if (w.done) continue;
      if (w.timer >= 0) {
        vertx.cancelTimer(w.timer);
        w.timer = -1;
      }
      w.landed();
    }
  }

  /**
   * One claim through SQL (fused with concurrent pops of the same kind); the body of a 200, or null for a 204. The
   * slices are decoded and the body rendered by {@link PopBody}: here on the event loop when the pop is small
   * ({@link PopBody#small}: the common case of a wake-up, microseconds, less than the hop to a worker and back,
   * BENCHMARKS.md "Pop latency"), else in one job on the worker pool, so a pop of thousands of messages never holds
   * the event loop while its frames are decoded and its JSON is written.
   */
  private Future<Buffer> popOnce(PopCommand c, String leaseId) {
    return pops.submit(c, leaseId).compose(slices -> {
      if (slices.isEmpty()) return Future.succeededFuture(null);
      Future<PopBody.Rendered> rendered;
      if (PopBody.small(slices.size(), PopBody.blobBytes(slices))) {
        try {
          rendered = Future.succeededFuture(PopBody.of(decoder, c, leaseId, slices));
        } catch (SegmentDecodeException e) {
          rendered = Future.failedFuture(e);
        }
      } else {
        rendered = vertx.executeBlocking(() -> PopBody.of(decoder, c, leaseId, slices), false);
      }
      return rendered.transform(ar -> {
        if (ar.failed()) {
          return ar.cause() instanceof SegmentDecodeException ? Future.failedFuture("frame decode failed")
              : Future.failedFuture(ar.cause());
        }
        var decoded = ar.result().decoded();
        int n = 0;
        for (var d : decoded) n += d.frames().size();
        metrics.poppedMessages.increment(n);
        if (c.autopilot() != null) autopilot.answered(c, leaseId, n);
        metrics.stats.popped(c.tenant(), c.queue(), slices, decoded);
        return Future.succeededFuture(ar.result().body());
      });
    });
  }

  // ---- lease ------------------------------------------------------------------------------------------------

  private void onLease(Message<LeaseCommand> msg) {
    LeaseCommand c = msg.body();
    db.acks().renewLease(c.tenant(), c.leaseId(), c.seconds())
        .onSuccess(r -> {
          long renewed = r.getLong("renewed", 0L);
          Object exp = r.getValue("expiresAt");
          msg.reply(new JsonObject()
              .put("leaseId", c.leaseId())
              .put("success", renewed > 0)
              .put("renewed", renewed)
              .put("newExpiresAt", exp)
              .put("expiresAt", exp)
              .put("lease_expires_at", exp), LocalCodec.OPTIONS);
        })
        .onFailure(e -> msg.fail(500, "renew failed: " + e.getMessage()));
  }

}
