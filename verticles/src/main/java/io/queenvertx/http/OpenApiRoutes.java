package io.queenvertx.http;

import io.vertx.core.buffer.Buffer;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * {@code GET /openapi.json}: the OpenAPI 3 document of the whole HTTP surface, kept in the repository
 * ({@code verticles/src/main/resources/openapi.json}); a test fails when a route is added without it.
 */
final class OpenApiRoutes {
  static final String RESOURCE = "/openapi.json";

  private OpenApiRoutes() {}

  static Buffer document() {
    try (InputStream in = OpenApiRoutes.class.getResourceAsStream(RESOURCE)) {
      if (in == null) throw new IllegalStateException("openapi.json is missing from the jar");
      return Buffer.buffer(in.readAllBytes());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static void mount(RouteTable routes) {
    Buffer doc = document();
    routes.get("/openapi.json", ctx -> ErrorContract.send(ctx, 200, doc));
  }
}
