package io.queenvertx.consumer;

import io.queenvertx.db.AckCall;
import io.queenvertx.db.AckFusion;
import io.queenvertx.db.Database;
import io.queenvertx.metrics.BrokerMetrics;
import io.queenvertx.bus.AckCommand;
import io.queenvertx.bus.AckItem;
import io.queenvertx.dlq.DeadLetterFiling;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;

/**
 * Acknowledgements (ENGINE.md §5): items are grouped per (partition, consumer group, lease) and each group is one
 * {@code log_ack} call (fused with the calls of concurrent requests by {@link AckFusion}); its verdict is spread back
 * onto the items in request order (the table of ENGINE.md §5.3).
 * A dead-letter hand-off is completed here ({@link DeadLetterFiling}): the poison frames are filed with their payload
 * snapshots by {@code log_dlq_file}, or, when that fails, the batch is given back ({@code log_dlq_abort}) and every ack
 * whose effect hung on the filing answers success:false. An ack that cannot take effect because an earlier message of
 * its partition redelivers ({@code superseded}) answers success:false too, saying why.
 */
final class Acks {
  static final String STALE = "already committed: the cursor moved past this message before this ack";
  static final String UNRESOLVABLE = "unresolvable: transaction not in the ack window (hash purged or never pushed); "
      + "if leased, the message redelivers";

  private final Vertx vertx;
  private final Database db;
  private final BrokerMetrics metrics;
  private final AckFusion fusion;
  private final Autopilot autopilot;

  Acks(Database db, BrokerMetrics metrics, Vertx vertx) {
    this.vertx = vertx;
    this.db = db;
    this.metrics = metrics;
    this.fusion = db.ackFusion();
    this.autopilot = Autopilot.of(vertx);
  }

  Future<JsonArray> ack(AckCommand cmd) {
    metrics.ackRequests.increment();
    long t0 = System.nanoTime();
    List<AckItem> items = cmd.items();
    JsonObject[] out = new JsonObject[items.size()];
    List<Future<?>> calls = new ArrayList<>();
    for (AckGroups.Group g : AckGroups.of(items, null)) calls.add(ackGroup(cmd.tenant(), g, items, out));
    return Future.join(calls).transform(v -> {
      JsonArray arr = new JsonArray();
      for (int i = 0; i < out.length; i++) {
        JsonObject r = out[i] != null ? out[i] : result(i, items.get(i), false, "ack rejected", false, false, false);
        arr.add(r);
        if (r.getBoolean("success")) metrics.ackedMessages.increment();
        else metrics.failedAcks.increment();
        if (r.getBoolean("dlq")) metrics.deadLettered.increment();
        if (r.getBoolean("leaseReleased") && items.get(i).leaseId() != null) autopilot.settled(items.get(i).leaseId());
      }
      metrics.stats.ack(items, arr, System.nanoTime() - t0);
      return Future.succeededFuture(arr);
    });
  }

  static JsonObject result(int index, AckItem it, boolean success, String error, boolean leaseReleased, boolean dlq,
                           boolean noop) {
    return new JsonObject()
        .put("index", index)
        .put("transactionId", it.transactionId())
        .put("success", success)
        .put("error", error)
        .put("leaseReleased", leaseReleased)
        .put("dlq", dlq)
        .put("noop", noop);
  }

  private Future<?> ackGroup(UUID tenant, AckGroups.Group g, List<AckItem> items, JsonObject[] out) {
    List<Integer> idx = g.indexes();
    AckCall call = g.call(tenant, items);
    if (call == null) {
      for (int i : idx) out[i] = result(i, items.get(i), false, g.badPartition(), false, false, false);
      return Future.succeededFuture();
    }
    return fusion.submit(call)
        .compose(r -> apply(call.partitionId(), g, items, out, AckGroups.Verdict.of(r)), err -> {
          metrics.stats.dbError();
          String text = err.getMessage();
          for (int i : idx) out[i] = result(i, items.get(i), false, text, false, false, false);
          return Future.succeededFuture();
        });
  }

  private Future<?> apply(UUID pid, AckGroups.Group g, List<AckItem> items, JsonObject[] out, AckGroups.Verdict r) {
    List<Integer> idx = g.indexes();
    if (!r.ok()) {
      String err = r.error() != null ? r.error() : "ack rejected";
      for (int i : idx) out[i] = result(i, items.get(i), false, err, false, false, false);
      return Future.succeededFuture();
    }
    String blocked = r.superseded().isEmpty() ? null : notCommitted(items.get(idx.get(r.blockedBy())));
    boolean released = r.leaseReleased() || r.dlq();
    for (int j = 0; j < idx.size(); j++) {
      int i = idx.get(j);
      AckItem it = items.get(i);
      if (r.noop().contains(j)) out[i] = result(i, it, true, null, true, false, true);
      else if (r.stale().contains(j)) out[i] = result(i, it, false, STALE, true, false, false);
      else if (r.unresolved().contains(j)) out[i] = result(i, it, false, UNRESOLVABLE, false, false, false);
      else if (r.superseded().contains(j)) out[i] = result(i, it, false, blocked, released, false, false);
      else out[i] = result(i, it, true, null, true, false, false);
    }
    if (!r.dlq()) return Future.succeededFuture();
    DeadLetterFiling.HandOff h = DeadLetterFiling.HandOff.of(pid, r.raw());
    List<AckItem> group = g.items(items);
    Set<Integer> poisons = new HashSet<>();
    for (var p : h.poisons()) poisons.add(p.index());
    return DeadLetterFiling.file(vertx, db.dlq(), db.segments(), h, group)
        .onSuccess(v -> DeadLetterFiling.count(metrics, h))
        .recover(e -> DeadLetterFiling.abort(db.dlq(), pid, g.key().group(), h.token())
            .otherwiseEmpty()
            .compose(x -> Future.failedFuture(e)))
        .onComplete(ar -> {
          String failed = ar.succeeded() ? null : notFiled(group.get(h.poisons().get(0).index()), ar.cause());
          for (int j : r.pending()) {
            int i = idx.get(j);
            AckItem it = items.get(i);
            if (failed != null) out[i] = result(i, it, false, failed, true, false, false);
            else out[i] = result(i, it, true, null, true, poisons.contains(j), false);
          }
        });
  }

  /** The answer of an ack that cannot take effect because {@code stop} (earlier in the partition) redelivers. */
  static String notCommitted(AckItem stop) {
    return "not committed: " + stop.transactionId() + ", earlier in this partition, was acked " + stop.status()
        + " and will be delivered again, so the cursor cannot pass it; this message will be delivered again too";
  }

  /** The answer of an ack whose effect hung on dead-lettering {@code poison}, which could not be filed. */
  static String notFiled(AckItem poison, Throwable cause) {
    return "not committed: dead-lettering " + poison.transactionId() + " failed ("
        + (cause.getMessage() == null ? "dlq rejected" : cause.getMessage())
        + "); the batch was released and will be delivered again from it";
  }
}
