package io.queenvertx.http;

import io.queenvertx.boot.NodeContext;
import io.queenvertx.webhook.api.WebhookApi;
import io.vertx.core.Vertx;

/** The route list of the broker, in the order of API.md §4. */
final class ApiRoutes {
  private ApiRoutes() {}

  static void mount(RouteTable routes, NodeContext node, Vertx vertx) {
    HealthRoutes.mount(routes, node.config(), node.pool());
    MetricsRoutes.mount(routes, node);
    QueueRoutes.mount(routes, node, vertx);
    StatusRoutes.mount(routes, node);
    AnalyticsRoutes.mount(routes, node, vertx);
    ConsumerGroupRoutes.mount(routes, node, vertx);
    PushRoutes.mount(routes, node, vertx);
    PopRoutes.mount(routes, node, vertx);
    AckRoutes.mount(routes, node, vertx);
    TransactionRoutes.mount(routes, vertx);
    MessageRoutes.mount(routes, node, vertx);
    DlqRoutes.mount(routes, node, vertx, node.cipher());
    TraceRoutes.mount(routes, node);
    RedriveRoutes.mount(routes, node, vertx);
    WebhookApi.mount(routes, node, vertx);
    SystemRoutes.mount(routes, node, vertx);
    NodesRoutes.mount(routes, node, vertx);
    OpenApiRoutes.mount(routes);
  }
}
