package io.queenvertx.http.server;

import io.queenvertx.auth.AuthHandler;
import io.vertx.core.Handler;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Every route of the HTTP surface is declared through this table, so the list of (method, path) pairs exists in one
 * place: the body limit is attached only to routes that read a body (a GET or the fallback never answers 413, API.md
 * §1.6), and later layers (the OpenAPI check) read the same list. Given an {@link AuthHandler}, each route's first
 * handler is the access check for that route's own level ({@link AuthHandler#forRoute}), computed from its template
 * path and method, and it runs before the body is buffered. A route that reads a body then refuses one not declared
 * as JSON (415, {@link Bodies#declaredJson}) before buffering it, and one that is not UTF-8 after.
 *
 * <p>The body buffer is allocated once at the request's declared Content-Length instead of growing chunk by chunk.
 * vertx-web answers 413 from the header alone when the declared length exceeds the limit (before any allocation), and
 * never preallocates more than the smallest of the declared length, the limit and 64 KiB ({@code RouteTableIT}).
 */
public final class RouteTable {
  /** One declared route; {@code path} uses Vert.x's {@code :param} syntax. */
  public record Entry(HttpMethod method, String path) {}

  private final Router router;
  private final BodyHandler body;
  private final List<Entry> entries;
  private final AuthHandler auth;
  /** The mount point of this table's router ("" for the top-level router); routes are listed and checked with it. */
  private final String prefix;

  /** A table with no access checks of its own (tests that only read the route list). */
  public RouteTable(Router router, long maxBodyBytes) {
    this(router, maxBodyBytes, null);
  }

  public RouteTable(Router router, long maxBodyBytes, AuthHandler auth) {
    this(router, BodyHandler.create(false).setBodyLimit(maxBodyBytes).setHandleFileUploads(false)
        .setPreallocateBodyBuffer(true), auth, "", new ArrayList<>());
  }

  private RouteTable(Router router, BodyHandler body, AuthHandler auth, String prefix, List<Entry> entries) {
    this.router = router;
    this.body = body;
    this.auth = auth;
    this.prefix = prefix;
    this.entries = entries;
  }

  /**
   * Mounts {@code sub} as a vertx-web sub-router on {@code prefix + "/*"} at the given route order, and answers the
   * table of its routes: they are declared relative to the prefix, get this table's body limit and the access check
   * of their full path, and are listed in this table's {@link #entries()} with the prefix.
   */
  public RouteTable subRouter(String prefix, int order, Router sub) {
    router.route(prefix + "/*").order(order).subRouter(sub);
    return new RouteTable(sub, body, auth, this.prefix + prefix, entries);
  }

  public void get(String path, Handler<RoutingContext> h) {
    add(HttpMethod.GET, path, false, h);
  }

  public void post(String path, Handler<RoutingContext> h) {
    add(HttpMethod.POST, path, true, h);
  }

  public void put(String path, Handler<RoutingContext> h) {
    add(HttpMethod.PUT, path, true, h);
  }

  public void delete(String path, Handler<RoutingContext> h) {
    add(HttpMethod.DELETE, path, true, h);
  }

  public void patch(String path, Handler<RoutingContext> h) {
    add(HttpMethod.PATCH, path, true, h);
  }

  private void add(HttpMethod m, String path, boolean readsBody, Handler<RoutingContext> h) {
    var route = router.route(m, path);
    if (auth != null) route.handler(auth.forRoute(m, prefix + path));
    if (readsBody) route.handler(Bodies.DECLARED_JSON).handler(body).handler(Bodies::requireUtf8);
    route.handler(h);
    entries.add(new Entry(m, prefix + path));
  }

  public List<Entry> entries() {
    return Collections.unmodifiableList(entries);
  }
}
