package io.queenvertx.http.routes;

import io.queenvertx.http.server.Tenancy;
import io.queenvertx.kernel.ApiError;
import io.queenvertx.auth.AccessLevel;
import io.queenvertx.auth.AuthHandler;
import io.queenvertx.node.NodeContext;
import io.queenvertx.bus.AckCommand;
import io.queenvertx.bus.AckItem;
import io.queenvertx.bus.Addresses;
import io.queenvertx.bus.PopCommand;
import io.queenvertx.bus.PushCommand;
import io.queenvertx.bus.PushItem;
import io.queenvertx.bus.PushOutcome;
import io.queenvertx.codec.api.AckRequest;
import io.queenvertx.codec.api.ApiAddresses;
import io.queenvertx.codec.api.ApiReply;
import io.queenvertx.codec.api.PopRequest;
import io.queenvertx.codec.api.PushRequest;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The event-bus edge: push, pop and ack for Vert.x services that join the cluster (ARCHITECTURE.md "event-bus
 * consumers"). Registered cluster-wide, so any broker node may answer. Requests obey the same rules as HTTP: the
 * {@code authorization} header is checked against the route's level (push is write-only, pop and ack read-write),
 * {@code x-queen-tenant} selects the tenant, and the body is validated by the same code as the HTTP routes.
 */
public final class EventBusApiVerticle extends VerticleBase {
  private final NodeContext node;
  private final AuthHandler auth;

  public EventBusApiVerticle(NodeContext node, AuthHandler auth) {
    this.node = node;
    this.auth = auth;
  }

  @Override
  public Future<?> start() {
    var bus = vertx.eventBus();
    return Future.all(
        bus.<PushRequest>consumer(ApiAddresses.PUSH, m -> serve(m, AccessLevel.WRITE_ONLY, this::push)).completion(),
        bus.<PopRequest>consumer(ApiAddresses.POP, m -> serve(m, AccessLevel.READ_WRITE, this::pop)).completion(),
        bus.<AckRequest>consumer(ApiAddresses.ACK, m -> serve(m, AccessLevel.READ_WRITE, this::ack)).completion());
  }

  private record Caller(UUID tenant, String subject) {}

  private <T> void serve(Message<T> m, AccessLevel level, java.util.function.BiFunction<T, Caller, Future<ApiReply>> op) {
    var d = auth.authorize(level, m.headers().get(ApiAddresses.AUTHORIZATION));
    if (!d.allowed()) {
      m.reply(new ApiReply(d.status(), new JsonObject().put("error", d.error()).encode()));
      return;
    }
    UUID tenant;
    try {
      tenant = Tenancy.parse(m.headers().get(ApiAddresses.TENANT), node.config().security().tenancyHeader());
      op.apply(m.body(), new Caller(tenant, d.subject()))
          .onSuccess(m::reply)
          .onFailure(e -> m.reply(asReply(e)));
    } catch (ApiError e) {
      m.reply(asReply(e));
    }
  }

  private static ApiReply asReply(Throwable e) {
    if (e instanceof ApiError a) return new ApiReply(a.status(), a.body().toString(StandardCharsets.UTF_8));
    return new ApiReply(500, new JsonObject().put("error", ApiError.describe(e)).encode());
  }

  private Future<ApiReply> push(PushRequest req, Caller c) {
    List<PushItem> parsed = new ArrayList<>();
    for (PushRequest.Item i : req.items()) {
      int index = parsed.size();
      if (i.queue() == null) throw PushRoutes.missing("queue");
      if (i.payloadJson() == null) throw PushRoutes.missing("payload");
      try {
        Json.decodeValue(i.payloadJson());
      } catch (RuntimeException e) {
        throw ApiError.of(400, "bad body: payloadJson of item " + index + " is not JSON: " + ApiError.describe(e));
      }
      // the payload text is stored verbatim, as over HTTP
      parsed.add(PushRoutes.validated(i.queue(), i.partition(), i.transactionId(),
          i.payloadJson().getBytes(StandardCharsets.UTF_8), index));
    }
    return Bus.<List<PushOutcome>>request(vertx, Addresses.PUSH, new PushCommand(c.tenant(), c.subject(), parsed))
        .map(out -> new ApiReply(201, PushRoutes.render(out).buffer().toString(StandardCharsets.UTF_8)));
  }

  private Future<ApiReply> pop(PopRequest r, Caller c) {
    if (r.queue() == null || r.queue().isEmpty()) throw ApiError.of(400, "bad body: missing field `queue`");
    if (node.maintenance().popMaintenance()) return Future.succeededFuture(new ApiReply(204, null));
    String group = r.consumerGroup();
    boolean queueMode = group == null || group.isEmpty() || PopRoutes.QUEUE_MODE.equals(group);
    String mode = queueMode ? "all"
        : PopRoutes.normaliseMode(r.subscriptionMode() == null ? node.config().pop().defaultSubscriptionMode()
            : r.subscriptionMode());
    var cmd = new PopCommand(c.tenant(), r.queue(), r.partition(), null, null,
        queueMode ? PopRoutes.QUEUE_MODE : group, r.batch() <= 0 ? 200 : r.batch(), 1, r.autoAck(), r.longPoll(),
        r.timeoutMs(), r.leaseSeconds(), mode, null);
    return Bus.pop(vertx, cmd)
        .map(b -> b == null ? new ApiReply(204, null) : new ApiReply(200, b.toString(StandardCharsets.UTF_8)));
  }

  private Future<ApiReply> ack(AckRequest r, Caller c) {
    String group = r.consumerGroup() == null || r.consumerGroup().isEmpty() ? PopRoutes.QUEUE_MODE : r.consumerGroup();
    List<AckItem> items = new ArrayList<>();
    for (AckRequest.Ack a : r.acks()) {
      if (a.transactionId() == null || a.partitionId() == null) {
        throw ApiError.of(400, "bad body: missing field `" + (a.transactionId() == null ? "transactionId"
            : "partitionId") + "`");
      }
      items.add(new AckItem(a.transactionId(), a.partitionId(), AckRoutes.normaliseStatus(a.status()),
          a.leaseId() == null || a.leaseId().isEmpty() ? null : a.leaseId(),
          a.error() == null || a.error().isEmpty() ? null : a.error(), group));
    }
    if (items.isEmpty()) return Future.succeededFuture(new ApiReply(200, "[]"));
    return Bus.ack(vertx, new AckCommand(c.tenant(), items))
        .map(a -> new ApiReply(200, a.encode()));
  }

}
