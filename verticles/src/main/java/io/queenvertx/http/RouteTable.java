package io.queenvertx.http;

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
 * §1.6), and later layers (access levels, the OpenAPI check) read the same list.
 */
public final class RouteTable {
  /** One declared route; {@code path} uses Vert.x's {@code :param} syntax. */
  public record Entry(HttpMethod method, String path) {}

  private final Router router;
  private final BodyHandler body;
  private final List<Entry> entries = new ArrayList<>();

  public RouteTable(Router router, long maxBodyBytes) {
    this.router = router;
    this.body = BodyHandler.create(false).setBodyLimit(maxBodyBytes).setHandleFileUploads(false);
  }

  public void get(String path, Handler<RoutingContext> h) {
    add(HttpMethod.GET, path, false, h);
  }

  public void post(String path, Handler<RoutingContext> h) {
    add(HttpMethod.POST, path, true, h);
  }

  public void delete(String path, Handler<RoutingContext> h) {
    add(HttpMethod.DELETE, path, true, h);
  }

  public void patch(String path, Handler<RoutingContext> h) {
    add(HttpMethod.PATCH, path, true, h);
  }

  private void add(HttpMethod m, String path, boolean readsBody, Handler<RoutingContext> h) {
    var route = router.route(m, path);
    if (readsBody) route.handler(body);
    route.handler(h);
    entries.add(new Entry(m, path));
  }

  public List<Entry> entries() {
    return Collections.unmodifiableList(entries);
  }
}
