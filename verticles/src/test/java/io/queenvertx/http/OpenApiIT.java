package io.queenvertx.http;

import io.queenvertx.http.routes.ApiRoutes;
import io.queenvertx.http.server.RouteTable;
import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.kernel.MaintenanceFlags;
import io.queenvertx.node.NodeContext;
import io.queenvertx.metrics.BrokerMetrics;
import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The OpenAPI document in the repository lists exactly the routes the router declares, and Swagger UI at {@code /docs}
 * (static, from the WebJar, so not in that comparison) shows it.
 */
class OpenApiIT {
  @NodeFixture
  static TestNode node;

  static Set<String> declaredRoutes() {
    var n = node.node();
    var ctx = new NodeContext(n.config(), n.database(), n.ownershipGate(), new MaintenanceFlags(), Optional.empty(),
        new BrokerMetrics());
    var table = new RouteTable(Router.router(n.vertx()), 1024);
    ApiRoutes.mount(table, ctx, n.vertx());
    Set<String> out = new TreeSet<>();
    for (var e : table.entries()) {
      out.add(e.method().name().toLowerCase() + " " + e.path().replaceAll(":([A-Za-z]+)", "{$1}"));
    }
    return out;
  }

  static Set<String> documentedRoutes(JsonObject doc) {
    Set<String> out = new TreeSet<>();
    JsonObject paths = doc.getJsonObject("paths");
    for (String p : paths.fieldNames()) {
      for (String m : paths.getJsonObject(p).fieldNames()) out.add(m + " " + p);
    }
    return out;
  }

  @Test
  void theServedDocumentListsExactlyTheRoutesOfTheRouter() {
    var r = node.get("/openapi.json");
    assertThat(r.status()).isEqualTo(200);
    var doc = r.json();
    assertThat(doc.getString("openapi")).startsWith("3.");
    assertThat(documentedRoutes(doc)).isEqualTo(declaredRoutes());
  }

  @Test
  void everyOperationStatesItsAccessLevelAndAResponse() {
    JsonObject paths = node.get("/openapi.json").json().getJsonObject("paths");
    for (String p : paths.fieldNames()) {
      for (String m : paths.getJsonObject(p).fieldNames()) {
        JsonObject op = paths.getJsonObject(p).getJsonObject(m);
        assertThat(op.getString("x-access-level")).as(m + " " + p)
            .isIn("Public", "ReadOnly", "WriteOnly", "ReadWrite", "Admin");
        assertThat(op.getJsonObject("responses").isEmpty()).as(m + " " + p).isFalse();
      }
    }
  }

  @Test
  void swaggerUiIsServedFromTheJarAndPointsAtTheDocument() {
    var page = node.get("/docs");
    assertThat(page.status()).isEqualTo(200);
    assertThat(page.header("content-type")).startsWith("text/html");
    assertThat(page.body()).contains("/docs/swagger-ui-bundle.js", "/docs/queen-docs.js");
    var init = node.get("/docs/queen-docs.js");
    assertThat(init.status()).isEqualTo(200);
    assertThat(init.body()).contains("url: \"/openapi.json\"");
    var bundle = node.get("/docs/swagger-ui-bundle.js");
    assertThat(bundle.status()).isEqualTo(200);
    assertThat(bundle.body()).contains("SwaggerUIBundle");
    assertThat(node.get("/docs/swagger-ui.css").status()).isEqualTo(200);
    var missing = node.get("/docs/no-such-file.js");
    assertThat(missing.status()).isEqualTo(404);
    assertThat(missing.body()).isEqualTo("Not Found");
  }

  @Test
  void withJwtOnTheDocumentAndSwaggerUiNeedNoTokenButTheApiDoes() {
    try (var jwt = TestNode.start(java.util.Map.of("JWT_ENABLED", "true", "JWT_SECRET", "openapi-it-secret"))) {
      assertThat(jwt.get("/openapi.json").status()).isEqualTo(200);
      assertThat(jwt.get("/docs").status()).isEqualTo(200);
      assertThat(jwt.get("/docs/swagger-ui-bundle.js").status()).isEqualTo(200);
      assertThat(jwt.get("/api/v1/resources/queues").status()).isEqualTo(401);
    }
  }
}
