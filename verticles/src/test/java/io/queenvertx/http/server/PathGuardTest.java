package io.queenvertx.http.server;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The canonical-path rules of {@link PathGuard} (issue 18), as pure functions. */
class PathGuardTest {
  @Test
  void canonicalPathsPass() {
    for (String p : new String[] {"/", "/health", "/api/v1/push", "/api/v1/push/", "/api/v1/resources/queues/a%20b%3Ac",
        "/api/v1/resources/queues/a%3ab", "/api/v1/resources/queues/eu%2Forders", "/api/v1/resources/queues/a%5Cb",
        "/api/v1/resources/queues/orders.retry", "/api/v1/resources/queues/...", "/api/v1/resources/queues/.hidden",
        "/api/v1/resources/queues/%C3%A9t%C3%A9", "/v1/endpoints/x"}) {
      assertThat(PathGuard.pathProblem(p)).as(p).isNull();
    }
  }

  @Test
  void dotSegmentsEmptySegmentsAndTheirEncodingsAreRefused() {
    for (String p : new String[] {"/assets/../api/v1/dlq", "/assets/%2e%2e/api/v1/dlq", "/assets/%2E%2E/api/v1/dlq",
        "/assets/.%2e/api/v1/dlq", "//api/v1/dlq", "/api//v1/dlq", "/api/v1/./dlq", "/api/v1/%2e/dlq", "/api/v1/dlq/.",
        "/api/v1/dlq/..", "/x/../api/v1/dlq", "/api/v1/dlq/a%2eb", "/api/v1/%51ueue"}) {
      assertThat(PathGuard.pathProblem(p)).as(p).isNotNull().startsWith("path ");
    }
  }

  @Test
  void controlCharactersBackslashesAndMalformedEscapesAreRefused() {
    for (String p : new String[] {"/api/v1/resources/queues/%00", "/api/v1/resources/queues/a%0Ab",
        "/api/v1/resources/queues/a%7f", "/api/v1/resources/queues/a\u0001b", "/assets\\..\\api", "/api/v1/q/%zz",
        "/api/v1/q/%4", "/api/v1/q/%", "api/v1/push", ""}) {
      assertThat(PathGuard.pathProblem(p)).as(p).isNotNull().startsWith("path ");
    }
  }

  @Test
  void aNulOrAMalformedEscapeInTheQueryNamesTheParameter() {
    assertThat(PathGuard.queryProblem(null)).isNull();
    assertThat(PathGuard.queryProblem("queue=a%20b&cursor=abc%3D&x")).isNull();
    assertThat(PathGuard.queryProblem("limit=5&queue=%00")).contains("queue").contains("NUL");
    assertThat(PathGuard.queryProblem("consumerGroup=g%zz")).contains("consumerGroup");
  }

  @Test
  void textMustBeUtf8OncePercentDecoded() {
    for (String bad : new String[] {"%C0%AF", "%ED%A0%80", "%F4%90%80%80", "%80", "%C3", "%C3%28", "\u00e9"}) {
      assertThat(PathGuard.pathProblem("/api/v1/resources/queues/a" + bad)).as(bad).isNotNull().startsWith("path ");
      assertThat(PathGuard.queryProblem("limit=5&queue=a" + bad)).as(bad).contains("queue");
    }
    assertThat(PathGuard.queryProblem("queue=%C3%A9t%C3%A9&group=%F0%9F%98%80")).isNull();
  }
}
