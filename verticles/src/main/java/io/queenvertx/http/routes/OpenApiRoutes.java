package io.queenvertx.http.routes;

import io.queenvertx.http.server.DashboardRoutes;
import io.queenvertx.http.server.ErrorContract;
import io.queenvertx.http.server.RouteTable;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.StaticHandler;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/**
 * {@code GET /openapi.json}: the OpenAPI 3.1 document of the whole HTTP surface, kept in the repository
 * ({@code verticles/src/main/resources/openapi.json}); a test fails when a route is added without it. {@code GET /docs}:
 * Swagger UI on that document, served from the {@code org.webjars:swagger-ui} WebJar in the jar (no CDN). Both are
 * public; {@code /docs} is static content, so it is not in the route table the document is compared with. Its page
 * and files carry {@link DashboardRoutes#framingHeaders} and its page {@code frame-ancestors 'none'}: no other site
 * may frame it.
 */
public final class OpenApiRoutes {
  static final String RESOURCE = "/openapi.json";
  static final String DOCS = "/docs";
  private static final String SWAGGER_POM = "META-INF/maven/org.webjars/swagger-ui/pom.properties";

  private OpenApiRoutes() {}

  static Buffer document() {
    return resource(RESOURCE);
  }

  static void mount(RouteTable routes) {
    Buffer doc = document();
    routes.get("/openapi.json", ctx -> ErrorContract.send(ctx, 200, doc));
  }

  /**
   * Mounts Swagger UI: {@code /docs} (and {@code /docs/index.html}) is the page, {@code /docs/queen-docs.js} points
   * it at {@code /openapi.json}, and the WebJar's files are served under {@code /docs/*}. Mounted on the top-level
   * router before the dashboard's SPA fallback, so an unknown {@code /docs/...} file is a plain 404, not the app.
   */
  public static void mountDocs(Router router) {
    Buffer page = resource("/swagger/index.html");
    Buffer init = resource("/swagger/queen-docs.js");
    StaticHandler webjar = StaticHandler.create("META-INF/resources/webjars/swagger-ui/" + swaggerUiVersion())
        .setDirectoryListing(false).setMaxAgeSeconds(300);
    for (HttpMethod m : new HttpMethod[] {HttpMethod.GET, HttpMethod.HEAD}) {
      router.route(m, DOCS).handler(DashboardRoutes::noFraming);
      router.route(m, DOCS + "/*").handler(DashboardRoutes::noFraming);
      router.route(m, DOCS).handler(ctx -> answer(ctx, page, "text/html; charset=utf-8"));
      router.route(m, DOCS + "/index.html").handler(ctx -> answer(ctx, page, "text/html; charset=utf-8"));
      router.route(m, DOCS + "/queen-docs.js").handler(ctx -> answer(ctx, init, "text/javascript; charset=utf-8"));
      router.route(m, DOCS + "/*").handler(webjar);
      router.route(m, DOCS + "/*").handler(ctx -> ctx.response().setStatusCode(404)
          .putHeader("content-type", "text/plain; charset=utf-8").end("Not Found"));
    }
  }

  /** The page's own policy: only that no other site may frame it (Swagger UI's scripts and styles are left alone). */
  static final String DOCS_CSP = "frame-ancestors 'none'";

  private static void answer(RoutingContext ctx, Buffer body, String type) {
    ctx.response().setStatusCode(200).putHeader("content-type", type).putHeader("cache-control", "no-cache")
        .putHeader("content-security-policy", DOCS_CSP);
    if (ctx.request().method() == HttpMethod.HEAD) {
      ctx.response().putHeader("content-length", Integer.toString(body.length())).end();
    } else {
      ctx.response().end(body);
    }
  }

  /** The Swagger UI WebJar's version, from its Maven metadata, so the pom is the one place it is written. */
  static String swaggerUiVersion() {
    try (InputStream in = OpenApiRoutes.class.getClassLoader().getResourceAsStream(SWAGGER_POM)) {
      if (in == null) throw new IllegalStateException("the swagger-ui WebJar is not on the classpath");
      Properties p = new Properties();
      p.load(in);
      return p.getProperty("version");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Buffer resource(String name) {
    try (InputStream in = OpenApiRoutes.class.getResourceAsStream(name)) {
      if (in == null) throw new IllegalStateException(name + " is missing from the jar");
      return Buffer.buffer(in.readAllBytes());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
