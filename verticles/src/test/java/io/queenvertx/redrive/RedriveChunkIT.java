package io.queenvertx.redrive;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.TestNode;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/** Bulk redrive without a rate limit moves its rows in chunks: one transaction, one segment per destination (issue 23). */
class RedriveChunkIT {

  @Test
  void withoutMaxPerSecondTenThousandRowsMoveInAFewSegmentsEachExactlyOnce() {
    try (var node = TestNode.start()) {
      String q = RedriveIT.deadLetters(node, 10_000);
      String dst = "rd-chunk-" + UUID.randomUUID();
      var r = node.post("/api/v1/dlq/redrive", new JsonObject().put("queue", q)
          .put("destination", new JsonObject().put("queue", dst)));
      assertThat(r.status()).isEqualTo(201);
      assertThat(r.json().getValue("maxPerSecond")).as("unset is no limit").isNull();
      String id = r.json().getString("taskId");
      Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
          .until(() -> "completed".equals(node.get("/api/v1/dlq/redrive/" + id).json().getString("status")));
      var task = node.get("/api/v1/dlq/redrive/" + id).json();
      assertThat(task.getLong("moved")).isEqualTo(10_000);
      assertThat(task.getLong("duplicate") + task.getLong("gone") + task.getLong("failed")).isZero();
      assertThat(RedriveIT.dlqRows(q)).isZero();
      assertThat(RedriveIT.frames(dst)).isEqualTo(10_000);
      assertThat(TestDatabase.queryLong(RedriveIT.DB, "SELECT count(DISTINCT h) FROM queen.log_segments t JOIN "
          + "queen.log_partitions p ON p.id = t.partition_id JOIN queen.queues q ON q.id = p.queue_id CROSS JOIN "
          + "LATERAL queen.log_unnest_hashes(t.hashes) WHERE q.name = '" + dst + "'")).isEqualTo(10_000);
      // one row at a time would write 10,000 segments; chunks of up to 2,000 rows write one segment each
      long segments = TestDatabase.queryLong(RedriveIT.DB, "SELECT count(*) FROM queen.log_segments s JOIN "
          + "queen.log_partitions p ON p.id = s.partition_id JOIN queen.queues q ON q.id = p.queue_id "
          + "WHERE q.name = '" + dst + "'");
      assertThat(segments).isBetween(5L, 10L);
      // the moved frames are consumable, in the dead letters' order
      var pop = node.get("/api/v1/pop/queue/" + dst + "?batch=3&wait=false");
      assertThat(pop.status()).isEqualTo(200);
      var first = pop.json().getJsonArray("messages").getJsonObject(0);
      assertThat(first.getJsonObject("data").getInteger("n")).isEqualTo(1);
    }
  }
}
