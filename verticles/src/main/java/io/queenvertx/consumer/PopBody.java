package io.queenvertx.consumer;

import io.queenvertx.bus.DecodedFrames;
import io.queenvertx.bus.PopCommand;
import io.queenvertx.codec.SegmentDecodeException;
import io.queenvertx.decoder.FrameDecoder;
import io.queenvertx.json.JsonText;
import io.queenvertx.json.Timestamps;
import io.vertx.core.buffer.Buffer;
import io.vertx.sqlclient.Row;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The body of a pop's 200 (API.md §5.4) from the slices {@code log_pop_many} returned: their frames decoded
 * ({@link FrameDecoder}: the node's segment cache, zstd, decryption of flagged frames) and rendered in one pass. Pure
 * work on its arguments, no Vert.x state: the consumer runs it on its event loop for a small pop and on a worker for
 * a large one ({@link #small}).
 */
final class PopBody {
  /**
   * A pop whose slices carry at most this many stored (compressed) blob bytes and at most {@link #INLINE_MAX_SLICES}
   * slices is decoded and rendered on the event loop: microseconds, less than the hop to a worker and back.
   */
  static final int INLINE_MAX_BYTES = FrameDecoder.INLINE_MAX_BYTES;
  /**
   * A pop of more slices than this goes to a worker whatever their size: each slice costs a decode call and a row of
   * rendering, and a pop of thousands of one-message segments would otherwise hold the event loop for milliseconds.
   */
  static final int INLINE_MAX_SLICES = 256;

  /** The rendered body, and the frames of each slice (the consumer counts them for the statistics). */
  record Rendered(Buffer body, List<DecodedFrames> decoded) {}

  private PopBody() {}

  /** Whether a pop of {@code slices} slices of {@code blobBytes} stored bytes in all is done on the event loop. */
  static boolean small(int slices, long blobBytes) {
    return blobBytes <= INLINE_MAX_BYTES && slices <= INLINE_MAX_SLICES;
  }

  /** The stored bytes of the slices' blobs. */
  static long blobBytes(List<Row> slices) {
    long n = 0;
    for (Row r : slices) n += r.getBuffer("blob").length();
    return n;
  }

  /** Decodes every slice and renders the body; a corrupt segment throws. */
  static Rendered of(FrameDecoder decoder, PopCommand c, String leaseId, List<Row> slices)
      throws SegmentDecodeException {
    List<DecodedFrames> decoded = new ArrayList<>(slices.size());
    for (Row r : slices) {
      decoded.add(decoder.frames(r.getUUID("partition_id"), r.getLong("base_offset"),
          r.getBuffer("blob").getBytes(), r.getInteger("start_idx"), r.getInteger("take")));
    }
    return new Rendered(render(c, leaseId, slices, decoded), decoded);
  }

  private static Buffer render(PopCommand c, String lease, List<Row> slices, List<DecodedFrames> decoded) {
    String leaseId = c.autoAck() ? "" : lease;
    Row first = slices.get(0);
    // Sized for the whole body up front (about 300 bytes of fields per message besides its payload): growing a
    // 100-message body from a few KiB copied it several times (JFR: Arrays.copyOf ~12 % of a draining node's samples).
    long size = 512;
    for (var d : decoded) {
      for (byte[] p : d.payloads()) size += 384 + (p == null ? 4 : p.length);
    }
    var out = new JsonText((int) Math.min(size, Integer.MAX_VALUE - 16));
    out.beginObject()
        .field("success", true)
        .field("queue", c.queue() == null ? "" : c.queue())
        .field("partition", first.getString("partition_name"))
        .field("partitionId", first.getUUID("partition_id").toString())
        .field("leaseId", leaseId)
        .field("consumerGroup", c.consumerGroup());
    out.key("messages").beginArray();
    UUID lastPid = null;
    int claimed = 0;
    for (int i = 0; i < slices.size(); i++) {
      Row r = slices.get(i);
      UUID pid = r.getUUID("partition_id");
      if (!pid.equals(lastPid)) {
        claimed++;
        lastPid = pid;
      }
      String pidText = pid.toString();
      String partition = r.getString("partition_name");
      String createdAt = Timestamps.micros(r.getOffsetDateTime("created_at"));
      int attempt = c.autoAck() ? 1 : Math.max(1, r.getInteger("delivery_attempt"));
      DecodedFrames frames = decoded.get(i);
      for (int k = 0; k < frames.frames().size(); k++) {
        var f = frames.frames().get(k);
        out.beginObject()
            .field("id", f.messageId().toString())
            .field("transactionId", f.transactionId())
            .field("traceId", f.traceId() == null ? null : f.traceId().toString());
        out.key("data").raw(frames.payloads().get(k));
        out.field("producerSub", f.producerSub())
            .field("createdAt", createdAt)
            .field("partitionId", pidText)
            .field("partition", partition)
            .field("leaseId", leaseId)
            .field("consumerGroup", c.consumerGroup())
            .field("deliveryAttempt", attempt);
        if (c.queue() == null) out.field("queue", r.getString("queue_name"));
        out.endObject();
      }
    }
    out.endArray();
    out.field("partitionsClaimed", claimed);
    // the 2.x echoes (queen2-contract.md §6.2, §6.3): the policy the group was served by, and the autopilot's sizing
    boolean conflated = Boolean.TRUE.equals(first.getBoolean("conflated"));
    if (conflated) out.field("conflation", true);
    if (conflated != c.conflation()) out.field("conflationConflict", true);
    if (c.autopilot() != null) {
      out.key("autopilot").beginObject().field("partitions", c.autopilot().partitions())
          .field("batch", c.autopilot().batch()).field("waitMs", 0).endObject();
    }
    out.endObject();
    return out.buffer();
  }
}
