package io.queenvertx.http.server;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.StaticHandler;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/**
 * The operator's dashboard (issue 21), served from the jar on the broker's own port: {@code /} and every unknown
 * non-API GET answer {@code index.html} (the SPA fallback of API.md §1.5), the app's ES modules and CSS are under
 * {@code /assets/} (public, API.md §2.4), and the chart library comes from its WebJar under
 * {@code /assets/vendor/uplot/}. The pages themselves only call the public HTTP API, with the token the operator typed.
 * These routes are not API routes, so they are mounted on the router directly rather than through {@link RouteTable}
 * and are not in the OpenAPI document.
 */
public final class DashboardRoutes {
  /** Classpath folder of the app. */
  public static final String WEBROOT = "webroot";
  /** The uPlot WebJar's version, read from its Maven metadata so the pom is the only place it is written. */
  public static final String UPLOT_VERSION = webjarVersion("uplot");
  private static final long ASSET_MAX_AGE_SECONDS = 300;
  /**
   * The app's Content-Security-Policy: scripts only from this origin (no inline script, no eval), no plugins, no
   * framing, API calls to this origin only. Styles allow inline attributes because the chart library sizes its
   * elements through them; no page writes data into a style.
   */
  public static final String CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
      + "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
      + "form-action 'self'";

  private DashboardRoutes() {}

  /** Mounts the static routes; the SPA fallback itself is {@link #index}, called by {@link ErrorContract#fallback}. */
  public static void mount(Router router) {
    StaticHandler vendor = StaticHandler.create("META-INF/resources/webjars/uplot/" + UPLOT_VERSION + "/dist")
        .setMaxAgeSeconds(ASSET_MAX_AGE_SECONDS).setDirectoryListing(false);
    StaticHandler app = StaticHandler.create(WEBROOT + "/assets")
        .setMaxAgeSeconds(ASSET_MAX_AGE_SECONDS).setDirectoryListing(false);
    for (HttpMethod m : new HttpMethod[] {HttpMethod.GET, HttpMethod.HEAD}) {
      router.route(m, "/assets/*").handler(DashboardRoutes::noFraming);
      router.route(m, "/assets/vendor/uplot/*").handler(vendor);
      router.route(m, "/assets/*").handler(app);
      router.route(m, "/").handler(DashboardRoutes::index);
    }
    // a missing asset is a plain 404, not the app (a script tag must not receive HTML)
    router.route("/assets/*").handler(ctx -> {
      if (ctx.request().method() == HttpMethod.GET || ctx.request().method() == HttpMethod.HEAD) plainNotFound(ctx);
      else ctx.next();
    });
  }

  /**
   * Serves the app's {@code index.html}: the answer to {@code /} and to any client-side route, under {@link #CSP}
   * (the pages render every broker value as text, never as markup; the policy is the second line of defence).
   */
  public static void index(RoutingContext ctx) {
    indexHtml(ctx.vertx())
        .onSuccess(html -> {
          if (ctx.response().ended()) return;
          framingHeaders(ctx.response().setStatusCode(200)
              .putHeader("content-type", "text/html; charset=utf-8")
              .putHeader("cache-control", "no-cache")
              .putHeader("content-security-policy", CSP)
              .putHeader("referrer-policy", "no-referrer"));
          if (ctx.request().method() == HttpMethod.HEAD) {
            ctx.response().putHeader("content-length", Integer.toString(html.length())).end();
          } else {
            ctx.response().end(html);
          }
        })
        .onFailure(e -> plainNotFound(ctx));
  }

  /**
   * The headers of every page and static file of the dashboard and of {@code /docs} (issue 34): no other site may
   * frame them ({@code X-Frame-Options} for browsers that predate CSP's {@code frame-ancestors}, which the pages also
   * send), and no browser may sniff a file into another type than the one it is served as.
   */
  public static HttpServerResponse framingHeaders(HttpServerResponse response) {
    return response.putHeader("x-frame-options", "DENY").putHeader("x-content-type-options", "nosniff");
  }

  /** A route handler that puts {@link #framingHeaders} on the answer of the handlers after it. */
  public static void noFraming(RoutingContext ctx) {
    framingHeaders(ctx.response());
    ctx.next();
  }

  private static volatile Buffer cachedIndex;

  private static Future<Buffer> indexHtml(Vertx vertx) {
    Buffer b = cachedIndex;
    if (b != null) return Future.succeededFuture(b);
    return vertx.fileSystem().readFile(WEBROOT + "/index.html").onSuccess(read -> cachedIndex = read);
  }

  private static void plainNotFound(RoutingContext ctx) {
    if (ctx.response().ended()) return;
    ctx.response().setStatusCode(404).putHeader("content-type", "text/plain; charset=utf-8").end("Not Found");
  }

  public static String webjarVersion(String artifact) {
    String res = "META-INF/maven/org.webjars.npm/" + artifact + "/pom.properties";
    try (InputStream in = DashboardRoutes.class.getClassLoader().getResourceAsStream(res)) {
      if (in == null) throw new IllegalStateException("WebJar " + artifact + " is not on the classpath");
      Properties p = new Properties();
      p.load(in);
      return p.getProperty("version");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
