package io.queenvertx.inspection;

import io.queenvertx.kernel.ApiError;
import io.queenvertx.kernel.ProcedureResult;
import io.queenvertx.bus.Addresses;
import io.queenvertx.bus.DecodeRequest;
import io.queenvertx.bus.DecodedFrames;
import io.queenvertx.bus.Requests;
import io.queenvertx.codec.Frame;
import io.queenvertx.db.InspectionProcedures;
import io.queenvertx.db.SegmentProcedures;
import io.queenvertx.json.JsonText;
import io.queenvertx.kernel.OwnershipGate;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Message inspection (shared/seeds/messages-and-dlq.txt, API.md §5.9), behind {@code GET /api/v1/messages} and
 * {@code /messages/:partitionId/:transactionId}: the listing ({@code list_messages}) with its payloads filled by the
 * segment decoder (a page's covering segments fetched in one query, then decoded once each, one decode request per
 * (partitionId, seq)); one message's detail (hash probe, covering segment, then a newest-first scan of up to
 * {@value #SCAN_LIMIT} segment blobs); deleting an address's dead-letter rows. A raw partition id's owner is checked
 * ({@link OwnershipGate}) before it is read.
 */
public final class InspectionService {
  static final int SCAN_LIMIT = 5000;
  static final int SCAN_PAGE = 100;
  public static final String NOT_FOUND = "Message not found";

  /** A listing's answer: its HTTP status and body. */
  public record Listing(int status, JsonObject body) {}

  private final Vertx vertx;
  private final InspectionProcedures inspection;
  private final SegmentProcedures segments;
  private final OwnershipGate gate;

  public InspectionService(Vertx vertx, InspectionProcedures inspection, SegmentProcedures segments,
                           OwnershipGate gate) {
    this.vertx = vertx;
    this.inspection = inspection;
    this.segments = segments;
    this.gate = gate;
  }

  /** One page of the listing for {@code filter}, payloads filled; fails with a 500 {@link ApiError}. */
  public Future<Listing> list(UUID tenant, JsonObject filter) {
    return inspection.list(tenant, filter.encode())
        .recover(e -> Future.failedFuture(ApiError.prefixed(500, "list failed: ", e)))
        .compose(r -> {
          int status = listingStatus(r);
          if (status != 200) return Future.succeededFuture(new Listing(status, r));
          JsonArray messages = r.getJsonArray("messages", new JsonArray());
          return fillPayloads(messages).transform(v -> {
            var body = new JsonObject().put("messages", messages).put("mode", r.getValue("mode"))
                .put("total", messages.size());
            if (r.containsKey("nextCursor")) body.put("nextCursor", r.getValue("nextCursor"));
            return Future.succeededFuture(new Listing(200, body));
          });
        });
  }

  /**
   * The status of a listing procedure's result: as {@link ProcedureResult} derives it, except that the filters the
   * client got wrong ({@code invalid cursor}, {@code invalid from: …}, {@code invalid to: …}) are its 400, not a 500.
   */
  public static int listingStatus(JsonObject r) {
    int status = ProcedureResult.statusOf(r.encode());
    if (status == 500 && r.getValue("error") instanceof String e && e.startsWith("invalid ")) return 400;
    return status;
  }

  /** One message's detail body; 404 {@link ApiError} when the tenant has no such message. */
  public Future<Buffer> detail(UUID tenant, UUID pid, String txn) {
    return gate.owns(tenant, pid).compose(owned -> {
      if (!owned) return Future.failedFuture(ApiError.of(404, NOT_FOUND));
      return detailOf(tenant, pid, txn, null);
    });
  }

  /** Deletes an address's dead-letter rows: how many went (0 for a partition the tenant does not own). */
  public Future<Long> deleteDeadLetters(UUID tenant, UUID pid, String txn) {
    return gate.owns(tenant, pid).compose(owned -> !owned ? Future.succeededFuture(0L)
        : inspection.deleteDeadLetters(tenant, pid, txn)
            .recover(e -> Future.failedFuture(ApiError.prefixed(500, "delete failed: ", e))));
  }

  /**
   * One query fetches every covering segment of the page, then one decode per (partitionId, seq); an entry whose
   * segment is gone (or fails to fetch or decode) keeps payloadAvailable:false and nulls.
   */
  private Future<Void> fillPayloads(JsonArray messages) {
    record Seg(UUID pid, long seq) {}
    Map<Seg, List<JsonObject>> bySegment = new HashMap<>();
    for (Object o : messages) {
      JsonObject m = (JsonObject) o;
      JsonObject seg = m.getJsonObject("segment");
      if (seg == null || m.getString("partitionId") == null) continue;
      bySegment.computeIfAbsent(new Seg(UUID.fromString(m.getString("partitionId")), seg.getLong("seq")),
          k -> new ArrayList<>()).add(m);
    }
    if (bySegment.isEmpty()) return Future.succeededFuture();
    UUID[] pids = new UUID[bySegment.size()];
    Long[] bases = new Long[bySegment.size()];
    int n = 0;
    for (Seg k : bySegment.keySet()) {
      pids[n] = k.pid();
      bases[n++] = k.seq();
    }
    return segments.of(pids, bases)
        .compose(rows -> {
          List<Future<?>> all = new ArrayList<>();
          for (SegmentProcedures.Stored r : rows) {
            UUID pid = r.partitionId();
            long base = r.baseOffset();
            List<JsonObject> entries = bySegment.get(new Seg(pid, base));
            if (entries == null) continue;
            all.add(Requests.<DecodedFrames>request(vertx, Addresses.DECODE,
                    new DecodeRequest(pid, base, r.blob(), 0, -1))
                .onSuccess(frames -> fill(frames, entries)));
          }
          return Future.join(all).<Void>mapEmpty();
        }, e -> {
          org.slf4j.LoggerFactory.getLogger(InspectionService.class).warn("listing payloads: segment fetch failed: {}",
              e.getMessage());
          return Future.succeededFuture();
        });
  }

  private static void fill(DecodedFrames frames, List<JsonObject> entries) {
    if (!frames.found()) return;
    for (JsonObject m : entries) {
      int idx = m.getJsonObject("segment").getInteger("frameIdx");
      if (idx < 0 || idx >= frames.frames().size()) continue;
      Frame f = frames.frames().get(idx);
      Object data = jsonValue(frames.payloads().get(idx));
      m.put("id", f.messageId().toString())
          .put("transactionId", f.transactionId())
          .put("traceId", f.traceId() == null ? null : f.traceId().toString())
          .put("producerSub", f.producerSub())
          .put("payloadAvailable", true)
          .put("data", data)
          .put("payload", data)
          .put("isEncrypted", f.encrypted());
    }
  }

  static Object jsonValue(byte[] payload) {
    if (payload == null || payload.length == 0) return null;
    try {
      return Json.decodeValue(Buffer.buffer(payload));
    } catch (RuntimeException e) {
      return new String(payload, java.nio.charset.StandardCharsets.UTF_8);
    }
  }

  /** The resolution order of the seed: hash probe, covering segment, then a newest-first scan of the blobs. */
  private Future<Buffer> detailOf(UUID tenant, UUID pid, String txn, Long offset) {
    return inspection.detail(tenant, pid, txn, offset)
        .recover(e -> Future.failedFuture(ApiError.prefixed(500, "resolve failed: ", e)))
        .compose(d -> {
          if (!d.getBoolean("found", false)) {
            if (offset != null || !d.getBoolean("partitionExists", false)) {
              return Future.failedFuture(ApiError.of(404, NOT_FOUND));
            }
            return scan(pid, txn, null, 0)
                .compose(off -> off == null ? Future.failedFuture(ApiError.of(404, NOT_FOUND))
                    : detailOf(tenant, pid, txn, off));
          }
          JsonObject seg = d.getJsonObject("segment");
          if (seg == null) return Future.failedFuture(ApiError.of(404, NOT_FOUND));
          long base = seg.getLong("base");
          int idx = (int) (d.getLong("offset") - base);
          return Requests.<DecodedFrames>request(vertx, Addresses.DECODE, new DecodeRequest(pid, base, null, idx, 1))
              .compose(frames -> {
                if (!frames.found() || frames.frames().isEmpty()) return Future.failedFuture(ApiError.of(404, NOT_FOUND));
                return Future.succeededFuture(renderDetail(d, seg, frames.frames().get(0), frames.payloads().get(0)));
              });
        });
  }

  /** Newest-first scan of up to 5000 segments for a frame carrying {@code txn}: its offset, or null. */
  private Future<Long> scan(UUID pid, String txn, Long before, int seen) {
    if (seen >= SCAN_LIMIT) return Future.succeededFuture(null);
    int page = Math.min(SCAN_PAGE, SCAN_LIMIT - seen);
    return segments.newest(pid, before, page)
        .recover(e -> Future.failedFuture(ApiError.prefixed(500, "segment fetch failed: ", e)))
        .compose(segs -> {
          if (segs.isEmpty()) return Future.succeededFuture(null);
          return scanPage(pid, txn, segs, 0).compose(found -> {
            if (found != null || segs.size() < page) return Future.succeededFuture(found);
            return scan(pid, txn, segs.get(segs.size() - 1).baseOffset(), seen + segs.size());
          });
        });
  }

  private Future<Long> scanPage(UUID pid, String txn, List<SegmentProcedures.Stored> segs, int i) {
    if (i >= segs.size()) return Future.succeededFuture(null);
    SegmentProcedures.Stored r = segs.get(i);
    long base = r.baseOffset();
    // A segment that does not decode fails the scan with 500 "frame decode failed": the frame may be in it.
    return Requests.<DecodedFrames>request(vertx, Addresses.DECODE, new DecodeRequest(pid, base, r.blob(), 0, -1))
        .compose(decoded -> {
          List<Frame> frames = decoded.frames();
          // newest first inside the segment too
          for (int k = frames.size() - 1; k >= 0; k--) {
            if (txn.equals(frames.get(k).transactionId())) return Future.succeededFuture(base + k);
          }
          return scanPage(pid, txn, segs, i + 1);
        });
  }

  private static Buffer renderDetail(JsonObject d, JsonObject seg, Frame f, byte[] payload) {
    var j = new JsonText(1024);
    j.beginObject()
        .field("id", f.messageId().toString())
        .field("transactionId", f.transactionId());
    j.key("data").raw(payload);
    j.key("payload").raw(payload);
    j.field("traceId", f.traceId() == null ? null : f.traceId().toString())
        .field("producerSub", f.producerSub())
        .field("createdAt", seg.getString("createdAt"))
        .field("partitionId", d.getString("partitionId"))
        .field("partition", d.getString("partition"))
        .field("isEncrypted", f.encrypted())
        .field("queue", d.getString("queue"))
        .field("queuePath", d.getString("queuePath"))
        .field("namespace", d.getString("namespace"))
        .field("task", d.getString("task"))
        .field("status", d.getString("status"))
        .field("errorMessage", d.getString("errorMessage"))
        .field("retryCount", d.getLong("retryCount", 0L))
        .field("leaseExpiresAt", d.getString("leaseExpiresAt"));
    j.key("queueConfig").raw(encode(d.getValue("queueConfig")));
    j.key("mode").raw(encode(d.getValue("mode")));
    j.key("consumerGroups").raw(encode(d.getValue("consumerGroups", new JsonArray())));
    return j.endObject().buffer();
  }

  private static byte[] encode(Object v) {
    return Json.encodeToBuffer(v).getBytes();
  }
}
