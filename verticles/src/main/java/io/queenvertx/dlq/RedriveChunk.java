package io.queenvertx.dlq;

import java.util.Optional;
import io.queenvertx.metrics.BrokerMetrics;
import io.queenvertx.db.Database;
import io.queenvertx.kernel.Config;
import io.queenvertx.db.DlqProcedures.DeadLetter;
import io.queenvertx.db.Transaction;
import io.queenvertx.bus.Addresses;
import io.queenvertx.codec.EnvelopeCipher;
import io.queenvertx.codec.Frame;
import io.queenvertx.codec.Segment;
import io.queenvertx.codec.TxnHash;
import io.queenvertx.codec.UuidV7;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Moves a chunk of a redrive task's dead-letter rows in ONE transaction (issue 23): lock the task's next rows
 * ({@code queen.dlq_redrive_rows}), pack one segment per destination (queue, partition) with one frame per row,
 * transaction id {@code dlq:<row id>} as the single move writes it, push each segment and delete its rows
 * ({@code queen.log_dlq_move_many}), and count the moves and advance the keyset ({@code queen.dlq_redrive_advance}).
 * The chunk commits whole or not at all, so what the task reports, what left the DLQ and what landed always agree.
 *
 * <p>The chunk's pushes skip the dedup-window probe (see {@code log_dlq_move_many}: a row still there has no frame).
 * When a row cannot be packed here (plaintext for an encrypted queue on a node without the key), the chunk is rolled
 * back and the caller moves those rows one at a time through the DLQ mover, which gives each its own verdict.
 */
final class RedriveChunk {
  /** What one chunk did: rows moved (0 when the task has no rows left), or why it did nothing. */
  enum Kind { MOVED, DONE, STOPPED, ONE_BY_ONE }

  record Outcome(Kind kind, int moved) {}

  /** Rolls the chunk's transaction back with a reason the caller acts on. */
  private static final class Abort extends RuntimeException {
    final Kind kind;

    Abort(Kind kind) {
      super(kind.name(), null, false, false);
      this.kind = kind;
    }
  }

  private record Source(UUID id, OffsetDateTime failedAt, byte[] payload) {}

  private record Landing(String queue, String partition, String partitionId, long lastOffset) {}

  private final Config config;
  private final Database db;
  private final Optional<EnvelopeCipher> cipher;
  private final BrokerMetrics metrics;
  private final Vertx vertx;

  RedriveChunk(Config config, Database db, Optional<EnvelopeCipher> cipher, BrokerMetrics metrics, Vertx vertx) {
    this.config = config;
    this.db = db;
    this.cipher = cipher;
    this.metrics = metrics;
    this.vertx = vertx;
  }

  /** Moves up to {@code limit} rows of the task held by {@code owner}, to the task's destination or back in place. */
  Future<Outcome> move(UUID task, String owner, UUID tenant, String destQueue, String destPartition, int limit) {
    List<Landing> landed = new ArrayList<>();
    Map<String, Future<Boolean>> encrypted = new java.util.HashMap<>();
    return db.transaction(tx -> tx.dlq().redriveRows(task, owner, limit)
            .compose(rows -> {
              if (rows.isEmpty()) return Future.succeededFuture(new Outcome(Kind.DONE, 0));
              Map<List<String>, List<Source>> byDest = new LinkedHashMap<>();
              DeadLetter last = null;
              for (DeadLetter r : rows) {
                String q = destQueue != null ? destQueue : r.queue();
                String p = destPartition != null ? destPartition : r.partition();
                String payload = r.payload();
                byDest.computeIfAbsent(List.of(q, p), k -> new ArrayList<>()).add(new Source(r.id(),
                    r.failedAt(), payload == null ? new byte[0] : payload.getBytes(StandardCharsets.UTF_8)));
                last = r;
              }
              DeadLetter tail = last;
              int n = rows.size();
              Future<Void> chain = Future.succeededFuture();
              for (var e : byDest.entrySet()) {
                chain = chain.compose(v -> pushOne(tx, tenant, e.getKey().get(0), e.getKey().get(1), e.getValue(),
                        encrypted)
                    .map(l -> {
                      landed.add(l);
                      return null;
                    }));
              }
              return chain
                  .compose(v -> tx.dlq().redriveAdvance(task, owner, n, tail.failedAt(), tail.id()))
                  .map(advanced -> {
                    if (!advanced) throw new Abort(Kind.STOPPED);
                    return new Outcome(Kind.MOVED, n);
                  });
            }))
        .onSuccess(o -> {
          if (o.kind() != Kind.MOVED) return;
          metrics.replayed.increment(o.moved());
          for (Landing l : landed) {
            vertx.eventBus().publish(Addresses.LANDED, new JsonObject()
                .put("tenant", tenant.toString()).put("queue", l.queue()).put("partition", l.partition())
                .put("partitionId", l.partitionId()).put("lastOffset", l.lastOffset()));
          }
        })
        .recover(e -> e instanceof Abort a ? Future.succeededFuture(new Outcome(a.kind, 0)) : Future.failedFuture(e));
  }

  /**
   * Packs the rows of one destination into one segment (off the event loop: crypto and zstd) and moves them. The
   * destination queue's encryption flag is read once per chunk and queue ({@code encrypted}), in the chunk's
   * transaction, so a configure that answered before the chunk started is seen.
   */
  private Future<Landing> pushOne(Transaction tx, UUID tenant, String queue, String partition, List<Source> rows,
                                  Map<String, Future<Boolean>> encrypted) {
    return encrypted.computeIfAbsent(queue, q -> tx.pushes().encryptionEnabled(tenant, q))
        .compose(enc -> vertx.executeBlocking(() -> pack(rows, enc), false))
        .compose(packed -> tx.dlq().moveMany(tenant, rows.stream().map(Source::id).toArray(UUID[]::new), queue,
            partition, packed[0], packed[1]))
        .map(v -> {
          if (!"moved".equals(v.getString("result"))) throw new Abort(Kind.ONE_BY_ONE);
          return new Landing(queue, partition, v.getString("partitionId"),
              v.getLong("baseOffset") + rows.size() - 1);
        });
  }

  /**
   * {hashes, blob} of one segment: each snapshot decrypted when this node has the key, sealed again for an encrypted
   * destination; without a key a sealed snapshot moves sealed and flagged (the DLQ mover's rules).
   */
  private byte[][] pack(List<Source> rows, boolean destinationEncrypted) {
    var cipher = this.cipher;
    List<Frame> frames = new ArrayList<>(rows.size());
    ByteArrayOutputStream hashes = new ByteArrayOutputStream(16 * rows.size());
    for (Source s : rows) {
      byte[] p = s.payload();
      boolean encrypted;
      if (cipher.isPresent()) {
        p = cipher.get().tryDecrypt(p).orElse(p);
        if (destinationEncrypted) p = cipher.get().encryptToBytes(p);
        encrypted = destinationEncrypted;
      } else {
        encrypted = EnvelopeCipher.looksLikeEnvelope(p);
        if (destinationEncrypted && !encrypted) throw new Abort(Kind.ONE_BY_ONE);
      }
      String txn = "dlq:" + s.id();
      frames.add(new Frame(UuidV7.next(), txn, null, null, p, encrypted));
      hashes.writeBytes(TxnHash.of(txn));
    }
    return new byte[][] {hashes.toByteArray(), Segment.pack(frames, config.engine().zstdLevel())};
  }
}
