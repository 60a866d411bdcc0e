package io.queenvertx.log;

import io.queenvertx.boot.NodeContext;
import io.queenvertx.bus.Addresses;
import io.queenvertx.bus.AckItem;
import io.queenvertx.bus.PushItem;
import io.queenvertx.bus.TransactionCommand;
import io.queenvertx.codec.EnvelopeCipher;
import io.queenvertx.codec.Frame;
import io.queenvertx.codec.Segment;
import io.queenvertx.codec.TxnHash;
import io.queenvertx.codec.UuidV7;
import io.queenvertx.dlq.DeadLetterFiling;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;

/**
 * {@code POST /api/v1/transaction} (API.md §5.6, ENGINE.md §6): every push and ack of the bundle in ONE PostgreSQL
 * transaction, dead-letter filings included. A duplicate push, or an ack that is rejected, unresolvable or cannot take
 * effect (an earlier message of its partition redelivers), rolls the whole bundle back; the verdict is then reported
 * inside an HTTP 200 with {@code success:false} and a {@code reason}. A dead-letter filing that fails rolls it back too,
 * and the batch is then released so the poison redelivers.
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

  private record PartitionKey(String queue, String partition) {}

  private record AckGroupKey(String partitionId, String group, String leaseId) {}

  private final NodeContext node;
  private final Optional<EnvelopeCipher> cipher;
  private final QueueSettings settings;

  Transactions(NodeContext node, Optional<EnvelopeCipher> cipher, QueueSettings settings) {
    this.node = node;
    this.cipher = cipher;
    this.settings = settings;
  }

  Future<JsonObject> run(Vertx vertx, TransactionCommand cmd) {
    return run(vertx, cmd, true);
  }

  /**
   * A failed flag lookup fails the transaction (never plaintext); a stale cached flag makes the in-transaction check
   * raise QCRYPT, and the bundle runs once more with the flags read again.
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
      return execute(vertx, cmd, txId, encrypted, plain, mayRetry);
    });
  }

  private Future<JsonObject> execute(Vertx vertx, TransactionCommand cmd, String txId, Set<String> encrypted,
                                     List<String> plain, boolean mayRetry) {
    var ops = cmd.ops();
    JsonObject[] results = new JsonObject[ops.size()];
    // Pushes grouped by (queue, partition), sorted so concurrent bundles lock partitions in one order; a
    // transaction id repeated inside one group is a duplicate echo of its first occurrence.
    Map<PartitionKey, List<Integer>> pushGroups = new TreeMap<>(
        (a, b) -> a.queue().equals(b.queue()) ? a.partition().compareTo(b.partition()) : a.queue().compareTo(b.queue()));
    Map<Integer, Frame> frames = new HashMap<>();
    Map<String, Integer> firstTxn = new HashMap<>();
    Map<AckGroupKey, List<Integer>> ackGroups = new LinkedHashMap<>();
    String hint = cmd.requiredLeases().size() == 1 ? cmd.requiredLeases().get(0) : null;
    Map<PartitionKey, Packed> packed = new HashMap<>();
    long bytes = 0;
    for (var op : ops) if (op.push() != null) bytes += op.push().payload().length;
    // Encrypting and packing: on the writer's event loop when small, on the worker pool when large (Offload).
    Future<Void> prepared = Offload.cpu(vertx.getOrCreateContext(), bytes, () -> {
      for (int i = 0; i < ops.size(); i++) {
        var op = ops.get(i);
        if (op.push() != null) {
          PushItem it = op.push();
          UUID id = UuidV7.next();
          String txn = it.transactionId() != null ? it.transactionId() : id.toString();
          Integer first = firstTxn.putIfAbsent(it.queue() + '\u0000' + it.partition() + '\u0000' + txn, i);
          if (first != null) {
            results[i] = pushResult(i, txn, frames.get(first).messageId(), it.queue()).put("duplicate", true);
            continue;
          }
          byte[] payload = it.payload();
          boolean isEnc = false;
          if (encrypted.contains(it.queue())) {
            payload = cipher.orElseThrow().encryptToBytes(payload);
            isEnc = true;
          }
          frames.put(i, new Frame(id, txn, op.traceId(), cmd.producerSub(), payload, isEnc));
          pushGroups.computeIfAbsent(new PartitionKey(it.queue(), it.partition()), k -> new ArrayList<>()).add(i);
          results[i] = pushResult(i, txn, id, it.queue());
        } else {
          AckItem a = op.ack();
          String lease = a.leaseId() != null ? a.leaseId() : hint;
          ackGroups.computeIfAbsent(new AckGroupKey(a.partitionId(), a.consumerGroup(), lease), k -> new ArrayList<>())
              .add(i);
        }
      }
      for (var e : pushGroups.entrySet()) packed.put(e.getKey(), pack(e.getValue(), frames));
      return null;
    });
    List<JsonObject> landed = new ArrayList<>();
    List<DeadLetterFiling.HandOff> filed = new ArrayList<>();
    Future<Void> tx = prepared.compose(p -> node.pool().withTransaction(conn -> {
      Future<Void> chain = Future.succeededFuture();
      if (!plain.isEmpty()) {
        // Read in this transaction: a configure that answered before it began is seen here (QCRYPT otherwise).
        UUID[] tenants = new UUID[plain.size()];
        java.util.Arrays.fill(tenants, cmd.tenant());
        chain = conn.preparedQuery("SELECT queen._log_check_encryption($1::uuid[], $2::text[], NULL::boolean[])")
            .execute(Tuple.tuple().addValue(tenants).addValue(plain.toArray(new String[0]))).mapEmpty();
      }
      for (var e : pushGroups.entrySet()) {
        chain = chain.compose(v -> push(conn, cmd.tenant(), e.getKey(), packed.get(e.getKey()), landed));
      }
      for (var e : ackGroups.entrySet()) {
        chain = chain.compose(v -> ack(vertx, conn, cmd.tenant(), e.getKey(), e.getValue(), ops, results, filed));
      }
      return chain;
    }));
    return tx.map(v -> {
      for (JsonObject l : landed) vertx.eventBus().publish(Addresses.LANDED, l.put("tenant", cmd.tenant().toString()));
      for (var h : filed) DeadLetterFiling.count(node, h);
      JsonArray arr = new JsonArray();
      for (JsonObject r : results) arr.add(r);
      return new JsonObject().put("transactionId", txId).put("success", true).put("results", arr);
    }).recover(err -> {
      if (mayRetry && err instanceof PgException pg && pg.getErrorMessage() != null
          && pg.getErrorMessage().startsWith("QCRYPT")) {
        for (String q : plain) settings.invalidate(cmd.tenant().toString(), q);
        return run(vertx, cmd, false);
      }
      String reason = "db_error";
      String text = err.getMessage();
      if (err instanceof Abort a) {
        reason = a.reason;
      } else if (err instanceof PgException pg) {
        text = pg.getErrorMessage();
        if (text != null && text.startsWith("QDUP")) reason = "duplicate";
        else if (text != null && text.startsWith("QTXN")) reason = "ack_rejected";
      }
      JsonObject failed = new JsonObject().put("transactionId", txId).put("success", false)
          .put("reason", reason).put("error", text).put("results", new JsonArray());
      if (!(err instanceof Abort a && a.handOff != null)) return Future.succeededFuture(failed);
      // The rollback gave the batch back to its lease: release it, so the poison redelivers instead of a later ack
      // with that lease moving the cursor past a message that was never dead-lettered.
      var h = a.handOff;
      return DeadLetterFiling.abort(node.pool(), h.partitionId(), h.group(), h.holder()).otherwiseEmpty()
          .map(released -> failed);
    });
  }

  private static JsonObject pushResult(int index, String txn, UUID id, String queue) {
    return new JsonObject().put("index", index).put("type", "push").put("success", true)
        .put("transactionId", txn).put("messageId", id.toString()).put("queueName", queue);
  }

  /** One partition's frames of the bundle, packed: their count, hash sidecar and zstd blob. */
  private record Packed(int count, byte[] hashes, byte[] blob) {}

  private Packed pack(List<Integer> idx, Map<Integer, Frame> frames) {
    List<Frame> fs = new ArrayList<>(idx.size());
    byte[] hashes = new byte[idx.size() * TxnHash.BYTES];
    for (int j = 0; j < idx.size(); j++) {
      Frame f = frames.get(idx.get(j));
      fs.add(f);
      System.arraycopy(TxnHash.of(f.transactionId()), 0, hashes, j * TxnHash.BYTES, TxnHash.BYTES);
    }
    return new Packed(idx.size(), hashes, Segment.pack(fs, node.config().engine().zstdLevel()));
  }

  private Future<Void> push(SqlConnection conn, UUID tenant, PartitionKey key, Packed p, List<JsonObject> landed) {
    return conn.preparedQuery("SELECT queen.log_push($1, $2, $3, $4, $5, $6)")
        .execute(Tuple.of(tenant, key.queue(), key.partition(), p.count(), Buffer.buffer(p.hashes()),
            Buffer.buffer(p.blob())))
        .compose(rows -> {
          JsonObject r = (JsonObject) rows.iterator().next().getValue(0);
          if (!"queued".equals(r.getString("status"))) {
            return Future.failedFuture(new Abort("duplicate",
                "QDUP transaction push duplicates a message inside the dedup window of " + key.queue() + "/"
                    + key.partition()));
          }
          long base = r.getLong("baseOffset");
          landed.add(new JsonObject().put("queue", key.queue()).put("partition", key.partition())
              .put("partitionId", r.getString("partitionId")).put("lastOffset", base + p.count() - 1));
          return Future.succeededFuture();
        });
  }

  private Future<Void> ack(Vertx vertx, SqlConnection conn, UUID tenant, AckGroupKey key, List<Integer> idx,
                           List<TransactionCommand.Op> ops, JsonObject[] results,
                           List<DeadLetterFiling.HandOff> filed) {
    UUID pid;
    try {
      pid = UUID.fromString(key.partitionId());
    } catch (RuntimeException e) {
      return Future.failedFuture(new Abort("ack_rejected",
          "QTXN ack failed: invalid input syntax for type uuid: \"" + key.partitionId() + "\""));
    }
    List<AckItem> items = new ArrayList<>(idx.size());
    Buffer[] hashes = new Buffer[idx.size()];
    String[] statuses = new String[idx.size()];
    for (int j = 0; j < idx.size(); j++) {
      AckItem a = ops.get(idx.get(j)).ack();
      items.add(a);
      hashes[j] = Buffer.buffer(TxnHash.of(a.transactionId()));
      statuses[j] = a.status();
    }
    return conn.preparedQuery("SELECT queen.log_ack($1, $2, $3, $4, $5::bytea[], $6::text[])")
        .execute(Tuple.of(tenant, pid, key.group(), key.leaseId(), hashes, statuses))
        .compose(rows -> {
          JsonObject r = (JsonObject) rows.iterator().next().getValue(0);
          if (!r.getBoolean("ok", false)) {
            return Future.failedFuture(new Abort("ack_rejected", "QTXN ack failed: " + r.getString("error")));
          }
          if (!r.getJsonArray("unresolved", new JsonArray()).isEmpty()) {
            return Future.failedFuture(new Abort("ack_rejected",
                "QTXN ack references unknown transactionId; transaction rolled back"));
          }
          JsonArray superseded = r.getJsonArray("superseded", new JsonArray());
          if (!superseded.isEmpty()) {
            // Applied, the bundle would commit its pushes while this ack has no effect (the message redelivers).
            AckItem stop = items.get(r.getInteger("blockedBy"));
            AckItem not = items.get(superseded.getInteger(0));
            return Future.failedFuture(new Abort("ack_rejected", "QTXN ack of " + not.transactionId()
                + " cannot take effect: " + stop.transactionId() + ", earlier in its partition, is acked "
                + stop.status() + " and will be delivered again; transaction rolled back"));
          }
          boolean dlq = r.getBoolean("dlq", false);
          var h = dlq ? DeadLetterFiling.HandOff.of(pid, r) : null;
          java.util.Set<Integer> poisons = new java.util.HashSet<>();
          if (h != null) for (var p : h.poisons()) poisons.add(p.index());
          for (int j = 0; j < idx.size(); j++) {
            int i = idx.get(j);
            results[i] = new JsonObject().put("index", i).put("type", "ack").put("success", true)
                .put("transactionId", items.get(j).transactionId()).put("error", null)
                .put("dlq", poisons.contains(j));
          }
          if (h == null) return Future.succeededFuture();
          // Filed inside the bundle's transaction: the bundle commits with its dead letters or not at all.
          return DeadLetterFiling.file(vertx, conn, h, items).map(x -> filed.add(h)).<Void>mapEmpty()
              .recover(e -> Future.failedFuture(new Abort("ack_rejected", "QTXN dead-lettering "
                  + items.get(h.poisons().get(0).index()).transactionId() + " failed (" + e.getMessage()
                  + "); transaction rolled back and the batch released", h)));
        });
  }
}
