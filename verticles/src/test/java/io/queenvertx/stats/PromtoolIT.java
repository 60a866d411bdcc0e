package io.queenvertx.stats;

import static io.queenvertx.testing.Wire.item;
import static io.queenvertx.testing.Wire.push;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.queenvertx.bus.Addresses;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 20 item 5: {@code promtool check metrics} on a real node's whole exposition, with traffic behind every
 * family of the database block (a queue whose name needs escaping, a consumer group, dead letters, a closed minute).
 * Needs {@code promtool} on the PATH (Debian: {@code apt-get install prometheus}; .ci/run installs it).
 */
class PromtoolIT {
  static TestNode strict;
  static TestNode queen;
  static String odd;

  @BeforeAll
  static void traffic() throws Exception {
    strict = TestNode.start(Map.of("QUEEN_METRICS_BASE_UNITS", "true"));
    queen = TestNode.start(Map.of());
    odd = "promtool-\"q\\" + Wire.shortId();
    assertThat(push(strict, item(odd, null, 1, "a"), item(odd, null, 2, "b")).status()).isEqualTo(201);
    assertThat(strict.get(Wire.popPath(odd.replace("\\", "%5C").replace("\"", "%22"), null, "g", "")).status())
        .isEqualTo(200);
    String d = Wire.queue("promtool-dlq");
    Wire.retryLimitZero(strict, Wire.NONE, d);
    Wire.deadLetter(strict, d, null, 1, "x", null, "bad");
    strict.node().vertx().eventBus().request(Addresses.STATS_FLUSH, new JsonObject())
        .toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    // a closed minute for the odd queue, so the per-minute families have a sample
    String rows = "[{\"m\":" + (System.currentTimeMillis() / 60_000 - 2) + ",\"tenant\":\"" + Wire.DEFAULT_TENANT
        + "\",\"queue\":" + new io.vertx.core.json.JsonArray().add(odd).encode().replaceAll("^\\[|\\]$", "")
        + ",\"pop_messages\":1,\"pop_lag_ms_sum\":5,\"pop_lag_ms_max\":5}]";
    Wire.execute("SELECT queen.stats_flush('promtool-node', 'h', '[]', '" + rows.replace("'", "''") + "')");
  }

  @AfterAll
  static void stop() {
    strict.close();
    queen.close();
  }

  /** promtool's exit code and its combined output for the exposition on stdin. */
  static Map.Entry<Integer, String> promtool(String exposition) throws Exception {
    Process p;
    try {
      p = new ProcessBuilder("promtool", "check", "metrics").redirectErrorStream(true).start();
    } catch (IOException e) {
      return fail("promtool is not installed (it comes with Debian's `prometheus` package: "
          + "apt-get install -y prometheus; .ci/run installs it when missing): " + e.getMessage());
    }
    try (var in = p.getOutputStream()) {
      in.write(exposition.getBytes(StandardCharsets.UTF_8));
    }
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("promtool finished").isTrue();
    return Map.entry(p.exitValue(), out);
  }

  @Test
  void theWholeExpositionPassesPromtoolWithBaseUnits() throws Exception {
    String body = strict.get("/metrics/prometheus").body();
    assertThat(body).contains("queen_queue_pop_lag_seconds{", "queen_consumer_group_lag_messages{",
        "queen_dlq_depth_by_queue{", "queen_cluster_push_requests_total{", "queen_queue_push_messages_per_minute{",
        "jvm_compilation_time_seconds_total", "process_cpu_time_seconds_total", "system_cpus ",
        "queen_queue_depth{queue=\"promtool-\\\"q\\\\");
    var r = promtool(body);
    assertThat(r.getValue()).as("promtool output").isEmpty();
    assertThat(r.getKey()).as("promtool exit code").isZero();
  }

  @Test
  void queensOwnNameForThePopLagIsPromtoolsOnlyComplaint() throws Exception {
    String body = queen.get("/metrics/prometheus").body();
    assertThat(body).contains("queen_queue_pop_lag_milliseconds{");
    var r = promtool(body);
    // API.md §5.1 names the family in milliseconds; promtool's lint wants base units (QUEEN_METRICS_BASE_UNITS)
    assertThat(r.getValue().lines().toList()).isEqualTo(List.of(
        "queen_queue_pop_lag_milliseconds use base unit \"seconds\" instead of \"milliseconds\""));
  }
}
