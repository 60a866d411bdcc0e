package io.queenvertx.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.kernel.Config;
import io.queenvertx.testing.TestNode;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.nio.file.Files;
import java.time.Duration;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * {@code GET /health/live} is the liveness probe: 200 while the process serves, also while PostgreSQL is down and
 * {@code GET /health} is 503.
 */
class LivenessIT {
  @Test
  void livenessStays200WhileThePostgresOfTheNodeIsDown() throws Exception {
    int port = TestNode.freePort();
    var pg = EmbeddedPostgres.builder().setDataDirectory(Files.createTempDirectory("queen-live-pg"))
        .setCleanDataDirectory(true).setPort(port).start();
    var db = new Config.Database("127.0.0.1", port, "postgres", "postgres", "postgres", false);
    try (var node = TestNode.start(Map.of(), db)) {
      assertThat(node.get("/health").status()).isEqualTo(200);
      assertLive(node);

      pg.close();
      Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
          .until(() -> node.get("/health").status() == 503);
      assertLive(node);
    } finally {
      pg.close();
    }
  }

  @Test
  void livenessNeedsNoCredentialsWhenAuthIsOn() {
    try (var node = TestNode.start(Map.of("JWT_ENABLED", "true", "JWT_SECRET", "liveness-test-secret-0123456789abcdef"))) {
      assertThat(node.get("/api/v1/resources/queues").status()).isEqualTo(401);
      assertLive(node);
    }
  }

  private static void assertLive(TestNode node) {
    var r = node.get("/health/live");
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.header("content-type")).startsWith("application/json");
    assertThat(r.json().getMap()).isEqualTo(Map.of("status", "alive"));
  }
}
