package io.queenvertx.webhook.api;

import static io.queenvertx.webhook.api.WebhookApi.keyed;

import io.queenvertx.bus.Addresses;
import io.queenvertx.http.server.RouteTable;
import io.queenvertx.json.Timestamps;
import io.queenvertx.webhook.DeliveryVerticle;
import io.queenvertx.db.WebhookStore;
import io.queenvertx.webhook.api.WebhookApi.Reply;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import io.vertx.sqlclient.Row;
import java.util.Map;
import java.util.UUID;

/**
 * {@code /v1/endpoints}: push subscriptions (a queue, an optional partition, an HTTP(S) URL, a signing secret, a
 * timeout and a retry policy); each is the consumer group {@code webhook:<id>} on its queue. Every change is
 * announced on {@link Addresses#WEBHOOK_CHANGED} so the delivery verticles reload. The secret is shown once, in the
 * answer of the create.
 */
final class EndpointRoutes {
  private final WebhookStore store;
  private final Vertx vertx;

  EndpointRoutes(WebhookStore store, Vertx vertx) {
    this.store = store;
    this.vertx = vertx;
  }

  static void mount(RouteTable routes, Map<String, UUID> keys, EndpointRoutes r) {
    routes.post("/endpoints", keyed(keys, r::create));
    routes.get("/endpoints", keyed(keys, (ctx, tenant) -> r.list(tenant)));
    routes.get("/endpoints/:id", keyed(keys, r::get));
    routes.patch("/endpoints/:id", keyed(keys, r::update));
    routes.delete("/endpoints/:id", keyed(keys, r::delete));
  }

  private Future<Reply> create(RoutingContext ctx, UUID tenant) {
    var s = EndpointBody.settings(WebhookApi.body(ctx), null);
    return store.createEndpoint(tenant, s).map(row -> {
      JsonObject e = render(row);
      changed(e.getString("id"));
      return new Reply(201, e.put("secret", s.secret()));
    });
  }

  private Future<Reply> list(UUID tenant) {
    return store.endpoints(tenant).map(rows -> {
      JsonArray out = new JsonArray();
      for (Row r : rows) out.add(render(r));
      return new Reply(200, new JsonObject().put("endpoints", out));
    });
  }

  private Future<Reply> get(RoutingContext ctx, UUID tenant) {
    UUID id = WebhookApi.pathId(ctx, "endpoint");
    return store.endpoint(tenant, id).map(row -> new Reply(200, render(WebhookApi.found(row, "endpoint"))));
  }

  /** A partial update, validated over the current values under the row's lock. */
  private Future<Reply> update(RoutingContext ctx, UUID tenant) {
    UUID id = WebhookApi.pathId(ctx, "endpoint");
    JsonObject patch = WebhookApi.body(ctx);
    return store.updateEndpoint(tenant, id, current -> EndpointBody.settings(patch, current)).map(row -> {
      JsonObject e = render(WebhookApi.found(row, "endpoint"));
      changed(id.toString());
      return new Reply(200, e);
    });
  }

  private Future<Reply> delete(RoutingContext ctx, UUID tenant) {
    UUID id = WebhookApi.pathId(ctx, "endpoint");
    return store.deleteEndpoint(tenant, id).map(deleted -> {
      if (!deleted) throw WebhookError.notFound("endpoint not found");
      changed(id.toString());
      return new Reply(200, new JsonObject().put("id", id.toString()).put("deleted", true));
    });
  }

  private void changed(String id) {
    vertx.eventBus().publish(Addresses.WEBHOOK_CHANGED, new JsonObject().put("id", id));
  }

  static JsonObject render(Row r) {
    String id = r.getUUID("id").toString();
    return new JsonObject()
        .put("id", id)
        .put("queue", r.getString("queue"))
        .put("partition", r.getString("partition"))
        .put("url", r.getString("url"))
        .put("timeout_ms", r.getInteger("timeout_ms"))
        .put("max_attempts", r.getInteger("max_attempts"))
        .put("backoff_initial_ms", r.getInteger("backoff_initial_ms"))
        .put("backoff_max_ms", r.getInteger("backoff_max_ms"))
        .put("max_concurrency", r.getInteger("max_concurrency"))
        .put("enabled", r.getBoolean("enabled"))
        .put("consumer_group", DeliveryVerticle.GROUP_PREFIX + id)
        .put("created_at", Timestamps.millis(r.getOffsetDateTime("created_at")))
        .put("updated_at", Timestamps.millis(r.getOffsetDateTime("updated_at")));
  }
}
