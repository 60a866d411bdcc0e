package io.queenvertx.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class MetricsIT {
  @NodeFixture
  static TestNode node;
  /** One exposition sample line: name, optional labels, a float value. */
  static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{.*\\})? (-?[0-9.eE+-]+|NaN|[+-]Inf)$");

  static Map<String, Double> parse(String text) {
    Map<String, Double> samples = new HashMap<>();
    for (String line : text.split("\n")) {
      if (line.isEmpty() || line.startsWith("#")) continue;
      var m = SAMPLE.matcher(line);
      assertThat(m.matches()).as("exposition line: " + line).isTrue();
      samples.put(m.group(1) + (m.group(2) == null ? "" : m.group(2)), Double.parseDouble(m.group(3)
          .replace("+Inf", "Infinity").replace("-Inf", "-Infinity")));
    }
    return samples;
  }

  @Test
  void prometheusTextParsesAndCarriesTheBrokerSeries() {
    String q = "metrics-" + UUID.randomUUID();
    node.post("/api/v1/push", new JsonObject().put("items", new JsonArray()
        .add(new JsonObject().put("queue", q).put("payload", 1)).add(new JsonObject().put("queue", q).put("payload", 2))));
    var r = node.get("/metrics/prometheus");
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.header("content-type")).isEqualTo("text/plain; version=0.0.4; charset=utf-8");
    assertThat(r.header("cache-control")).isEqualTo("no-cache");
    var samples = parse(r.body());
    assertThat(samples.get("queen_messages_pushed_total")).isGreaterThanOrEqualTo(2.0);
    assertThat(samples).containsKeys("queen_messages_popped_total", "queen_messages_acked_total",
        "queen_messages_dead_lettered_total", "queen_parked_long_polls", "queen_segment_cache_hits",
        "queen_file_buffer_pending", "queen_dlq_depth{scope=\"cluster\"}", "queen_maintenance_mode_enabled");
    assertThat(samples.get("queen_queue_depth{queue=\"" + q + "\"}")).isEqualTo(2.0);
    assertThat(samples.keySet()).anyMatch(k -> k.startsWith("vertx_http_server_requests_total"));
    // The push path's own timings: one request answered, at least one log write carrying at least one segment.
    assertThat(samples.get("queen_push_request_seconds_count")).isGreaterThanOrEqualTo(1.0);
    assertThat(samples.get("queen_push_write_seconds_count")).isGreaterThanOrEqualTo(1.0);
    assertThat(samples.get("queen_push_write_seconds_sum")).isGreaterThan(0.0);
    assertThat(samples.get("queen_push_write_segments_sum"))
        .isGreaterThanOrEqualTo(samples.get("queen_push_write_segments_count"));
  }

  @Test
  void metricsJsonHasQueensShape() {
    var j = node.get("/metrics").json();
    assertThat(j.fieldNames()).contains("uptime", "requests", "messages", "database", "memory", "cpu");
    assertThat(j.getJsonObject("database").getInteger("poolSize")).isEqualTo(16);
  }
}
