package io.queenvertx.http.routes;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.bus.Addresses;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What {@code POST /api/v1/stats/refresh} answers for each outcome of its event-bus request, on a real (unclustered)
 * Vert.x event bus: a flusher that replies, none registered, and one that fails.
 */
class StatsRefreshTest {
  Vertx vertx;

  @BeforeEach
  void start() {
    vertx = Vertx.vertx();
  }

  @AfterEach
  void stop() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  JsonObject refresh() throws Exception {
    return StatsRoutes.refresh(vertx).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  @Test
  void aReplyingFlusherGivesItsRowCounts() throws Exception {
    var c = vertx.eventBus().<JsonObject>consumer(Addresses.STATS_FLUSH,
        m -> m.reply(new JsonObject().put("flushedNodeRows", 2).put("flushedQueueRows", 7)));
    c.completion().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    JsonObject j = refresh();
    assertThat(j.getBoolean("success")).isTrue();
    assertThat(j.getBoolean("flushed")).isTrue();
    assertThat(j.getLong("flushedNodeRows")).isEqualTo(2);
    assertThat(j.getLong("flushedQueueRows")).isEqualTo(7);
    assertThat(j.getString("timestamp")).endsWith("Z");
  }

  @Test
  void noFlusherIsSuccessWithFlushedFalse() throws Exception {
    JsonObject j = refresh();
    assertThat(j.getBoolean("success")).isTrue();
    assertThat(j.getBoolean("flushed")).isFalse();
    assertThat(j.getString("reason")).isEqualTo("no stats flusher is registered");
  }

  @Test
  void aFailingFlusherSaysWhy() throws Exception {
    var c = vertx.eventBus().<JsonObject>consumer(Addresses.STATS_FLUSH, m -> m.fail(500, "database down"));
    c.completion().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    JsonObject j = refresh();
    assertThat(j.getBoolean("flushed")).isFalse();
    assertThat(j.getString("reason")).isEqualTo("the stats flush failed: database down");
  }
}
