package io.queenvertx.http.routes;

import io.queenvertx.bus.Addresses;
import io.queenvertx.bus.DecodeRequest;
import io.queenvertx.bus.DecodedFrames;
import io.queenvertx.bus.Requests;
import io.queenvertx.consumer.ConsumerInbox;
import io.queenvertx.consumer.LandingWatch;
import io.queenvertx.db.SegmentProcedures.FetchSlice;
import io.queenvertx.http.server.Bodies;
import io.queenvertx.http.server.ErrorContract;
import io.queenvertx.http.server.RouteTable;
import io.queenvertx.http.server.Tenancy;
import io.queenvertx.json.Timestamps;
import io.queenvertx.kernel.ApiError;
import io.queenvertx.node.NodeContext;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * {@code POST /api/v1/fetch} (queen2-contract.md §7): records by offset, Kafka-style. The slices come from
 * {@code queen.log_fetch} on the read pool and are decoded by the segment decoder ({@code DECODE}); no lease is taken
 * and no cursor moves. While the records found weigh less than {@code minBytes} (1) of payload, the fetch waits, until
 * {@code maxWaitMs} (0, at most 30 s) has passed, as a pop's long poll does: parked on the consumer's long-poll gates
 * of its queues ({@link ConsumerInbox#watch}), read again when one of them lands (the cluster-wide {@code landed}
 * announcement) or when the pop's safety re-poll is due ({@code POP_WAIT_*}); no thread or connection is held. On an
 * event loop without a consumer it reads again every {@value #REPOLL_MS} ms.
 */
final class FetchRoutes {
  static final int MAX_ENTRIES = 1024;
  static final long DEFAULT_MAX_BYTES = 1L << 20;
  static final long MAX_BYTES = 8L << 20;
  static final long MAX_TOTAL = 64L << 20;
  static final long MAX_WAIT_MS = 30_000;
  static final long REPOLL_MS = 100;

  private FetchRoutes() {}

  static void mount(RouteTable routes, NodeContext node, Vertx vertx) {
    routes.post("/api/v1/fetch", ctx -> fetch(ctx, node, vertx));
  }

  private static void fetch(RoutingContext ctx, NodeContext node, Vertx vertx) {
    JsonObject b = Bodies.object(ctx);
    JsonArray in = LogReadRoutes.entries(b, true, MAX_ENTRIES);
    for (String k : new String[] {"maxWaitMs", "minBytes"}) {
      Object v = b.getValue(k);
      if (v != null && !(v instanceof Number n && n.longValue() >= 0)) {
        throw ApiError.of(400, k + " must be a number of at least 0");
      }
    }
    JsonArray out = new JsonArray();
    for (int i = 0; i < in.size(); i++) {
      JsonObject e = in.getJsonObject(i);
      String at = "entries[" + i + "].";
      if (!(e.getValue("offset") instanceof Number o) || o.longValue() < 0 || o.doubleValue() != o.longValue()) {
        throw ApiError.of(400, at + "offset must be an integer of at least 0");
      }
      Object mb = e.getValue("maxBytes");
      if (mb != null && !(mb instanceof Number n && n.longValue() >= 1)) {
        throw ApiError.of(400, at + "maxBytes must be a number of at least 1");
      }
      long maxBytes = mb == null ? DEFAULT_MAX_BYTES : Math.min(((Number) mb).longValue(), MAX_BYTES);
      out.add(new JsonObject().put("queue", LogReadRoutes.queue(e, at))
          .put("partition", LogReadRoutes.partition(e, at)).put("offset", o.longValue()).put("maxBytes", maxBytes));
    }
    long wait = b.getValue("maxWaitMs") == null ? 0 : Math.min(b.getLong("maxWaitMs"), MAX_WAIT_MS);
    long minBytes = b.getValue("minBytes") == null ? 1 : b.getLong("minBytes");
    Set<String> queues = new HashSet<>();
    for (int i = 0; i < out.size(); i++) queues.add(out.getJsonObject(i).getString("queue"));
    attempt(ctx, node, vertx, out, new LandingWatch(Tenancy.of(ctx), queues, System.currentTimeMillis() + wait, 0),
        minBytes);
  }

  private static void attempt(RoutingContext ctx, NodeContext node, Vertx vertx, JsonArray entries, LandingWatch w,
                              long minBytes) {
    node.db().readSegments().fetch(w.tenant(), entries, MAX_TOTAL)
        .compose(slices -> render(vertx, entries, slices))
        .onSuccess(r -> {
          long left = w.deadline() - System.currentTimeMillis();
          if (r.bytes() >= minBytes || left <= 0 || ctx.response().closed()) {
            ErrorContract.send(ctx, 200, r.body());
            return;
          }
          Future<Boolean> woken = ConsumerInbox.watch(w);
          if (woken == null) {
            vertx.setTimer(Math.min(REPOLL_MS, left), t -> attempt(ctx, node, vertx, entries, w, minBytes));
            return;
          }
          // a landing starts the safety schedule over, as for a pop; an empty re-read moves it on
          woken.onComplete(ar -> attempt(ctx, node, vertx, entries, new LandingWatch(w.tenant(), w.queues(),
              w.deadline(), ar.succeeded() && ar.result() ? 0 : w.emptyChecks() + 1), minBytes));
        })
        .onFailure(e -> ctx.fail(e instanceof ApiError ? e : ApiError.prefixed(500, "fetch failed: ", e)));
  }

  /** An answer and the payload bytes of its records. */
  private record Rendered(JsonObject body, long bytes) {}

  private static Future<Rendered> render(Vertx vertx, JsonArray entries, List<FetchSlice> slices) {
    List<Future<DecodedFrames>> decoded = new ArrayList<>(slices.size());
    for (FetchSlice s : slices) {
      decoded.add(s.blob() == null ? Future.succeededFuture(null) : Requests.request(vertx, Addresses.DECODE,
          new DecodeRequest(s.partitionId(), s.baseOffset(), s.blob(), s.start(), s.take())));
    }
    return Future.all(decoded).map(all -> {
      JsonArray answer = new JsonArray();
      long bytes = 0;
      JsonObject current = null;
      int entry = 0;
      for (int i = 0; i < slices.size(); i++) {
        FetchSlice s = slices.get(i);
        if (s.entry() != entry) {
          entry = s.entry();
          JsonObject asked = entries.getJsonObject(entry - 1);
          current = new JsonObject().put("queue", asked.getString("queue"))
              .put("partition", asked.getString("partition")).put("records", new JsonArray())
              .put("highWatermark", s.high()).put("logStartOffset", s.logStart());
          if (s.error() != null) current.put("error", s.error());
          answer.add(current);
        }
        DecodedFrames f = all.resultAt(i);
        if (f == null) continue;
        String ts = Timestamps.micros(s.createdAt());
        for (int k = 0; k < f.frames().size(); k++) {
          byte[] p = f.payloads().get(k);
          bytes += p == null ? 4 : p.length;
          current.getJsonArray("records").add(new JsonObject()
              .put("offset", s.baseOffset() + s.start() + k)
              .put("transactionId", f.frames().get(k).transactionId())
              .put("payload", p == null ? null : Json.decodeValue(Buffer.buffer(p)))
              .put("ts", ts));
        }
      }
      return new Rendered(new JsonObject().put("entries", answer), bytes);
    });
  }
}
