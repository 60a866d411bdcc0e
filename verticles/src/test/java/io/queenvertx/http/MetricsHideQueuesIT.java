package io.queenvertx.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queenvertx.kernel.Config;
import io.queenvertx.kernel.ConfigException;
import io.queenvertx.testing.TestNode;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 18, item 9: {@code QUEEN_METRICS_HIDE_QUEUES} keeps queue names off the public metrics pages, which then
 * carry totals over all queues instead; it is on by default when {@code QUEEN_TENANCY_HEADER} is on.
 */
class MetricsHideQueuesIT {
  static TestNode node;

  @BeforeAll
  static void start() {
    node = TestNode.start(Map.of("QUEEN_METRICS_HIDE_QUEUES", "true"));
  }

  @AfterAll
  static void stop() {
    node.close();
  }

  @Test
  void noQueueNameOnThePublicPagesButTheTotalsAreThere() {
    String q = "hidden-" + UUID.randomUUID();
    var push = node.post("/api/v1/push", new JsonObject().put("items", new JsonArray()
        .add(new JsonObject().put("queue", q).put("payload", 1)).add(new JsonObject().put("queue", q).put("payload", 2))));
    assertThat(push.status()).as(push.body()).isEqualTo(201);
    // a pop through the HTTP layer too, so that no route-labelled series can name the queue either
    assertThat(node.get("/api/v1/pop/queue/" + q + "?batch=1").status()).isEqualTo(200);

    var prom = node.get("/metrics/prometheus");
    assertThat(prom.status()).isEqualTo(200);
    assertThat(prom.body()).doesNotContain(q).doesNotContain("{queue=").doesNotContain("queen_dlq_depth_by_queue");
    var samples = MetricsIT.parse(prom.body());
    // other tests' queues share the database: the total is at least this queue's two messages (one leased, not acked)
    assertThat(samples.get("queen_queue_depth{scope=\"cluster\"}")).isGreaterThanOrEqualTo(2.0);
    assertThat(samples).containsKeys("queen_queue_lag_seconds{scope=\"cluster\"}", "queen_dlq_depth{scope=\"cluster\"}",
        "queen_messages_pushed_total", "queen_http_connections");

    var json = node.get("/metrics");
    assertThat(json.status()).isEqualTo(200);
    assertThat(json.body()).doesNotContain(q);
  }

  @Test
  void hidingDefaultsToTheTenancySwitchAndCanBeSetEitherWay() {
    assertThat(Config.from(Map.of()).exposure().hideQueueMetrics()).isFalse();
    assertThat(Config.from(Map.of("QUEEN_TENANCY_HEADER", "true")).exposure().hideQueueMetrics()).isTrue();
    assertThat(Config.from(Map.of("QUEEN_TENANCY_HEADER", "true", "QUEEN_METRICS_HIDE_QUEUES", "false"))
        .exposure().hideQueueMetrics()).isFalse();
    assertThat(Config.from(Map.of("QUEEN_METRICS_HIDE_QUEUES", "on")).exposure().hideQueueMetrics()).isTrue();
  }

  @Test
  void connectionLimitSettingsParseWithDefaults() {
    var d = Config.from(Map.of()).exposure();
    assertThat(d.idleTimeoutS()).isEqualTo(60);
    assertThat(d.headerTimeoutMs()).isEqualTo(10_000);
    assertThat(d.maxConnections()).isGreaterThanOrEqualTo(64);
    var set = Config.from(Map.of("QUEEN_HTTP_IDLE_TIMEOUT_S", "5", "QUEEN_HTTP_HEADER_TIMEOUT_MS", "250",
        "QUEEN_HTTP_MAX_CONNECTIONS", "100")).exposure();
    assertThat(set.idleTimeoutS()).isEqualTo(5);
    assertThat(set.headerTimeoutMs()).isEqualTo(250);
    assertThat(set.maxConnections()).isEqualTo(100);
    var off = Config.from(Map.of("QUEEN_HTTP_IDLE_TIMEOUT_S", "0", "QUEEN_HTTP_MAX_CONNECTIONS", "0")).exposure();
    assertThat(off.idleTimeoutS()).isZero();
    assertThat(off.maxConnections()).isZero();
    // a negative value is out of range: the boot stops (it used to be clamped to "off")
    assertThatThrownBy(() -> Config.from(Map.of("QUEEN_HTTP_IDLE_TIMEOUT_S", "-3")))
        .isInstanceOf(ConfigException.class).hasMessageContaining("QUEEN_HTTP_IDLE_TIMEOUT_S");
  }
}
