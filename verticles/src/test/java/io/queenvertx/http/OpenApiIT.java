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
      // a trailing wildcard (the rest of the path, e.g. a key-value key) is documented as the parameter {key}
      out.add(e.method().name().toLowerCase() + " " + e.path().replaceAll(":([A-Za-z]+)", "{$1}")
          .replaceAll("/\\*$", "/{key}"));
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

  /** Every description and summary of the document, with its JSON path. */
  static java.util.Map<String, String> texts(Object node, String path, java.util.Map<String, String> out) {
    if (node instanceof JsonObject o) {
      for (String k : o.fieldNames()) {
        Object v = o.getValue(k);
        if ((k.equals("description") || k.equals("summary")) && v instanceof String s) out.put(path + "/" + k, s);
        else texts(v, path + "/" + k, out);
      }
    } else if (node instanceof io.vertx.core.json.JsonArray a) {
      for (int i = 0; i < a.size(); i++) texts(a.getValue(i), path + "[" + i + "]", out);
    }
    return out;
  }

  /**
   * Issue 38: Swagger UI renders descriptions as CommonMark, where {@code <text>} is an HTML tag (the info text was cut
   * at {@code {"error":"}) and {@code __QUEUE_MODE__} is bold: outside code spans no description may hold either.
   * Internal notes stay out of the document.
   */
  @Test
  void descriptionsAreMarkdownWithoutRawHtmlOrInternalNotes() {
    var doc = node.get("/openapi.json").json();
    var all = texts(doc, "", new java.util.TreeMap<>());
    assertThat(all).hasSizeGreaterThan(100);
    all.forEach((path, text) -> {
      String prose = text.replaceAll("`[^`]*`", "");
      assertThat(prose).as(path).doesNotContainPattern("<[A-Za-z/!?]").doesNotContainPattern("(^|\\W)__\\w");
      assertThat(text).as(path).doesNotContainIgnoringCase("redocly");
    });
    assertThat(doc.getJsonObject("info").getString("description"))
        .contains("`{\"error\":\"<text>\"}`", "**Browsers and proxies**");
  }

  /** Issue 38: the contract's surprises are said where a reader of the document meets them; examples are real. */
  @Test
  void theContractsSurprisesAreDocumentedAndThePushExampleNamesARealQueue() {
    var doc = node.get("/openapi.json").json();
    JsonObject paths = doc.getJsonObject("paths");
    assertThat(paths.getJsonObject("/api/v1/configure").getJsonObject("post").getString("description"))
        .contains("does not know is **ignored**", "`retryDelay` is **stored and echoed only**");
    for (String ack : new String[] {"/api/v1/ack", "/api/v1/ack/batch"}) {
      assertThat(paths.getJsonObject(ack).getJsonObject("post").getString("description"))
          .contains("**any other value counts as `failed`**");
    }
    assertThat(paths.getJsonObject("/api/v1/dlq").getJsonObject("get").getString("description"))
        .contains("`total` is the number of rows on **this page**");
    JsonObject example = paths.getJsonObject("/api/v1/push").getJsonObject("post").getJsonObject("requestBody")
        .getJsonObject("content").getJsonObject("application/json").getJsonObject("example");
    assertThat(example.getJsonArray("items").getJsonObject(0).getString("queue")).isEqualTo("orders");
    // the examples are requests the broker takes as they stand (on a queue of this test's own)
    String queue = "openapi-example-" + java.util.UUID.randomUUID();
    example.getJsonArray("items").getJsonObject(0).put("queue", queue);
    var pushed = node.post("/api/v1/push", example);
    assertThat(pushed.status()).as(pushed.body()).isEqualTo(201);
    assertThat(pushed.array().getJsonObject(0).getString("status")).isEqualTo("queued");
    JsonObject configure = paths.getJsonObject("/api/v1/configure").getJsonObject("post").getJsonObject("requestBody")
        .getJsonObject("content").getJsonObject("application/json").getJsonObject("example");
    assertThat(configure.getString("queue")).isEqualTo("orders");
    assertThat(node.post("/api/v1/configure", configure.put("queue", queue)).status()).isEqualTo(200);
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
