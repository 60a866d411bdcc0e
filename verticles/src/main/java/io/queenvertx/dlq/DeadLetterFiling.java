package io.queenvertx.dlq;

import io.queenvertx.db.DlqProcedures;
import io.queenvertx.db.SegmentProcedures;
import io.queenvertx.metrics.BrokerMetrics;
import io.queenvertx.bus.AckItem;
import io.queenvertx.bus.Addresses;
import io.queenvertx.bus.DecodeRequest;
import io.queenvertx.bus.DecodedFrames;
import io.queenvertx.bus.LocalCodec;
import io.queenvertx.codec.Frame;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The broker half of a dead-letter hand-off (ENGINE.md §7.1), shared by the ack route ({@code consumer.Acks}, on the
 * pool) and transactions ({@code log.Transactions}, inside the bundle's own transaction). {@code log_ack} answered
 * {@code dlq:true} and holds the batch with its hand-off token; this decodes every poison frame and files them all with
 * one {@code log_dlq_file} call, which moves the cursor past them. When filing fails the caller gives the batch back
 * with {@link #abort}, so the poisons redeliver: a failed ack that cannot dead-letter never lets the cursor pass it.
 * The snapshot is the payload text exactly as the frame stores it, never re-parsed: a payload PostgreSQL's jsonb would
 * refuse ({@code "\u0000"}, {@code 1e1000000}, a lone surrogate escape) is filed like any other.
 */
public final class DeadLetterFiling {
  public static final String DEFAULT_ERROR = "Retries exhausted";

  /** One poison of a hand-off: its offset, its index in the ack group, and the retry count it is filed with. */
  public record Poison(long off, int index, int retryCount) {}

  /** A {@code log_ack} hand-off verdict: the token holding the batch, the poisons, and where the cursor goes. */
  public record HandOff(UUID partitionId, String group, String token, String holder, List<Poison> poisons,
                        long target, int retryCount) {
    public static HandOff of(UUID pid, JsonObject r) {
      List<Poison> poisons = new ArrayList<>();
      for (Object o : r.getJsonArray("poisons", new JsonArray())) {
        JsonObject p = (JsonObject) o;
        poisons.add(new Poison(p.getLong("off"), p.getInteger("index"), p.getInteger("retryCount", 0)));
      }
      return new HandOff(pid, r.getString("group"), r.getString("handoff"), r.getString("holder"), poisons,
          r.getLong("target"), r.getInteger("retryCount", 0));
    }
  }

  private DeadLetterFiling() {}

  /**
   * Decodes the poison frames (on the decoder worker) and files them through {@code sql}; fails with the reason when
   * they cannot be filed, and then nothing was filed. {@code items} are the ack group's items, in the order log_ack
   * got them (a poison's error text is its own ack's, else the group's first nack error, else the default).
   */
  public static Future<Void> file(Vertx vertx, DlqProcedures dlq, SegmentProcedures segments, HandOff h,
                                  List<AckItem> items) {
    List<Frame> frames = new ArrayList<>();
    Future<Void> chain = Future.succeededFuture();
    for (int i = 0; i < h.poisons().size(); i++) {
      int at = i;
      chain = chain.compose(v -> frames.size() > at ? Future.succeededFuture()
          : decodeFrom(vertx, segments, h, at).map(fs -> {
            frames.addAll(fs);
            return null;
          }));
    }
    return chain.compose(v -> {
      int n = h.poisons().size();
      Long[] offs = new Long[n];
      UUID[] mids = new UUID[n];
      String[] txns = new String[n];
      String[] payloads = new String[n];
      String[] errors = new String[n];
      Integer[] counts = new Integer[n];
      for (int i = 0; i < n; i++) {
        Poison p = h.poisons().get(i);
        Frame f = frames.get(i);
        offs[i] = p.off();
        mids[i] = f.messageId();
        txns[i] = f.transactionId();
        payloads[i] = snapshot(f.payload());
        errors[i] = withoutNul(errorOf(items, p.index()));
        counts[i] = p.retryCount();
      }
      return dlq.file(new DlqProcedures.Filing(h.partitionId(), h.group(), h.token(), offs, mids, txns, payloads,
              errors, counts, h.target(), h.retryCount()))
          .compose(r -> {
            return r.getBoolean("ok", false) ? Future.<Void>succeededFuture()
                : Future.<Void>failedFuture(r.getString("error", "dlq rejected"));
          });
    });
  }

  /** Counts the filed poisons of {@code h} in the node's statistics (once the filing is committed). */
  public static void count(BrokerMetrics metrics, HandOff h) {
    for (int i = 0; i < h.poisons().size(); i++) metrics.stats.deadLettered(h.partitionId());
  }

  /** Gives a batch back after a failed filing: released while {@code holder} holds it (true when released). */
  public static Future<Boolean> abort(DlqProcedures dlq, UUID pid, String group, String holder) {
    return dlq.abort(pid, group, holder);
  }

  /**
   * The frames of poisons {@code at} onwards that the segment covering poison {@code at} holds, in poison order: the
   * segment is fetched once and only the frames from the first to the last of its poisons are decoded.
   */
  private static Future<List<Frame>> decodeFrom(Vertx vertx, SegmentProcedures segments, HandOff h, int at) {
    long first = h.poisons().get(at).off();
    return segments.at(h.partitionId(), first)
        .compose(row -> {
          if (row == null) return Future.failedFuture("dlq rejected: the segment of offset " + first + " is gone");
          long base = row.baseOffset();
          long end = row.endOffset();
          List<Long> wanted = new ArrayList<>();
          for (int i = at; i < h.poisons().size() && h.poisons().get(i).off() <= end; i++) {
            wanted.add(h.poisons().get(i).off());
          }
          long last = wanted.get(wanted.size() - 1);
          // always on the decoder worker, whatever its size: only a pop's own slices decode on an event loop
          return vertx.eventBus().<DecodedFrames>request(Addresses.DECODE,
                  new DecodeRequest(h.partitionId(), base, row.blob(), (int) (first - base),
                      (int) (last - first + 1)),
                  LocalCodec.options(30_000))
              .recover(e -> Future.failedFuture("dlq rejected: frame decode failed: " + e.getMessage()))
              .compose(m -> {
                List<Frame> decoded = m.body().frames();
                List<Frame> out = new ArrayList<>(wanted.size());
                for (long off : wanted) {
                  int k = (int) (off - first);
                  if (k >= decoded.size()) return Future.failedFuture("dlq rejected: no frame at offset " + off);
                  out.add(decoded.get(k));
                }
                return Future.succeededFuture(out);
              });
        });
  }

  /** The poison's own nack error, else the group's first nack error, else {@value #DEFAULT_ERROR}. */
  static String errorOf(List<AckItem> items, int index) {
    AckItem own = items.get(index);
    if (own.error() != null && !"completed".equals(own.status())) return own.error();
    for (AckItem it : items) if (it.error() != null && !"completed".equals(it.status())) return it.error();
    return DEFAULT_ERROR;
  }

  /**
   * The snapshot text of a stored payload: its UTF-8 text as stored ({@code "null"} when empty). Bytes that are not
   * UTF-8 (which only the inside of a pushed payload can carry) become U+FFFD, as PostgreSQL text holds UTF-8 only.
   */
  static String snapshot(byte[] payload) {
    return payload.length == 0 ? "null" : withoutNul(new String(payload, StandardCharsets.UTF_8));
  }

  /** PostgreSQL text takes no NUL: a NUL character (an error text can carry one) is stored as U+FFFD. */
  static String withoutNul(String s) {
    return s.indexOf('\u0000') < 0 ? s : s.replace('\u0000', '\uFFFD');
  }
}
