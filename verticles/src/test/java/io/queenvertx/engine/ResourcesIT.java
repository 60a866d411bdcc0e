package io.queenvertx.engine;

import static io.queenvertx.testing.Wire.pop;
import static io.queenvertx.testing.Wire.pushQueued;
import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.TestNode.Reply;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

/** The queue resources routes (API.md §5.8): list, detail, delete. */
class ResourcesIT {
  @NodeFixture
  static TestNode node;

  @Test
  void theQueueListIncludesAPushedQueue() {
    String q = Wire.queue("res-list");
    pushQueued(node, q, null, 1, "l0");
    pushQueued(node, q, "second", 2, "l1");
    Reply r = node.get("/api/v1/resources/queues");
    assertThat(r.status()).isEqualTo(200);
    JsonArray queues = r.json().getJsonArray("queues");
    assertThat(queues).isNotNull();
    JsonObject mine = queues.stream().map(o -> (JsonObject) o).filter(o -> q.equals(o.getString("name")))
        .findFirst().orElseThrow(() -> new AssertionError(q + " not listed in " + r.body()));
    assertThat(mine.getString("id")).isEqualTo(
        Wire.rows("SELECT id::text AS id FROM queen.queues WHERE name = '" + q + "'").get(0).get("id"));
    assertThat(mine.getInteger("partitions")).isEqualTo(2);
  }

  @Test
  void aMissingQueueDetailIs404QueueNotFound() {
    Reply r = node.get("/api/v1/resources/queues/" + Wire.queue("res-missing"));
    assertThat(r.status()).isEqualTo(404);
    assertThat(r.json()).isEqualTo(io.queenvertx.testing.Wire.error(404, "Queue not found"));
  }

  @Test
  void anExistingQueueDetailNamesItsPartitionsAndOptions() {
    String q = Wire.queue("res-detail");
    pushQueued(node, q, "alpha", 1, "d0");
    Reply r = node.get("/api/v1/resources/queues/" + q);
    assertThat(r.status()).isEqualTo(200);
    JsonObject j = r.json();
    assertThat(j.getString("name")).isEqualTo(q);
    assertThat(j.getJsonObject("options")).isNotNull();
    assertThat(j.getJsonObject("options").getInteger("leaseTime")).as("a push-created queue: lease 60").isEqualTo(60);
    assertThat(j.getJsonArray("partitions").stream().map(o -> ((JsonObject) o).getString("name")))
        .containsExactly("alpha");
  }

  @Test
  void deletingAnExistingQueueAnswersDeletedAndRemovesItsData() {
    String q = Wire.queue("res-delete");
    pushQueued(node, q, null, 1, "gone-0");
    String pid = Wire.partitionId(q, "Default");
    assertThat(Wire.segments(pid)).isEqualTo(1);
    Reply r = node.delete("/api/v1/resources/queues/" + q);
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.json()).isEqualTo(new JsonObject().put("deleted", true).put("queue", q).put("existed", true));
    assertThat(Wire.queueRows(q)).isZero();
    assertThat(Wire.segments(pid)).isZero();
    assertThat(Wire.count("SELECT count(*) FROM queen.log_partitions WHERE id = '" + pid + "'")).isZero();
    assertThat(node.get("/api/v1/resources/queues/" + q).status()).isEqualTo(404);
    assertThat(pop(node, q, "batch=10").status()).isEqualTo(204);
  }

  @Test
  void aQueueRecreatedAfterDeleteHoldsOnlyNewMessages() {
    String q = Wire.queue("res-recreate");
    pushQueued(node, q, null, 1, "before");
    assertThat(node.delete("/api/v1/resources/queues/" + q).status()).isEqualTo(200);
    JsonObject again = pushQueued(node, q, null, 2, "before");
    assertThat(again.getString("status")).as("the old txn died with the queue").isEqualTo("queued");
    assertThat(Wire.messages(Wire.popSome(node, q, "batch=10"))).extracting(m -> m.getValue("data"))
        .containsExactly(2);
  }

  @Test
  void deletingAMissingQueueIs200DeletedFalseWithAMessage() {
    String q = Wire.queue("res-nodelete");
    Reply r = node.delete("/api/v1/resources/queues/" + q);
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.json()).isEqualTo(new JsonObject().put("deleted", false).put("queue", q).put("existed", false)
        .put("message", "Queue not found, nothing was deleted"));
  }
}
