package io.queenvertx.consumer;

import io.queenvertx.boot.NodeContext;
import io.queenvertx.bus.AckCommand;
import io.queenvertx.bus.AckItem;
import io.queenvertx.codec.Frame;
import io.queenvertx.bus.Addresses;
import io.queenvertx.bus.DecodeRequest;
import io.queenvertx.bus.DecodedFrames;
import io.queenvertx.bus.LocalCodec;
import io.queenvertx.codec.TxnHash;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Tuple;
import java.nio.charset.StandardCharsets;
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
 * A dead-letter hand-off is completed here: the poison frame is decoded from its segment and filed with a payload
 * snapshot by {@code log_dlq_head}.
 */
final class Acks {
  static final String STALE = "already committed: the cursor moved past this message before this ack";
  static final String UNRESOLVABLE = "unresolvable: transaction not in the ack window (hash purged or never pushed); "
      + "if leased, the message redelivers";
  static final String DEFAULT_DLQ_ERROR = "Retries exhausted";

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
    for (int j = 0; j < idx.size(); j++) {
      int i = idx.get(j);
      AckItem it = items.get(i);
      if (noop.contains(j)) out[i] = result(i, it, true, null, true, false, true);
      else if (stale.contains(j)) out[i] = result(i, it, false, STALE, true, false, false);
      else if (unresolved.contains(j)) out[i] = result(i, it, false, UNRESOLVABLE, false, false, false);
      else out[i] = result(i, it, true, null, true, false, false);
    }
    if (!r.getBoolean("dlq", false)) return Future.succeededFuture();
    long off = r.getLong("off");
    Integer poison = r.getInteger("poisonIndex");
    String worker = r.getString("worker", g.leaseId());
    return fileDeadLetter(pid, g.group(), worker, off, txn -> errorFor(txn, idx, items)).onComplete(ar -> {
      for (int j = 0; j < idx.size(); j++) {
        int i = idx.get(j);
        AckItem it = items.get(i);
        boolean isPoison = poison != null ? poison == j : !"completed".equals(it.status());
        if (!isPoison) continue;
        if (ar.succeeded()) out[i] = result(i, it, true, null, true, true, false);
        else out[i] = result(i, it, false, ar.cause().getMessage(), false, false, false);
      }
    });
  }

  /** Decodes the poison frame and files it (ENGINE.md §7.1); fails with the reason when it cannot be filed. */
  Future<Void> fileDeadLetter(UUID pid, String group, String worker, long off,
                              java.util.function.Function<String, String> errorOf) {
    return node.pool().preparedQuery("SELECT base_offset, blob FROM queen.log_segment_at($1, $2)")
        .execute(Tuple.of(pid, off))
        .compose(rows -> {
          var it = rows.iterator();
          if (!it.hasNext()) return Future.failedFuture("dlq rejected");
          var row = it.next();
          long base = row.getLong("base_offset");
          // a dead-letter hand-off always decodes on the decoder worker, whatever its size: only a pop's own slices
          // (at most FrameDecoder.INLINE_MAX_BYTES of blobs) are decoded on this event loop
          return vertx.eventBus().<DecodedFrames>request(Addresses.DECODE,
                  new DecodeRequest(pid, base, row.getBuffer("blob").getBytes(), (int) (off - base), 1),
                  LocalCodec.options(30_000))
              .recover(e -> Future.failedFuture("dlq rejected"))
              .compose(m -> m.body().frames().isEmpty() ? Future.failedFuture("dlq rejected")
                  : fileFrame(pid, group, worker, off, m.body().frames().get(0), errorOf));
        }).onSuccess(v -> node.metrics().stats.deadLettered(pid));
  }

  private Future<Void> fileFrame(UUID pid, String group, String worker, long off, Frame f,
                                 java.util.function.Function<String, String> errorOf) {
          String snapshot = f.payload().length == 0 ? "null" : new String(f.payload(), StandardCharsets.UTF_8);
          String error = errorOf.apply(f.transactionId());
          return node.pool()
              .preparedQuery("SELECT queen.log_dlq_head($1, $2, $3, $4, $5, $6, $7::text::jsonb, $8)")
              .execute(Tuple.of(pid, group, worker, off, f.messageId(), f.transactionId(), snapshot, error))
              .compose(res -> {
                JsonObject v = (JsonObject) res.iterator().next().getValue(0);
                return v.getBoolean("ok", false) ? Future.<Void>succeededFuture()
                    : Future.failedFuture(v.getString("error", "dlq rejected"));
              });
  }

  /** The nack error of the poison frame's own ack, else the group's first nack error, else the default. */
  private static String errorFor(String poisonTxn, List<Integer> idx, List<AckItem> items) {
    String first = null;
    for (int i : idx) {
      AckItem it = items.get(i);
      if (it.error() == null || "completed".equals(it.status())) continue;
      if (it.transactionId().equals(poisonTxn)) return it.error();
      if (first == null) first = it.error();
    }
    return first != null ? first : DEFAULT_DLQ_ERROR;
  }

  private static Set<Integer> indexes(JsonArray a) {
    Set<Integer> s = new HashSet<>();
    if (a != null) for (Object o : a) s.add(((Number) o).intValue());
    return s;
  }
}
