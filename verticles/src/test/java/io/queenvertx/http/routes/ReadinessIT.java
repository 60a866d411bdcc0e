package io.queenvertx.http.routes;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.kernel.Config;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.TinyDisk;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonObject;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.nio.file.Files;
import java.time.Duration;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * {@code GET /health/ready}, the readiness probe of deploy/k8s: 200 while the node can take pushes, that is while its
 * database answers or its spool folder is writable. A PostgreSQL outage therefore keeps the node in its Service (pushes
 * answer {@code buffered}), while {@code /health} says 503 and {@code database} tells operators why. The spool lives on
 * a small real file system so the test can fill it.
 */
class ReadinessIT {
  @Test
  void aNodeStaysReadyWhileItCanSpoolAndLeavesOnlyWhenNeitherDatabaseNorSpoolCanTakeAPush() throws Exception {
    int port = TestNode.freePort();
    var pgDir = Files.createTempDirectory("queen-ready-pg");
    var pg = EmbeddedPostgres.builder().setDataDirectory(pgDir).setCleanDataDirectory(false).setPort(port).start();
    var db = new Config.Database("127.0.0.1", port, "postgres", "postgres", "postgres", false);
    try (var disk = TinyDisk.mount(4096);
         var node = TestNode.start(Map.of("FILE_BUFFER_DIR", disk.dir().toString()), db)) {
      assertReady(node, 200, "ready", "connected", "writable");

      // a full spool disk alone does not take the node out: the database takes pushes
      var filler = disk.reserve("filler", fillerKib(disk));
      assertReady(node, 200, "ready", "connected", "unwritable");
      Files.delete(filler);

      pg.close();
      Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
          .until(() -> node.get("/health").status() == 503);
      assertReady(node, 200, "ready", "disconnected", "writable");
      String q = Wire.queue("ready");
      var pushed = Wire.push(node, Wire.item(q, null, 1, "while-down"));
      assertThat(pushed.array().getJsonObject(0).getString("status")).as(pushed.body()).isEqualTo("buffered");

      // neither the database nor the spool can take a push: out of the Service
      filler = disk.reserve("filler", fillerKib(disk));
      assertReady(node, 503, "unready", "disconnected", "unwritable");
      Files.delete(filler);
      assertReady(node, 200, "ready", "disconnected", "writable");

      pg = EmbeddedPostgres.builder().setDataDirectory(pgDir).setCleanDataDirectory(false).setPort(port).start();
      Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
          .until(() -> node.get("/health/ready").json().getString("database").equals("connected"));
      assertReady(node, 200, "ready", "connected", "writable");
    } finally {
      pg.close();
    }
  }

  @Test
  void readinessNeedsNoCredentialsWhenAuthIsOn() {
    try (var node = TestNode.start(Map.of("JWT_ENABLED", "true", "JWT_SECRET", "readiness-test-secret-0123456789ab"))) {
      assertThat(node.get("/api/v1/resources/queues").status()).isEqualTo(401);
      assertReady(node, 200, "ready", "connected", "writable");
    }
  }

  /** KiB to write so that less than the readiness minimum stays free on the disk. */
  private static int fillerKib(TinyDisk disk) throws Exception {
    long free = Files.getFileStore(disk.dir()).getUsableSpace();
    return (int) ((free - HealthRoutes.SPOOL_MIN_FREE_BYTES / 2) / 1024);
  }

  private static void assertReady(TestNode node, int status, String state, String database, String spool) {
    var r = node.get("/health/ready");
    assertThat(r.status()).as(r.body()).isEqualTo(status);
    JsonObject b = r.json();
    assertThat(b.getString("status")).isEqualTo(state);
    assertThat(b.getString("database")).isEqualTo(database);
    assertThat(b.getString("spool")).isEqualTo(spool);
    assertThat(b.getString("version")).isEqualTo(Config.VERSION);
  }
}
