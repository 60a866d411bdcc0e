package io.queenvertx.boot;

import io.queenvertx.kernel.Config;
import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.TestNode;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;

class NodeBootIT {
  @Test
  void twoNodesBootingAtOnceAgainstOneEmptyDatabaseBothComeUp() throws Exception {
    var db = TestDatabase.get().empty();
    var pool = Executors.newFixedThreadPool(2);
    try {
      var a = CompletableFuture.supplyAsync(() -> TestNode.start(Map.of(), db), pool);
      var b = CompletableFuture.supplyAsync(() -> TestNode.start(Map.of(), db), pool);
      try (var na = a.get(); var nb = b.get()) {
        assertThat(na.get("/health").status()).isEqualTo(200);
        assertThat(nb.get("/health").status()).isEqualTo(200);
        assertThat(TestDatabase.queryLong(db, "SELECT count(*) FROM queen.schema_history WHERE success"))
            .isGreaterThanOrEqualTo(1);
        assertThat(TestDatabase.queryLong(db,
            "SELECT count(*) - count(DISTINCT version) FROM queen.schema_history WHERE version IS NOT NULL"))
            .isZero();
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void anEmbeddedNodeRestartsHealthyOnTheSameDataFolder() throws Exception {
    var dir = Files.createTempDirectory("queen-embedded");
    var env = Map.of("QUEEN_DATA_DIR", dir.toString(), "FILE_BUFFER_DIR", dir.resolve("spool").toString(),
        "QUEEN_EMBEDDED_PG_SHARED_BUFFERS_MB", "144");
    try (var first = TestNode.startEmbedded(env)) {
      assertThat(first.get("/health").status()).isEqualTo(200);
    }
    assertThat(dir.resolve("pg/PG_VERSION")).exists();
    // the server was started with the configured buffer pool (PostgreSQL records its command line here)
    assertThat(Files.readString(dir.resolve("pg/postmaster.opts"))).contains("shared_buffers=144MB");
    try (var second = TestNode.startEmbedded(env)) {
      assertThat(second.get("/health").status()).isEqualTo(200);
    }
  }

  @Test
  void healthIs503WithoutAnErrorKeyWhenTheDatabaseIsDown() throws Exception {
    var pg = EmbeddedPostgres.builder().start();
    var db = new Config.Database("127.0.0.1", pg.getPort(), "postgres", "postgres", "postgres", false);
    try (var node = TestNode.start(Map.of(), db)) {
      assertThat(node.get("/health").status()).isEqualTo(200);
      pg.close();
      var r = node.get("/health");
      assertThat(r.status()).isEqualTo(503);
      var j = r.json();
      assertThat(j.getString("status")).isEqualTo("unhealthy");
      assertThat(j.getString("database")).isEqualTo("disconnected");
      assertThat(j.fieldNames()).doesNotContain("error");
      assertThat(List.of(j.getString("version"))).doesNotContainNull();
      // a probe sending HEAD sees the same 503 (not the dashboard's page)
      var head = node.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(node.baseUrl() + "/health"))
          .method("HEAD", java.net.http.HttpRequest.BodyPublishers.noBody()), Map.of());
      assertThat(head.status()).isEqualTo(503);
      assertThat(head.header("content-type")).startsWith("application/json");
    }
  }
}
