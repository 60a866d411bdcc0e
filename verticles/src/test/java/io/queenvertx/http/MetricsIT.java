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

  /** Every field of /metrics comes from a source: no field is a constant, the ones we cannot compute are absent. */
  /** VmRSS of this JVM (the test node runs in it), in bytes. */
  static long vmRss() throws Exception {
    for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/self/status"))) {
      if (line.startsWith("VmRSS:")) return Long.parseLong(line.substring(6).trim().split("\\s+")[0]) * 1024;
    }
    throw new AssertionError("no VmRSS line");
  }

  @Test
  void metricsJsonFieldsAreComputed() throws Exception {
    var before = node.get("/metrics").json();
    String q = "metrics-json-" + UUID.randomUUID();
    for (int i = 0; i < 5; i++) {
      assertThat(node.post("/api/v1/push", new JsonObject().put("items", new JsonArray()
          .add(new JsonObject().put("queue", q).put("payload", i)).add(new JsonObject().put("queue", q)
              .put("payload", -i)))).status()).isEqualTo(201);
    }
    long rssLow = vmRss();
    var j = node.get("/metrics").json();
    long rssHigh = vmRss();
    // counters: 5 push requests carrying 10 messages since the first read, and a rate that saw them
    assertThat(j.getJsonObject("requests").getLong("total"))
        .isGreaterThanOrEqualTo(before.getJsonObject("requests").getLong("total") + 5);
    assertThat(j.getJsonObject("messages").getLong("total"))
        .isGreaterThanOrEqualTo(before.getJsonObject("messages").getLong("total") + 10);
    assertThat(j.getJsonObject("requests").getDouble("rate")).isGreaterThan(0.0);
    assertThat(j.getJsonObject("messages").getDouble("rate")).isGreaterThan(0.0);
    // memory: RSS is the process's resident memory, which holds the used heap and more; external is NIO buffers
    var mem = j.getJsonObject("memory");
    assertThat(mem.getLong("rss")).isGreaterThan(mem.getLong("heapUsed"))
        .isBetween(rssLow * 9 / 10, rssHigh * 11 / 10);
    assertThat(mem.getLong("heapTotal")).isGreaterThanOrEqualTo(mem.getLong("heapUsed"));
    assertThat(mem.getLong("heapUsed")).isGreaterThan(0L);
    assertThat(mem.fieldNames()).contains("external").doesNotContain("arrayBuffers");
    // CPU: this JVM has spent time in user mode, and user + system never goes backwards
    var cpu = j.getJsonObject("cpu");
    var cpu0 = before.getJsonObject("cpu");
    assertThat(cpu.getLong("user")).isGreaterThan(0L);
    assertThat(cpu.getLong("user") + cpu.getLong("system"))
        .isGreaterThanOrEqualTo(cpu0.getLong("user") + cpu0.getLong("system"));
    // database: the Vert.x pool's own gauges, matching the Prometheus series of the same pool; no idle count
    var db = j.getJsonObject("database");
    assertThat(db.fieldNames()).contains("waitingRequests", "activeConnections").doesNotContain("idleConnections");
    assertThat(db.getLong("activeConnections")).isBetween(0L, 16L);
    var samples = parse(node.get("/metrics/prometheus").body());
    assertThat(samples.keySet()).anyMatch(k -> k.startsWith("vertx_pool_queue_pending") && k.contains("sql"));
    assertThat(samples.keySet()).anyMatch(k -> k.startsWith("vertx_pool_in_use") && k.contains("sql"));
  }
}
