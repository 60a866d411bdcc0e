package io.queenvertx.http.routes;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.auth.AccessLevel;
import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.oas.models.Operation;
import io.swagger.v3.oas.models.PathItem;
import io.swagger.v3.oas.models.SpecVersion;
import io.swagger.v3.oas.models.responses.ApiResponse;
import io.swagger.v3.parser.OpenAPIV3Parser;
import io.swagger.v3.parser.core.models.ParseOptions;
import io.swagger.v3.parser.core.models.SwaggerParseResult;
import io.vertx.core.http.HttpMethod;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The OpenAPI document in the jar, read by swagger-parser: a valid OpenAPI 3.1 document (no parser message), every
 * operation with a unique camelCase operationId, a tag, a 2xx response, error responses in the dialect of its API
 * and a {@code security} that matches the access level {@link AccessLevel#of} gives its route.
 */
class OpenApiDocumentTest {
  private static final Pattern CAMEL = Pattern.compile("[a-z][a-zA-Z0-9]*");
  private static SwaggerParseResult result;
  private static OpenAPI api;

  @BeforeAll
  static void parse() {
    String json = OpenApiRoutes.document().toString(StandardCharsets.UTF_8);
    ParseOptions options = new ParseOptions();
    options.setResolve(true);
    result = new OpenAPIV3Parser().readContents(json, null, options);
    api = result.getOpenAPI();
  }

  @Test
  void isAValidOpenApi31DocumentWithoutParserMessages() {
    assertThat(result.getMessages()).isEmpty();
    assertThat(api).isNotNull();
    assertThat(api.getOpenapi()).isEqualTo("3.1.0");
    assertThat(api.getSpecVersion()).isEqualTo(SpecVersion.V31);
    assertThat(api.getComponents().getSecuritySchemes()).containsKeys("queenJwt", "webhookApiKey");
    assertThat(api.getComponents().getSchemas()).containsKeys("Error", "WebhookError");
  }

  @Test
  void everyOperationHasAUniqueOperationIdATagAndASuccessResponse() {
    Set<String> ids = new HashSet<>();
    forEachOperation((method, path, op) -> {
      String where = method + " " + path;
      assertThat(op.getOperationId()).as(where).matches(CAMEL);
      assertThat(ids.add(op.getOperationId())).as("duplicate operationId " + op.getOperationId()).isTrue();
      assertThat(op.getTags()).as(where).hasSize(1);
      assertThat(op.getSummary()).as(where).isNotBlank();
      assertThat(op.getResponses().keySet()).as(where).anyMatch(s -> s.startsWith("2"));
      assertThat(op.getResponses().keySet()).as(where).anyMatch(s -> s.startsWith("4"));
    });
    assertThat(ids).hasSizeGreaterThan(60);
  }

  @Test
  void errorResponsesUseTheDialectOfTheirApi() {
    forEachOperation((method, path, op) -> {
      String dialect = path.startsWith("/v1/") ? "#/components/schemas/WebhookError" : "#/components/schemas/Error";
      for (Map.Entry<String, ApiResponse> e : op.getResponses().entrySet()) {
        if (e.getKey().startsWith("2") || e.getKey().equals("413") || e.getKey().equals("503")
            && path.startsWith("/health") || e.getKey().equals("500") && path.equals("/api/v1/push")) {
          continue;
        }
        ApiResponse r = resolve(e.getValue());
        if (method == HttpMethod.HEAD) continue; // a HEAD answer has no body to be in a dialect
        assertThat(r.getContent()).as(method + " " + path + " " + e.getKey() + " documents its body").isNotNull();
        if (r.getContent().get("application/json") == null) {
          // Queen's plain-text refusal of a query string it cannot deserialise (TypedQuery), documented as such
          assertThat(r.getContent()).as(method + " " + path + " " + e.getKey()).containsOnlyKeys("text/plain");
          continue;
        }
        String ref = r.getContent().get("application/json").getSchema().get$ref();
        if (ref == null) {
          ref = "#/components/schemas/" + r.getContent().get("application/json").getSchema().getTitle();
        }
        assertThat(ref).as(method + " " + path + " " + e.getKey())
            .isIn(dialect, "#/components/schemas/PopRefusal");
      }
    });
  }

  @Test
  void securityMatchesTheRouteAccessLevel() {
    forEachOperation((method, path, op) -> {
      String where = method + " " + path;
      AccessLevel level = AccessLevel.of(method, path.replaceAll("\\{([A-Za-z]+)}", ":$1"));
      assertThat(op.getSecurity()).as(where).isNotNull();
      if (path.startsWith("/v1/")) {
        assertThat(op.getSecurity()).as(where).hasSize(1);
        assertThat(op.getSecurity().get(0)).as(where).containsOnlyKeys("webhookApiKey");
      } else if (level == AccessLevel.PUBLIC) {
        assertThat(op.getSecurity()).as(where).isEmpty();
        assertThat(op.getExtensions()).as(where).containsEntry("x-access-level", "Public");
      } else {
        assertThat(op.getSecurity()).as(where).hasSize(1);
        assertThat(op.getSecurity().get(0)).as(where).containsOnlyKeys("queenJwt");
        assertThat(op.getExtensions()).as(where).containsEntry("x-access-level", levelName(level));
        assertThat(op.getResponses()).as(where).containsKeys("401", "403");
      }
    });
  }

  private static String levelName(AccessLevel level) {
    return switch (level) {
      case PUBLIC -> "Public";
      case READ_ONLY -> "ReadOnly";
      case WRITE_ONLY -> "WriteOnly";
      case READ_WRITE -> "ReadWrite";
      case ADMIN -> "Admin";
    };
  }

  private static ApiResponse resolve(ApiResponse r) {
    if (r.get$ref() == null) return r;
    String name = r.get$ref().substring(r.get$ref().lastIndexOf('/') + 1);
    return api.getComponents().getResponses().get(name);
  }

  private interface OperationCheck {
    void check(HttpMethod method, String path, Operation op);
  }

  private static void forEachOperation(OperationCheck check) {
    for (Map.Entry<String, PathItem> p : api.getPaths().entrySet()) {
      for (Map.Entry<PathItem.HttpMethod, Operation> o : p.getValue().readOperationsMap().entrySet()) {
        check.check(HttpMethod.valueOf(o.getKey().name()), p.getKey(), o.getValue());
      }
    }
    assertThat(List.copyOf(api.getPaths().keySet())).isNotEmpty();
  }
}
