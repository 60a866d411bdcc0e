package io.queenvertx.http;

import io.queenvertx.boot.NodeContext;
import io.queenvertx.bus.Addresses;
import io.queenvertx.bus.DecodeRequest;
import io.queenvertx.bus.DecodedFrames;
import io.queenvertx.bus.DlqMoveCommand;
import io.queenvertx.bus.Verdict;
import io.queenvertx.codec.Frame;
import io.queenvertx.codec.TxnHash;
import io.queenvertx.json.JsonText;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Message inspection (shared/seeds/messages-and-dlq.txt, API.md §5.9): the listing, one message's detail, deleting
 * an address's dead-letter rows and replaying its newest one. Payloads are filled by the segment decoder: a page's
 * covering segments are fetched in one query, then decoded once each (one decode request per (partitionId, seq)).
 */
final class MessageRoutes {
  static final int SCAN_LIMIT = 5000;
  static final int SCAN_PAGE = 100;
  static final String NOT_FOUND = "Message not found";
  static final String NO_DLQ_ROW =
      "No dead-letter row for this address. Live messages live in immutable segments and cannot be deleted";
  private static final String[] LIST_FILTERS = {"queue", "partition", "namespace", "task", "status", "from", "to",
      "limit", "offset", "cursor"};

  private MessageRoutes() {}

  static void mount(RouteTable routes, NodeContext node, Vertx vertx) {
    routes.get("/api/v1/messages", ctx -> list(ctx, node, vertx));
    routes.get("/api/v1/messages/:partitionId/:transactionId", ctx -> detail(ctx, node, vertx));
    routes.delete("/api/v1/messages/:partitionId/:transactionId", ctx -> deleteDeadLetters(ctx, node));
    routes.post("/api/v1/messages/:partitionId/:transactionId/retry", ctx -> retry(ctx, node, vertx));
  }

  // ---- listing ----------------------------------------------------------------------------------------------

  private static void list(RoutingContext ctx, NodeContext node, Vertx vertx) {
    JsonObject filter = new JsonObject();
    for (String k : LIST_FILTERS) {
      String v = ctx.request().getParam(k);
      if (v != null && !v.isEmpty()) filter.put(k, v);
    }
    String ns = ctx.request().getParam("ns");
    if (!filter.containsKey("namespace") && ns != null && !ns.isEmpty()) filter.put("namespace", ns);
    node.reads().preparedQuery("SELECT queen.list_messages($1, $2::text::jsonb)")
        .execute(Tuple.of(Tenancy.of(ctx), filter.encode()))
        .onFailure(e -> ctx.fail(ApiError.prefixed(500, "list failed: ", e)))
        .onSuccess(rows -> {
          JsonObject r = (JsonObject) rows.iterator().next().getValue(0);
          int status = listingStatus(r);
          if (status != 200) {
            ErrorContract.send(ctx, status, r);
            return;
          }
          JsonArray messages = r.getJsonArray("messages", new JsonArray());
          fillPayloads(node, vertx, messages).onComplete(v -> {
            var body = new JsonObject().put("messages", messages).put("mode", r.getValue("mode"))
                .put("total", messages.size());
            if (r.containsKey("nextCursor")) body.put("nextCursor", r.getValue("nextCursor"));
            ErrorContract.send(ctx, 200, body);
          });
        });
  }

  /**
   * The status of a listing procedure's result: as {@link ProcedureResult} derives it, except that the filters the
   * client got wrong ({@code invalid cursor}, {@code invalid from: …}, {@code invalid to: …}) are its 400, not a 500.
   */
  static int listingStatus(JsonObject r) {
    int status = ProcedureResult.statusOf(r.encode());
    if (status == 500 && r.getValue("error") instanceof String e && e.startsWith("invalid ")) return 400;
    return status;
  }

  /**
   * One query fetches every covering segment of the page, then one decode per (partitionId, seq); an entry whose
   * segment is gone (or fails to fetch or decode) keeps payloadAvailable:false and nulls.
   */
  private static Future<Void> fillPayloads(NodeContext node, Vertx vertx, JsonArray messages) {
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
    return node.reads().preparedQuery("SELECT partition_id, base_offset, blob FROM queen.log_segments_of($1, $2)")
        .execute(Tuple.tuple().addArrayOfUUID(pids).addArrayOfLong(bases))
        .compose(rows -> {
          List<Future<?>> all = new ArrayList<>();
          for (Row r : rows) {
            UUID pid = r.getUUID("partition_id");
            long base = r.getLong("base_offset");
            List<JsonObject> entries = bySegment.get(new Seg(pid, base));
            if (entries == null) continue;
            all.add(Bus.<DecodedFrames>request(vertx, Addresses.DECODE,
                    new DecodeRequest(pid, base, r.getBuffer("blob").getBytes(), 0, -1))
                .onSuccess(frames -> fill(frames, entries)));
          }
          return Future.join(all).<Void>mapEmpty();
        }, e -> {
          org.slf4j.LoggerFactory.getLogger(MessageRoutes.class).warn("listing payloads: segment fetch failed: {}",
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

  // ---- detail -----------------------------------------------------------------------------------------------

  private static void detail(RoutingContext ctx, NodeContext node, Vertx vertx) {
    UUID tenant = Tenancy.of(ctx);
    String txn = ctx.pathParam("transactionId");
    UUID pid = partitionIdOr404(ctx.pathParam("partitionId"));
    node.gate().owns(tenant, pid).compose(owned -> {
      if (!owned) return Future.failedFuture(ApiError.of(404, NOT_FOUND));
      return detailOf(node, vertx, tenant, pid, txn, null);
    }).onSuccess(buf -> ErrorContract.send(ctx, 200, buf)).onFailure(ctx::fail);
  }

  /** The resolution order of the seed: hash probe, covering segment, then a newest-first scan of the blobs. */
  private static Future<Buffer> detailOf(NodeContext node, Vertx vertx, UUID tenant, UUID pid, String txn,
                                         Long offset) {
    return node.reads().preparedQuery("SELECT queen.message_detail($1, $2, $3, $4)")
        .execute(Tuple.of(tenant, pid, Buffer.buffer(TxnHash.of(txn)), offset))
        .recover(e -> Future.failedFuture(ApiError.prefixed(500, "resolve failed: ", e)))
        .compose(rows -> {
          JsonObject d = (JsonObject) rows.iterator().next().getValue(0);
          if (!d.getBoolean("found", false)) {
            if (offset != null || !d.getBoolean("partitionExists", false)) {
              return Future.failedFuture(ApiError.of(404, NOT_FOUND));
            }
            return scan(node, vertx, pid, txn, null, 0)
                .compose(off -> off == null ? Future.failedFuture(ApiError.of(404, NOT_FOUND))
                    : detailOf(node, vertx, tenant, pid, txn, off));
          }
          JsonObject seg = d.getJsonObject("segment");
          if (seg == null) return Future.failedFuture(ApiError.of(404, NOT_FOUND));
          long base = seg.getLong("base");
          int idx = (int) (d.getLong("offset") - base);
          return Bus.<DecodedFrames>request(vertx, Addresses.DECODE, new DecodeRequest(pid, base, null, idx, 1))
              .compose(frames -> {
                if (!frames.found() || frames.frames().isEmpty()) return Future.failedFuture(ApiError.of(404, NOT_FOUND));
                return Future.succeededFuture(renderDetail(d, seg, frames.frames().get(0), frames.payloads().get(0)));
              });
        });
  }

  /** Newest-first scan of up to 5000 segments for a frame carrying {@code txn}: its offset, or null. */
  private static Future<Long> scan(NodeContext node, Vertx vertx, UUID pid, String txn, Long before, int seen) {
    if (seen >= SCAN_LIMIT) return Future.succeededFuture(null);
    int page = Math.min(SCAN_PAGE, SCAN_LIMIT - seen);
    return node.reads().preparedQuery("SELECT base_offset, blob FROM queen.log_segments_newest($1, $2, $3)")
        .execute(Tuple.of(pid, before, page))
        .recover(e -> Future.failedFuture(ApiError.prefixed(500, "segment fetch failed: ", e)))
        .compose(rows -> {
          if (rows.size() == 0) return Future.succeededFuture(null);
          List<Row> segs = new ArrayList<>();
          rows.forEach(segs::add);
          return scanPage(vertx, pid, txn, segs, 0).compose(found -> {
            if (found != null || rows.size() < page) return Future.succeededFuture(found);
            return scan(node, vertx, pid, txn, segs.get(segs.size() - 1).getLong("base_offset"), seen + rows.size());
          });
        });
  }

  private static Future<Long> scanPage(Vertx vertx, UUID pid, String txn, List<Row> segs, int i) {
    if (i >= segs.size()) return Future.succeededFuture(null);
    Row r = segs.get(i);
    long base = r.getLong("base_offset");
    // A segment that does not decode fails the scan with 500 "frame decode failed": the frame may be in it.
    return Bus.<DecodedFrames>request(vertx, Addresses.DECODE,
            new DecodeRequest(pid, base, r.getBuffer("blob").getBytes(), 0, -1))
        .compose(decoded -> {
          List<Frame> frames = decoded.frames();
          // newest first inside the segment too
          for (int k = frames.size() - 1; k >= 0; k--) {
            if (txn.equals(frames.get(k).transactionId())) return Future.succeededFuture(base + k);
          }
          return scanPage(vertx, pid, txn, segs, i + 1);
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

  // ---- dead-letter rows of an address -----------------------------------------------------------------------

  private static void deleteDeadLetters(RoutingContext ctx, NodeContext node) {
    UUID tenant = Tenancy.of(ctx);
    String pidText = ctx.pathParam("partitionId");
    String txn = ctx.pathParam("transactionId");
    UUID pid = parseOrNull(pidText);
    if (pid == null) {
      ErrorContract.send(ctx, 404, addressNotFound(pidText, txn));
      return;
    }
    node.gate().owns(tenant, pid).compose(owned -> !owned ? Future.succeededFuture(0L)
            : node.pool().preparedQuery("SELECT queen.delete_message($1, $2, $3)")
                .execute(Tuple.of(tenant, pid, txn))
                .map(rows -> ((JsonObject) rows.iterator().next().getValue(0)).getLong("deleted", 0L))
                .recover(e -> Future.failedFuture(ApiError.prefixed(500, "delete failed: ", e))))
        .onSuccess(n -> {
          if (n > 0) {
            ErrorContract.send(ctx, 200, new JsonObject().put("success", true).put("partitionId", pidText)
                .put("transactionId", txn).put("message", "Message deleted successfully"));
          } else {
            ErrorContract.send(ctx, 404, addressNotFound(pidText, txn));
          }
        })
        .onFailure(ctx::fail);
  }

  private static void retry(RoutingContext ctx, NodeContext node, Vertx vertx) {
    UUID tenant = Tenancy.of(ctx);
    String pidText = ctx.pathParam("partitionId");
    String txn = ctx.pathParam("transactionId");
    if (DlqRoutes.refusedByMaintenance(ctx, node)) return;
    UUID pid = parseOrNull(pidText);
    if (pid == null) {
      ErrorContract.send(ctx, 404, DlqRoutes.addressGone(pidText, txn));
      return;
    }
    node.gate().owns(tenant, pid).onComplete(ar -> {
      if (ar.failed() || !ar.result()) {
        ErrorContract.send(ctx, 404, DlqRoutes.addressGone(pidText, txn));
        return;
      }
      Bus.<Verdict>request(vertx, Addresses.DLQ_MOVE, new DlqMoveCommand(tenant, null, pid, txn, null, null))
          .onSuccess(v -> ErrorContract.send(ctx, v.status(), v.body()))
          .onFailure(ctx::fail);
    });
  }

  static JsonObject addressNotFound(String pid, String txn) {
    return new JsonObject().put("success", false).put("partitionId", pid).put("transactionId", txn)
        .put("error", NOT_FOUND).put("message", NO_DLQ_ROW);
  }

  private static UUID partitionIdOr404(String text) {
    UUID pid = parseOrNull(text);
    if (pid == null) throw ApiError.of(404, NOT_FOUND);
    return pid;
  }

  /** A canonical 8-4-4-4-12 uuid, else null (java.util.UUID alone would accept "1-1-1-1-1"). */
  static UUID parseOrNull(String text) {
    if (text == null || text.length() != 36) return null;
    try {
      return UUID.fromString(text);
    } catch (RuntimeException e) {
      return null;
    }
  }
}
