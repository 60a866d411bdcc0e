package io.queenvertx.consumer;

import io.queenvertx.boot.NodeContext;
import io.queenvertx.bus.AckCommand;
import io.queenvertx.bus.AckItem;
import io.queenvertx.codec.TxnHash;
import io.queenvertx.dlq.DeadLetterFiling;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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

  private record GroupKey(String partitionId, String group, String leaseId) {}

  private final NodeContext node;
  private final Vertx vertx;
  private final AckFusion fusion;

  Acks(NodeContext node, Vertx vertx) {
    this.node = node;
    this.vertx = vertx;
    this.fusion = AckFusion.of(vertx, node.pool());
  }

  /** The node's fusion of {@code log_ack} calls (tests and diagnostics). */
  AckFusion fusion() {
    return fusion;
  }

  Future<JsonArray> ack(AckCommand cmd) {
    node.metrics().ackRequests.increment();
    long t0 = System.nanoTime();
    List<AckItem> items = cmd.items();
    JsonObject[] out = new JsonObject[items.size()];
    Map<GroupKey, List<Integer>> groups = new LinkedHashMap<>();
    for (int i = 0; i < items.size(); i++) {
      AckItem it = items.get(i);
      groups.computeIfAbsent(new GroupKey(it.partitionId(), it.consumerGroup(), it.leaseId()), k -> new ArrayList<>())
          .add(i);
    }
    List<Future<?>> calls = new ArrayList<>();
    for (var e : groups.entrySet()) calls.add(ackGroup(cmd.tenant(), e.getKey(), e.getValue(), items, out));
    return Future.join(calls).transform(v -> {
      JsonArray arr = new JsonArray();
      for (int i = 0; i < out.length; i++) {
        JsonObject r = out[i] != null ? out[i] : result(i, items.get(i), false, "ack rejected", false, false, false);
        arr.add(r);
        if (r.getBoolean("success")) node.metrics().ackedMessages.increment();
        else node.metrics().failedAcks.increment();
        if (r.getBoolean("dlq")) node.metrics().deadLettered.increment();
      }
      node.metrics().stats.ack(items, arr, System.nanoTime() - t0);
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

  private Future<?> ackGroup(UUID tenant, GroupKey g, List<Integer> idx, List<AckItem> items, JsonObject[] out) {
    UUID pid;
    try {
      pid = UUID.fromString(g.partitionId());
    } catch (RuntimeException e) {
      // What PostgreSQL itself answers for the cast (API.md §5.5 "a raw DB message").
      String err = "invalid input syntax for type uuid: \"" + g.partitionId() + "\"";
      for (int i : idx) out[i] = result(i, items.get(i), false, err, false, false, false);
      return Future.succeededFuture();
    }
    Buffer[] hashes = new Buffer[idx.size()];
    String[] statuses = new String[idx.size()];
    for (int j = 0; j < idx.size(); j++) {
      AckItem it = items.get(idx.get(j));
      hashes[j] = Buffer.buffer(TxnHash.of(it.transactionId()));
      statuses[j] = it.status();
    }
    return fusion.submit(tenant, pid, g.group(), g.leaseId(), hashes, statuses)
        .compose(r -> apply(pid, g, idx, items, out, r), err -> {
          node.metrics().stats.dbError();
          String text = err.getMessage();
          for (int i : idx) out[i] = result(i, items.get(i), false, text, false, false, false);
          return Future.succeededFuture();
        });
  }

  private Future<?> apply(UUID pid, GroupKey g, List<Integer> idx, List<AckItem> items, JsonObject[] out,
                          JsonObject r) {
    if (!r.getBoolean("ok", false)) {
      String err = r.getString("error", "ack rejected");
      for (int i : idx) out[i] = result(i, items.get(i), false, err, false, false, false);
      return Future.succeededFuture();
    }
    Set<Integer> noop = indexes(r.getJsonArray("noop"));
    Set<Integer> stale = indexes(r.getJsonArray("stale"));
    Set<Integer> unresolved = indexes(r.getJsonArray("unresolved"));
    Set<Integer> superseded = indexes(r.getJsonArray("superseded"));
    String blocked = superseded.isEmpty() ? null : notCommitted(items.get(idx.get(r.getInteger("blockedBy"))));
    boolean released = r.getBoolean("leaseReleased", false) || r.getBoolean("dlq", false);
    for (int j = 0; j < idx.size(); j++) {
      int i = idx.get(j);
      AckItem it = items.get(i);
      if (noop.contains(j)) out[i] = result(i, it, true, null, true, false, true);
      else if (stale.contains(j)) out[i] = result(i, it, false, STALE, true, false, false);
      else if (unresolved.contains(j)) out[i] = result(i, it, false, UNRESOLVABLE, false, false, false);
      else if (superseded.contains(j)) out[i] = result(i, it, false, blocked, released, false, false);
      else out[i] = result(i, it, true, null, true, false, false);
    }
    if (!r.getBoolean("dlq", false)) return Future.succeededFuture();
    DeadLetterFiling.HandOff h = DeadLetterFiling.HandOff.of(pid, r);
    List<AckItem> group = new ArrayList<>(idx.size());
    for (int i : idx) group.add(items.get(i));
    Set<Integer> pending = indexes(r.getJsonArray("pending"));
    Set<Integer> poisons = new HashSet<>();
    for (var p : h.poisons()) poisons.add(p.index());
    return DeadLetterFiling.file(vertx, node.pool(), h, group)
        .onSuccess(v -> DeadLetterFiling.count(node, h))
        .recover(e -> DeadLetterFiling.abort(node.pool(), pid, g.group(), h.token())
            .otherwiseEmpty()
            .compose(x -> Future.failedFuture(e)))
        .onComplete(ar -> {
          String failed = ar.succeeded() ? null : notFiled(group.get(h.poisons().get(0).index()), ar.cause());
          for (int j : pending) {
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

  private static Set<Integer> indexes(JsonArray a) {
    Set<Integer> s = new HashSet<>();
    if (a != null) for (Object o : a) s.add(((Number) o).intValue());
    return s;
  }
}
