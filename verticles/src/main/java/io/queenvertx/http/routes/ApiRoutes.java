package io.queenvertx.http.routes;

import io.queenvertx.http.server.RouteTable;
import io.queenvertx.node.NodeContext;
import io.queenvertx.webhook.api.WebhookApi;
import io.vertx.core.Vertx;

/**
 * The route list of the broker, in the order of API.md §4 except that push, pop and ack come first: vertx-web tries
 * the routes in order and runs each parameterised route's regex on the path before it looks at the method, so every
 * request pays for the routes declared before its own. No two routes match the same method and path, so the order
 * decides nothing else.
 */
public final class ApiRoutes {
  private ApiRoutes() {}

  public static void mount(RouteTable routes, NodeContext node, Vertx vertx) {
    PushRoutes.mount(routes, node, vertx);
    PopRoutes.mount(routes, node, vertx);
    AckRoutes.mount(routes, node, vertx);
    HealthRoutes.mount(routes, node.config(), node.db());
    MetricsRoutes.mount(routes, node);
    QueueRoutes.mount(routes, node, vertx);
    LogReadRoutes.mount(routes, node);
    FetchRoutes.mount(routes, node, vertx);
    StatusRoutes.mount(routes, node);
    AnalyticsRoutes.mount(routes, node, vertx);
    ConsumerGroupRoutes.mount(routes, node, vertx);
    TransactionRoutes.mount(routes, vertx);
    TimerRoutes.mount(routes, node, vertx);
    MessageRoutes.mount(routes, node, vertx);
    DlqRoutes.mount(routes, node, vertx, node.cipher());
    TraceRoutes.mount(routes, node);
    RedriveRoutes.mount(routes, node, vertx);
    WebhookApi.mount(routes, node, vertx);
    SystemRoutes.mount(routes, node, vertx);
    NodesRoutes.mount(routes, node, vertx);
    KvRoutes.mount(routes, node);
    LockRoutes.mount(routes, node);
    OpenApiRoutes.mount(routes);
  }
}
