package io.queenvertx.http;

import io.queenvertx.http.routes.ApiRoutes;
import io.queenvertx.http.server.RouteTable;
import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.kernel.MaintenanceFlags;
import io.queenvertx.node.NodeContext;
import io.queenvertx.metrics.BrokerMetrics;
import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.Router;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Push, pop and ack are the first routes vertx-web tries (it runs the regex of every parameterised route declared
 * before a request's own), and putting them first takes no request away from another route: none of the routes
 * declared after them matches a push, pop or ack request.
 */
class RouteOrderIT {
  @NodeFixture
  static TestNode node;

  static List<RouteTable.Entry> declared() {
    var n = node.node();
    var ctx = new NodeContext(n.config(), n.database(), n.ownershipGate(), new MaintenanceFlags(), Optional.empty(),
        new BrokerMetrics());
    var table = new RouteTable(Router.router(n.vertx()), 1024);
    ApiRoutes.mount(table, ctx, n.vertx());
    return table.entries();
  }

  @Test
  void pushPopAndAckAreTriedFirst() {
    assertThat(declared().subList(0, 6)).containsExactly(
        new RouteTable.Entry(HttpMethod.POST, "/api/v1/push"),
        new RouteTable.Entry(HttpMethod.GET, "/api/v1/pop/queue/:queue"),
        new RouteTable.Entry(HttpMethod.GET, "/api/v1/pop/queue/:queue/partition/:partition"),
        new RouteTable.Entry(HttpMethod.GET, "/api/v1/pop"),
        new RouteTable.Entry(HttpMethod.POST, "/api/v1/ack"),
        new RouteTable.Entry(HttpMethod.POST, "/api/v1/ack/batch"));
  }

  @Test
  void noLaterRouteMatchesAHotRequest() {
    var routes = declared();
    List<String> hot = List.of("/api/v1/push", "/api/v1/pop/queue/q", "/api/v1/pop/queue/q/partition/p",
        "/api/v1/pop", "/api/v1/ack", "/api/v1/ack/batch");
    for (var e : routes.subList(6, routes.size())) {
      // vertx-web's parameter syntax: ":name" is one segment
      String regex = e.path().replaceAll(":[A-Za-z]+", "[^/]+");
      for (String path : hot) {
        assertThat(path.matches(regex)).as(e + " must not match " + path).isFalse();
      }
    }
  }
}
