package io.queenvertx.log;

import io.queenvertx.bus.AckItem;
import io.queenvertx.bus.Addresses;
import io.queenvertx.bus.PushItem;
import io.queenvertx.bus.TransactionCommand;
import io.queenvertx.codec.EnvelopeCipher;
import io.queenvertx.codec.Frame;
import io.queenvertx.codec.UuidV7;
import io.queenvertx.consumer.AckGroups;
import io.queenvertx.db.AckCall;
import io.queenvertx.db.Database;
import io.queenvertx.db.PushProcedures;
import io.queenvertx.db.SqlState;
import io.queenvertx.db.Transaction;
import io.queenvertx.dlq.DeadLetterFiling;
import io.queenvertx.metrics.BrokerMetrics;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;

/**
 * {@code POST /api/v1/transaction} (API.md §5.6, ENGINE.md §6): every push and ack of the bundle in ONE PostgreSQL
 * transaction, dead-letter filings included. Its pushes go through the log writer's packer ({@link PackedSegment}:
 * one segment per partition, one {@code log_push_multi} call) and its acks through the ack route's grouping and call
 * ({@link AckGroups}, {@code log_ack}), bound to the bundle's transaction. A duplicate push, or an ack that is
 * rejected, unresolvable or cannot take effect (an earlier message of its partition redelivers), rolls the whole
 * bundle back; the verdict is then reported inside an HTTP 200 with {@code success:false} and a {@code reason}. A
 * dead-letter filing that fails rolls it back too, and the batch is then released so the poison redelivers. The
 * bundle's riders ({@link Riders}: top-level {@code kv} and {@code timers}) run first in the same transaction.
 */
final class Transactions {
  /** A deliberate rollback with the contract's reason; {@code handOff} is a dead-letter hand-off that failed to file. */
  static final class Abort extends RuntimeException {
    final String reason;
    final transient DeadLetterFiling.HandOff handOff;

    Abort(String reason, String message) {
      this(reason, message, null);
    }

    Abort(String reason, String message, DeadLetterFiling.HandOff handOff) {
      super(message, null, false, false);
      this.reason = reason;
      this.handOff = handOff;
    }
  }

  private final Database db;
  private final BrokerMetrics metrics;
  private final int zstdLevel;
  private final Optional<EnvelopeCipher> cipher;
  private final QueueSettings settings;

  Transactions(Database db, BrokerMetrics metrics, int zstdLevel, Optional<EnvelopeCipher> cipher,
               QueueSettings settings) {
    this.db = db;
    this.metrics = metrics;
    this.zstdLevel = zstdLevel;
    this.cipher = cipher;
    this.settings = settings;
  }

  Future<JsonObject> run(Vertx vertx, TransactionCommand cmd) {
    return run(vertx, cmd, true);
  }

  /**
   * A failed flag lookup fails the transaction (never plaintext); a stale cached flag makes the in-transaction check
   * raise QV103, and the bundle runs once more with the flags read again.
   */
  private Future<JsonObject> run(Vertx vertx, TransactionCommand cmd, boolean mayRetry) {
    String txId = UuidV7.next().toString();
    Set<String> queues = new java.util.HashSet<>();
    for (var op : cmd.ops()) if (op.push() != null) queues.add(op.push().queue());
    List<String> names = new ArrayList<>(queues);
    List<Future<Boolean>> enc = new ArrayList<>();
    for (String q : names) {
      enc.add(cipher.isPresent() ? settings.encryptionEnabled(cmd.tenant(), q) : Future.succeededFuture(false));
    }
    return Future.join(enc).transform(x -> {
      Set<String> encrypted = new java.util.HashSet<>();
      for (int i = 0; i < names.size(); i++) {
        if (enc.get(i).failed()) {
          return Future.succeededFuture(new JsonObject().put("transactionId", txId).put("success", false)
              .put("reason", "db_error").put("error", "encryption flag lookup for queue " + names.get(i)
                  + " failed: " + enc.get(i).cause().getMessage()).put("results", new JsonArray()));
        }
        if (Boolean.TRUE.equals(enc.get(i).result())) encrypted.add(names.get(i));
      }
      List<String> plain = new ArrayList<>(names);
      plain.removeAll(encrypted);
      return Riders.of(cmd).sealed(vertx, db, cipher, cmd)
          .compose(riders -> execute(vertx, cmd, txId, encrypted, plain, mayRetry, riders));
    });
  }

  private Future<JsonObject> execute(Vertx vertx, TransactionCommand cmd, String txId, Set<String> encrypted,
                                     List<String> plain, boolean mayRetry, Riders riders) {
    var ops = cmd.ops();
    JsonObject[] results = new JsonObject[ops.size()];
    // Pushes grouped by (queue, partition), sorted so concurrent bundles lock partitions in one order; a
    // transaction id repeated inside one group is a duplicate echo of its first occurrence.
    Map<PartitionKey, List<Frame>> pushGroups = new TreeMap<>(
        (a, b) -> a.queue().equals(b.queue()) ? a.partition().compareTo(b.partition()) : a.queue().compareTo(b.queue()));
    Map<String, UUID> firstTxn = new HashMap<>();
    List<AckItem> acks = new ArrayList<>(ops.size());
    List<PackedSegment> bundle = new ArrayList<>();
    long bytes = 0;
    for (var op : ops) if (op.push() != null) bytes += op.push().payload().length;
    // Encrypting and packing: on the writer's event loop when small, on the worker pool when large (Offload).
    Future<Void> prepared = Offload.cpu(vertx.getOrCreateContext(), bytes, () -> {
      for (int i = 0; i < ops.size(); i++) {
        var op = ops.get(i);
        acks.add(op.ack());
        if (op.push() == null) continue;
        PushItem it = op.push();
        UUID id = UuidV7.next();
        String txn = it.transactionId() != null ? it.transactionId() : id.toString();
        UUID first = firstTxn.putIfAbsent(it.queue() + '\u0000' + it.partition() + '\u0000' + txn, id);
        if (first != null) {
          results[i] = pushResult(i, txn, first, it.queue()).put("duplicate", true);
          continue;
        }
        byte[] payload = it.payload();
        boolean isEnc = false;
        if (encrypted.contains(it.queue())) {
          payload = cipher.orElseThrow().encryptToBytes(payload);
          isEnc = true;
        }
        pushGroups.computeIfAbsent(new PartitionKey(cmd.tenant(), it.queue(), it.partition()),
            k -> new ArrayList<>()).add(new Frame(id, txn, op.traceId(), cmd.producerSub(), payload, isEnc));
        results[i] = pushResult(i, txn, id, it.queue());
      }
      pushGroups.forEach((key, frames) -> bundle.add(PackedSegment.of(key, frames)));
      PackedSegment.compress(bundle, zstdLevel);
      return null;
    });
    String hint = cmd.requiredLeases().size() == 1 ? cmd.requiredLeases().get(0) : null;
    List<JsonObject> landed = new ArrayList<>();
    List<DeadLetterFiling.HandOff> filed = new ArrayList<>();
    Future<Void> tx = prepared.compose(p -> db.transaction(t -> {
      // Written in this transaction, checked there against the flags it reads: a configure that answered before it
      // began is seen (QV103 otherwise).
      // the riders first (kv, then timers: the lock order of the contract, §9.3), then pushes and acks
      Future<Void> chain = riders.apply(t, cmd, ops.size());
      if (!bundle.isEmpty()) chain = chain.compose(v -> push(t, bundle, landed));
      for (AckGroups.Group g : AckGroups.of(acks, hint)) {
        chain = chain.compose(v -> ack(vertx, t, cmd.tenant(), g, acks, results, filed));
      }
      return chain;
    }));
    return tx.map(v -> {
      for (JsonObject l : landed) vertx.eventBus().publish(Addresses.LANDED, l.put("tenant", cmd.tenant().toString()));
      for (var h : filed) DeadLetterFiling.count(metrics, h);
      riders.committed(vertx, metrics);
      JsonArray arr = new JsonArray();
      for (JsonObject r : results) arr.add(r);
      for (JsonObject r : riders.results()) arr.add(r);
      return new JsonObject().put("transactionId", txId).put("success", true).put("results", arr);
    }).recover(err -> {
      if (mayRetry && SqlState.PUSH_PLAINTEXT_FOR_ENCRYPTED.is(err)) {
        for (String q : plain) settings.invalidate(cmd.tenant().toString(), q);
        return run(vertx, cmd, false);
      }
      JsonObject riderFailure = riders.failure(err, txId, ops.size(), metrics);
      if (riderFailure != null) return Future.succeededFuture(riderFailure);
      String reason = err instanceof Abort a ? a.reason : "db_error";
      String text = SqlState.errorText(err) != null ? SqlState.errorText(err) : err.getMessage();
      JsonObject failed = new JsonObject().put("transactionId", txId).put("success", false)
          .put("reason", reason).put("error", text).put("results", new JsonArray());
      if (!(err instanceof Abort a && a.handOff != null)) return Future.succeededFuture(failed);
      // The rollback gave the batch back to its lease: release it, so the poison redelivers instead of a later ack
      // with that lease moving the cursor past a message that was never dead-lettered.
      var h = a.handOff;
      return DeadLetterFiling.abort(db.dlq(), h.partitionId(), h.group(), h.holder()).otherwiseEmpty()
          .map(released -> failed);
    });
  }

  private static JsonObject pushResult(int index, String txn, UUID id, String queue) {
    return new JsonObject().put("index", index).put("type", "push").put("success", true)
        .put("transactionId", txn).put("messageId", id.toString()).put("queueName", queue);
  }

  /** The bundle's segments in one {@code log_push_multi} call; a duplicate of a stored message rolls it back. */
  private static Future<Void> push(Transaction t, List<PackedSegment> bundle, List<JsonObject> landed) {
    return t.pushes().pushMulti(PackedSegment.segments(bundle)).compose(written -> {
      for (int i = 0; i < bundle.size(); i++) {
        PackedSegment s = bundle.get(i);
        PushProcedures.Written w = written.get(i);
        if (!w.queued()) {
          return Future.failedFuture(new Abort("duplicate",
              "QDUP transaction push duplicates a message inside the dedup window of " + s.key.queue() + "/"
                  + s.key.partition()));
        }
        landed.add(new JsonObject().put("queue", s.key.queue()).put("partition", s.key.partition())
            .put("partitionId", w.partitionId().toString()).put("lastOffset", w.baseOffset() + s.count() - 1));
      }
      return Future.succeededFuture();
    });
  }

  private Future<Void> ack(Vertx vertx, Transaction t, UUID tenant, AckGroups.Group g, List<AckItem> all,
                           JsonObject[] results, List<DeadLetterFiling.HandOff> filed) {
    AckCall call = g.call(tenant, all);
    if (call == null) return Future.failedFuture(new Abort("ack_rejected", "QTXN ack failed: " + g.badPartition()));
    List<AckItem> items = g.items(all);
    List<Integer> idx = g.indexes();
    return t.acks().ack(call).compose(raw -> {
      AckGroups.Verdict r = AckGroups.Verdict.of(raw);
      if (!r.ok()) return Future.failedFuture(new Abort("ack_rejected", "QTXN ack failed: " + r.error()));
      if (!r.unresolved().isEmpty()) {
        return Future.failedFuture(new Abort("ack_rejected",
            "QTXN ack references unknown transactionId; transaction rolled back"));
      }
      if (!r.superseded().isEmpty()) {
        // Applied, the bundle would commit its pushes while this ack has no effect (the message redelivers).
        AckItem stop = items.get(r.blockedBy());
        AckItem not = items.get(r.superseded().stream().min(Integer::compare).orElseThrow());
        return Future.failedFuture(new Abort("ack_rejected", "QTXN ack of " + not.transactionId()
            + " cannot take effect: " + stop.transactionId() + ", earlier in its partition, is acked "
            + stop.status() + " and will be delivered again; transaction rolled back"));
      }
      var h = r.dlq() ? DeadLetterFiling.HandOff.of(call.partitionId(), raw) : null;
      Set<Integer> poisons = new java.util.HashSet<>();
      if (h != null) for (var p : h.poisons()) poisons.add(p.index());
      for (int j = 0; j < idx.size(); j++) {
        int i = idx.get(j);
        results[i] = new JsonObject().put("index", i).put("type", "ack").put("success", true)
            .put("transactionId", items.get(j).transactionId()).put("error", null)
            .put("dlq", poisons.contains(j));
      }
      if (h == null) return Future.succeededFuture();
      // Filed inside the bundle's transaction: the bundle commits with its dead letters or not at all.
      return DeadLetterFiling.file(vertx, t.dlq(), t.segments(), h, items).map(x -> filed.add(h)).<Void>mapEmpty()
          .recover(e -> Future.failedFuture(new Abort("ack_rejected", "QTXN dead-lettering "
              + items.get(h.poisons().get(0).index()).transactionId() + " failed (" + e.getMessage()
              + "); transaction rolled back and the batch released", h)));
    });
  }
}
