package io.queenvertx.clients;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Redocly's linter ({@code @redocly/cli}, version pinned in {@code clients-test/openapi/package-lock.json}) with its
 * recommended ruleset on the document a real node serves at {@code /openapi.json}: no error. Warnings are printed;
 * the one expected is {@code no-ambiguous-paths} on GET {@code /api/v1/dlq/redrive/{taskId}} vs POST
 * {@code /api/v1/dlq/{id}/replay}: the methods differ and dead-letter ids are UUIDs, as the document's "Path matching"
 * paragraph says (this note is kept here, not in the document its readers see).
 */
class OpenApiLintIT {
  @NodeFixture
  static TestNode node;

  @Test
  void theServedDocumentHasNoRedoclyErrors() throws Exception {
    JsClientProject project = JsClientProject.find("clients-test/openapi");
    project.ci();
    TestNode.Reply served = node.get("/openapi.json");
    assertThat(served.status()).isEqualTo(200);
    Path file = Files.createTempFile(project.dir(), "served-openapi", ".json");
    try {
      Files.writeString(file, served.body());
      JsClientProject.Result r = project.run(List.of("npx", "--no-install", "redocly", "lint", "--extends=recommended",
              "--format=json", project.dir().relativize(file).toString()),
          Map.of("REDOCLY_TELEMETRY", "off", "REDOCLY_SUPPRESS_UPDATE_NOTICE", "true"), Duration.ofMinutes(2));
      JsonObject report = jsonPart(r.output());
      JsonObject totals = report.getJsonObject("totals");
      JsonArray problems = report.getJsonArray("problems");
      System.out.println("redocly lint (recommended): " + totals.getInteger("errors") + " errors, "
          + totals.getInteger("warnings") + " warnings: " + problems.stream()
              .map(p -> ((JsonObject) p).getString("ruleId")).toList());
      assertThat(totals.getInteger("errors")).as("errors in:\n" + problems.encodePrettily()).isZero();
      assertThat(r.exit()).as(r.output()).isZero();
    } finally {
      Files.deleteIfExists(file);
    }
  }

  /** The JSON report out of the linter's output (Node may print a notice box on stderr before it). */
  private static JsonObject jsonPart(String output) {
    int start = output.startsWith("{") ? 0 : output.indexOf("\n{") + 1;
    int end = output.lastIndexOf('}') + 1;
    boolean found = output.startsWith("{") || start > 0;
    if (!found || end <= start) {
      throw new AssertionError("no JSON report in the linter's output:\n" + output);
    }
    return new JsonObject(output.substring(start, end));
  }
}
