package io.queenvertx.dlq;

import io.queenvertx.metrics.BrokerMetrics;
import io.queenvertx.db.Database;
import io.queenvertx.kernel.Config;
import io.queenvertx.db.DlqProcedures;
import io.queenvertx.db.DlqProcedures.DeadLetter;
import io.queenvertx.db.PushProcedures;
import io.queenvertx.db.SqlState;
import io.queenvertx.bus.Addresses;
import io.queenvertx.bus.DlqMoveCommand;
import io.queenvertx.bus.LocalCodec;
import io.queenvertx.bus.Verdict;
import io.queenvertx.codec.EnvelopeCipher;
import io.queenvertx.codec.Frame;
import io.queenvertx.codec.Segment;
import io.queenvertx.codec.TxnHash;
import io.queenvertx.codec.UuidV7;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.UUID;

/**
 * The DLQ mover (seed "POST /api/v1/messages/:partitionId/:transactionId/retry", ENGINE.md §7.3): reads the row,
 * decrypts its snapshot, packs one frame with transaction id {@code dlq:<row id>} (encrypted for the destination
 * queue), and lets {@code log_dlq_move} claim the row FOR UPDATE, push the frame and delete the row in ONE
 * transaction. Afterwards the landing is announced, also for a duplicate, so parked pops wake. Deployed as a worker
 * (crypto and zstd).
 */
public final class DlqMoverVerticle extends VerticleBase {
  static final String GONE_ID = "No dead-letter row with this id \u2014 it was already replayed or purged";
  static final String GONE_ADDRESS = "No dead-letter row for this address. Only dead-lettered messages can be replayed";

  private final Config config;
  private final Database db;
  private final BrokerMetrics metrics;
  private final Optional<EnvelopeCipher> cipher;
  private final DlqProcedures dlq;
  private final PushProcedures pushes;

  public DlqMoverVerticle(Config config, Database db, BrokerMetrics metrics, Optional<EnvelopeCipher> cipher) {
    this.config = config;
    this.db = db;
    this.metrics = metrics;
    this.cipher = cipher;
    this.dlq = db.dlq();
    this.pushes = db.pushes();
  }

  @Override
  public Future<?> start() {
    return vertx.eventBus().<DlqMoveCommand>localConsumer(Addresses.DLQ_MOVE, this::onMove).completion();
  }

  private void onMove(Message<DlqMoveCommand> msg) {
    DlqMoveCommand c = msg.body();
    lookup(c).compose(row -> row == null ? Future.succeededFuture(gone(c)) : move(c, row))
        .onSuccess(v -> msg.reply(v, LocalCodec.OPTIONS))
        .onFailure(e -> msg.reply(new Verdict(500, lookupFailed(c, e)), LocalCodec.OPTIONS));
  }

  private Future<DeadLetter> lookup(DlqMoveCommand c) {
    return c.byAddress() ? dlq.newestForAddress(c.tenant(), c.partitionId(), c.transactionId())
        : dlq.row(c.tenant(), c.dlqId());
  }

  private Future<Verdict> move(DlqMoveCommand c, DeadLetter row) {
    UUID id = row.id();
    String queue = c.queueOverride() != null ? c.queueOverride() : row.queue();
    String partition = c.partitionOverride() != null ? c.partitionOverride() : row.partition();
    String stored = row.payload();
    byte[] payload = stored == null ? new byte[0] : stored.getBytes(StandardCharsets.UTF_8);
    if (cipher.isPresent()) payload = cipher.get().tryDecrypt(payload).orElse(payload);
    final byte[] plain = payload;
    return destinationEncrypted(c.tenant(), queue).compose(enc -> {
      byte[] p = plain;
      // Without a key the snapshot of an encrypted queue is still its envelope: it moves sealed and flagged so, and
      // a node with the key reads it. Plaintext never goes into an encrypted queue (issue 18: no silent downgrade).
      boolean sealed = cipher.isEmpty() && EnvelopeCipher.looksLikeEnvelope(plain);
      boolean encrypted = sealed;
      if (enc && cipher.isPresent()) {
        p = cipher.get().encryptToBytes(plain);
        encrypted = true;
      } else if (enc && !sealed) {
        return Future.succeededFuture(new Verdict(500, new JsonObject().put("success", false)
            .put("error", "queue " + queue + " is encrypted and this node has no QUEEN_ENCRYPTION_KEY")
            .put("dlqRowRemoved", false)
            .put("message", "Nothing was replayed \u2014 the dead-letter row is untouched")));
      }
      String txn = "dlq:" + id;
      UUID newId = UuidV7.next();
      byte[] blob = Segment.pack(java.util.List.of(new Frame(newId, txn, null, null, p, encrypted)),
          config.engine().zstdLevel());
      return dlq.move(c.tenant(), id, queue, partition, TxnHash.of(txn), blob)
          .map(r -> verdict(c, row, r, newId, txn, queue, partition))
          .otherwise(DlqMoverVerticle::moveFailed);
    });
  }

  private Verdict verdict(DlqMoveCommand c, DeadLetter row, JsonObject r, UUID newId, String txn, String queue,
                          String partition) {
    String result = r.getString("result");
    if ("gone".equals(result)) return gone(c);
    boolean moved = "moved".equals(result);
    if (moved) metrics.replayed.increment();
    vertx.eventBus().publish(Addresses.LANDED, new JsonObject()
        .put("tenant", c.tenant().toString()).put("queue", r.getString("queue", queue))
        .put("partition", r.getString("partition", partition))
        .put("partitionId", r.getString("destPartitionId")).put("lastOffset", r.getLong("offset")));
    var replayedAs = new JsonObject()
        .put("index", 0)
        .put("message_id", moved ? newId.toString() : UuidV7.ZERO.toString())
        .put("transaction_id", txn)
        .put("queueName", r.getString("queue", queue))
        .put("status", moved ? "queued" : "duplicate")
        .put("offset", r.getLong("offset"));
    return new Verdict(200, new JsonObject()
        .put("success", true)
        .put("result", moved ? "moved" : "duplicate")
        .put("queue", r.getString("queue", queue))
        .put("partition", r.getString("partition", partition))
        .put("consumerGroup", row.consumerGroup())
        .put("dlqId", row.id().toString())
        .put("originalTransactionId", row.transactionId())
        .put("replayedAs", replayedAs)
        .put("dlqRowRemoved", moved));
  }

  /** Read on every move (never cached), so a configure that has answered is seen by the next replay. */
  private Future<Boolean> destinationEncrypted(UUID tenant, String queue) {
    return pushes.encryptionEnabled(tenant, queue);
  }

  /**
   * The database refused the move (it raised; the transaction rolled back, the row is untouched), or the outcome is
   * unknown because the connection was lost around the commit: then {@code dlqRowRemoved} is null.
   */
  private static Verdict moveFailed(Throwable e) {
    if (SqlState.of(e) != SqlState.NONE) {
      return new Verdict(500, new JsonObject().put("success", false)
          .put("error", "dlq move failed: " + messageOf(e)).put("dlqRowRemoved", false)
          .put("message", "Nothing was replayed \u2014 the dead-letter row is untouched"));
    }
    return new Verdict(500, new JsonObject().put("success", false).put("error", messageOf(e))
        .putNull("dlqRowRemoved")
        .put("message", "The outcome of this replay is unknown \u2014 re-read the dead-letter list: if the row is gone,"
            + " the move happened"));
  }

  static Verdict gone(DlqMoveCommand c) {
    if (c.byAddress()) {
      return new Verdict(404, new JsonObject().put("success", false)
          .put("partitionId", c.partitionId().toString()).put("transactionId", c.transactionId())
          .put("error", "Message not found").put("message", GONE_ADDRESS));
    }
    return new Verdict(404, new JsonObject().put("success", false).put("result", "gone").put("dlqId", c.dlqId())
        .put("error", "Message not found").put("message", GONE_ID));
  }

  /** The one asymmetry of the two routes: a failed lookup is a bare error on the retry route (seed "The verdicts"). */
  private static JsonObject lookupFailed(DlqMoveCommand c, Throwable e) {
    String text = "dlq lookup failed: " + messageOf(e);
    if (c.byAddress()) return new JsonObject().put("error", text);
    return new JsonObject().put("success", false).put("error", text).put("dlqRowRemoved", false)
        .put("message", "Nothing was replayed \u2014 the dead-letter row is untouched");
  }

  private static String messageOf(Throwable e) {
    String text = SqlState.errorText(e);
    if (text != null) return text;
    return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
  }
}
