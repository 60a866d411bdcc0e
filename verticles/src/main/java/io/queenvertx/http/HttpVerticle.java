package io.queenvertx.http;

import io.queenvertx.http.routes.ApiRoutes;
import io.queenvertx.http.server.DashboardRoutes;
import io.queenvertx.http.routes.OpenApiRoutes;
import io.queenvertx.http.server.ConnectionLimits;
import io.queenvertx.http.server.ErrorContract;
import io.queenvertx.http.server.OriginGuard;
import io.queenvertx.http.server.PathGuard;
import io.queenvertx.http.server.RequestIds;
import io.queenvertx.http.server.RouteTable;
import io.queenvertx.http.server.StrictFraming;
import io.queenvertx.http.server.Tenancy;
import io.queenvertx.node.NodeContext;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.ext.web.Router;
import java.util.concurrent.TimeUnit;

/**
 * The network edge: routing, the body limit, the error contract and JSON in/out. Deployed with one instance per core;
 * the instances share the listening socket. Work is handed to the other verticles over their event-bus addresses.
 */
public final class HttpVerticle extends VerticleBase {
  /** Time an in-flight request gets to finish when the node shuts down. */
  private static final long DRAIN_SECONDS = 10;

  private final NodeContext node;
  private HttpServer server;
  private ConnectionLimits.Guard guard;

  public HttpVerticle(NodeContext node) {
    this.node = node;
  }

  @Override
  public Future<?> start() {
    Router router = buildRouter(node, vertx);
    HttpServerOptions options = new HttpServerOptions()
        .setPort(node.config().http().port())
        .setHost(node.config().http().bindAddress())
        .setTcpNoDelay(true)
        .setCompressionSupported(false)
        // Queen speaks HTTP/1.1 only; an h2c connection would also bypass the per-request header deadline.
        .setHttp2ClearTextEnabled(false)
        // Vert.x's own idle timeout counts socket silence and would cut a parked long poll: ConnectionLimits keeps
        // an idle timeout that is suspended while a request is in flight, plus the header deadline and the cap.
        .setIdleTimeout(0);
    server = vertx.createHttpServer(options);
    guard = ConnectionLimits.of(vertx, node.metrics(), node.config().exposure()).guard(vertx);
    server.connectionHandler(c -> {
      StrictFraming.install(c, options);
      guard.accept(c);
    });
    server.invalidRequestHandler(StrictFraming::onInvalid);
    return server.requestHandler(router).listen();
  }

  static Router buildRouter(NodeContext node, io.vertx.core.Vertx vertx) {
    Router router = Router.router(vertx);
    boolean logAll = node.config().http().accessLog();
    router.route().order(-2000).handler(ctx -> RequestIds.handle(ctx, logAll));
    // Before auth and routing: a path that is not canonical is a 400, so the access checks and the router judge the
    // same path (issue 18).
    router.route().order(-1990).handler(PathGuard::handle);
    // Then the Host allow-list and the cross-site checks (issue 34), with JWT on or off.
    router.route().order(-1980).handler(new OriginGuard(node.config().security())::handle);
    // axum matches exactly: "/api/v1/push/" is not "/api/v1/push" (API.md §1.5), but Vert.x would match both.
    router.route().order(-800).handler(ctx -> {
      String p = ErrorContract.routedPath(ctx);
      if (p.length() > 1 && p.endsWith("/")) ErrorContract.fallback(ctx);
      else ctx.next();
    });
    var auth = new io.queenvertx.auth.AuthHandler(node.config().jwt(),
        io.queenvertx.auth.AuthHandler.verifier(vertx, node.config().jwt()));
    router.route().order(-950).handler(auth);
    boolean tenancy = node.config().security().tenancyHeader();
    router.route().order(-900).handler(ctx -> Tenancy.resolve(ctx, tenancy));
    var routes = new RouteTable(router, node.config().http().maxBodyBytes(), auth);
    ApiRoutes.mount(routes, node, vertx);
    OpenApiRoutes.mountDocs(router);
    DashboardRoutes.mount(router);
    router.route().last().handler(ErrorContract::fallback);
    router.route().failureHandler(ErrorContract::onFailure);
    return router;
  }

  @Override
  public Future<?> stop() {
    if (guard != null) guard.stop();
    return server == null ? Future.succeededFuture() : server.shutdown(DRAIN_SECONDS, TimeUnit.SECONDS);
  }
}
