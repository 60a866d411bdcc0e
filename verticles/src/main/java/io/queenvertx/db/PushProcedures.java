package io.queenvertx.db;

import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.Tuple;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The push procedures of R__20_push.sql: {@code log_push_multi} (every push, HTTP, event bus, spool replay and
 * transaction, writes through it), the encryption flag of a queue, and the dedup cache's reads. Errors: QV101..QV107
 * ({@link SqlState}).
 */
public final class PushProcedures {
  static final String PUSH_MULTI = "SELECT idx, status, partition_id, base_offset, created_at, window_seconds, "
      + "dups FROM queen.log_push_multi($1::uuid[], $2::text[], $3::text[], $4::int[], $5::bytea[], $6::bytea[], "
      + "$7::bigint[], $8::uuid[], $9::uuid[], $10::boolean[])";
  static final String ENCRYPTION = "SELECT queen.queue_encryption($1, $2)";
  static final String DEDUP_HEAD = "SELECT last_offset, dedup_window_seconds FROM queen.log_dedup_head($1)";
  static final String DEDUP_TXNS =
      "SELECT base_offset, end_offset, hashes, at_us FROM queen.log_dedup_txns($1, $2, $3, $4, $5)";

  /**
   * The segments of one {@code log_push_multi} call, one array element per segment: who and where, the frame count,
   * the hash sidecar and zstd blob, and the push fusion's dedup promise ({@code verified}, {@code expect}), partition
   * id hint and all-encrypted flag (each null when the caller has none).
   */
  public record Segments(UUID[] tenants, String[] queues, String[] partitions, Integer[] counts, byte[][] hashes,
                         byte[][] blobs, Long[] verified, UUID[] expect, UUID[] hints, Boolean[] encrypted) {
    public static Segments of(int n) {
      return new Segments(new UUID[n], new String[n], new String[n], new Integer[n], new byte[n][], new byte[n][],
          new Long[n], new UUID[n], new UUID[n], new Boolean[n]);
    }
  }

  /**
   * One segment's result: {@code queued} (its partition id, first offset, commit time and the queue's dedup window) or
   * {@code duplicate} ({@code dups}: {@code [{i, off}]}, the frames already in the window; nothing was written).
   */
  public record Written(String status, UUID partitionId, Long baseOffset, OffsetDateTime createdAt,
                        Integer windowSeconds, JsonArray dups) {
    public boolean queued() {
      return "queued".equals(status);
    }
  }

  /** A row of {@code log_dedup_txns}: the offsets of one segment, its hash sidecar and its commit time. */
  public record TxnRow(long baseOffset, long endOffset, byte[] hashes, long atMicros) {}

  /** The head of a partition for a dedup-cache warm-up. */
  public record DedupHead(long lastOffset, Integer windowSeconds) {}

  private final SqlClient sql;

  public PushProcedures(SqlClient sql) {
    this.sql = sql;
  }

  /** Writes the segments in one transaction (or inside the caller's); one result per segment, in order. */
  public Future<List<Written>> pushMulti(Segments s) {
    int n = s.queues().length;
    Buffer[] hashes = new Buffer[n];
    Buffer[] blobs = new Buffer[n];
    for (int i = 0; i < n; i++) {
      hashes[i] = Buffer.buffer(s.hashes()[i]);
      blobs[i] = Buffer.buffer(s.blobs()[i]);
    }
    Tuple args = Tuple.of(s.tenants(), s.queues(), s.partitions(), s.counts(), hashes, blobs).addValue(s.verified())
        .addValue(s.expect()).addValue(s.hints()).addValue(s.encrypted());
    return sql.preparedQuery(PUSH_MULTI).execute(args).map(rows -> {
      List<Written> out = new ArrayList<>(n);
      for (Row r : rows) {
        Object dups = r.getValue("dups");
        out.add(new Written(r.getString("status"), r.getUUID("partition_id"), r.getLong("base_offset"),
            r.getOffsetDateTime("created_at"), r.getInteger("window_seconds"),
            dups instanceof JsonArray a ? a : new JsonArray()));
      }
      return out;
    });
  }

  /** Whether the queue is encrypted (false for a queue that does not exist yet). */
  public Future<Boolean> encryptionEnabled(UUID tenant, String queue) {
    return sql.preparedQuery(ENCRYPTION).execute(Tuple.of(tenant, queue)).map(rows -> {
      var it = rows.iterator();
      return it.hasNext() && Boolean.TRUE.equals(it.next().getBoolean(0));
    });
  }

  /** The partition's last offset and its queue's dedup window, or null when the partition has no row. */
  public Future<DedupHead> dedupHead(UUID pid) {
    return sql.preparedQuery(DEDUP_HEAD).execute(Tuple.of(pid)).map(rows -> {
      if (rows.size() == 0) return null;
      Row r = rows.iterator().next();
      return new DedupHead(r.getLong(0), r.getInteger(1));
    });
  }

  /** Up to {@code rows} segments' hashes of the partition after {@code after} up to {@code upto} (R__20_push.sql). */
  public Future<List<TxnRow>> dedupTxns(UUID pid, long after, long upto, Integer windowSeconds, int rows) {
    return sql.preparedQuery(DEDUP_TXNS).execute(Tuple.of(pid, after, upto, windowSeconds, rows)).map(rs -> {
      List<TxnRow> out = new ArrayList<>(rs.size());
      for (Row r : rs) out.add(new TxnRow(r.getLong(0), r.getLong(1), r.getBuffer(2).getBytes(), r.getLong(3)));
      return out;
    });
  }
}
