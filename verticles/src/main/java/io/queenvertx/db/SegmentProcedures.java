package io.queenvertx.db;

import io.vertx.core.Future;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Reads of stored segments (R__20_push.sql {@code log_segment_at}, R__60_inspection.sql {@code log_segments_of},
 * {@code log_segments_newest}): the decoder's fetch, the dedup reader's original id, the dead-letter filing, and the
 * inspection service's scan.
 */
public final class SegmentProcedures {
  static final String AT = "SELECT base_offset, end_offset, blob FROM queen.log_segment_at($1, $2)";
  static final String OF = "SELECT partition_id, base_offset, blob FROM queen.log_segments_of($1, $2)";
  static final String FETCH = "SELECT * FROM queen.log_fetch($1, $2, $3)";
  static final String NEWEST = "SELECT base_offset, blob FROM queen.log_segments_newest($1, $2, $3)";

  /**
   * One row of a fetch (R__62_log_reads.sql {@code log_fetch}): entry {@code entry} (1-based) and, unless
   * {@code blob} is null, a slice of a segment to deliver ({@code take} frames from {@code start}).
   */
  public record FetchSlice(int entry, UUID partitionId, Long high, Long logStart, String error, Long baseOffset,
                           int start, int take, java.time.OffsetDateTime createdAt, byte[] blob) {}

  /** The slices of a fetch by offset ({@code entries}: the validated JSON entries), at most {@code maxTotal} bytes. */
  public Future<List<FetchSlice>> fetch(UUID tenant, io.vertx.core.json.JsonArray entries, long maxTotal) {
    return sql.preparedQuery(FETCH).execute(Tuple.of(tenant, entries, maxTotal)).map(rows -> {
      List<FetchSlice> out = new ArrayList<>(rows.size());
      for (Row r : rows) {
        var b = r.getBuffer("blob");
        out.add(new FetchSlice(r.getInteger("entry_idx"), r.getUUID("partition_id"), r.getLong("high"),
            r.getLong("log_start"), r.getString("error"), r.getLong("base_offset"),
            r.getInteger("start_idx") == null ? 0 : r.getInteger("start_idx"),
            r.getInteger("take") == null ? 0 : r.getInteger("take"), r.getOffsetDateTime("created_at"),
            b == null ? null : b.getBytes()));
      }
      return out;
    });
  }

  /** One stored segment: its partition (null where the caller named it), offsets and zstd blob. */
  public record Stored(UUID partitionId, long baseOffset, long endOffset, byte[] blob) {}

  private final SqlClient sql;

  public SegmentProcedures(SqlClient sql) {
    this.sql = sql;
  }

  /** The segment of {@code pid} covering offset {@code off}, or null. */
  public Future<Stored> at(UUID pid, long off) {
    return sql.preparedQuery(AT).execute(Tuple.of(pid, off)).map(rows -> {
      var it = rows.iterator();
      if (!it.hasNext()) return null;
      Row r = it.next();
      return new Stored(pid, r.getLong("base_offset"), r.getLong("end_offset"), r.getBuffer("blob").getBytes());
    });
  }

  /** The segments at exactly these (partition, base offset) pairs that still exist. */
  public Future<List<Stored>> of(UUID[] pids, Long[] bases) {
    return sql.preparedQuery(OF).execute(Tuple.tuple().addArrayOfUUID(pids).addArrayOfLong(bases)).map(rows -> {
      List<Stored> out = new ArrayList<>(rows.size());
      for (Row r : rows) {
        out.add(new Stored(r.getUUID("partition_id"), r.getLong("base_offset"), -1, r.getBuffer("blob").getBytes()));
      }
      return out;
    });
  }

  /** Up to {@code page} segments of {@code pid} with a base offset below {@code before}, newest first. */
  public Future<List<Stored>> newest(UUID pid, Long before, int page) {
    return sql.preparedQuery(NEWEST).execute(Tuple.of(pid, before, page)).map(rows -> {
      List<Stored> out = new ArrayList<>(rows.size());
      for (Row r : rows) out.add(new Stored(pid, r.getLong("base_offset"), -1, r.getBuffer("blob").getBytes()));
      return out;
    });
  }
}
