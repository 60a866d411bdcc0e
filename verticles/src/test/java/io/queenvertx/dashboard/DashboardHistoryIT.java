package io.queenvertx.dashboard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.TestNode;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Issue 38: the overview's throughput chart draws the last hour from the broker's per-minute history
 * ({@code /api/v1/analytics/workload}), so traffic from before the page was opened is on it, on a time axis of the
 * last hour labelled with the browser's zone. On a database of its own, so the history is this class's alone; the
 * first test counts exactly what it pushed, so it runs first.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DashboardHistoryIT {
  @NodeFixture(freshDatabase = true)
  static TestNode node;

  @BrowserFixture
  static Browser browser;

  /** The browser's zone as the dashboard names it (en-US short names: EST in winter, EDT in summer). */
  static String zone() {
    return ZonedDateTime.now(ZoneId.of(Browser.ZONE)).format(DateTimeFormatter.ofPattern("zzz", Locale.US));
  }

  static String attr(String css, String name) {
    return (String) browser.js("const e = document.querySelector(arguments[0]); return e && e.getAttribute(arguments[1])",
        css, name);
  }

  /** What the chart's uPlot holds: its data, its x scale and the x axis's drawn tick labels and label. */
  @SuppressWarnings("unchecked")
  static Map<String, Object> chart() {
    return (Map<String, Object>) browser.js("const u = document.getElementById('throughput-chart').__uplot;"
        + "return {xs: u.data[0], push: u.data[1], min: u.scales.x.min, max: u.scales.x.max,"
        + " ticks: u.axes[0]._values, label: u.axes[0].label}");
  }

  static void push(String queue, int n, String prefix) {
    JsonArray items = new JsonArray();
    for (int i = 0; i < n; i++) {
      items.add(new JsonObject().put("queue", queue).put("transactionId", prefix + "-" + i)
          .put("payload", new JsonObject().put("n", i)));
    }
    var r = node.post("/api/v1/push", new JsonObject().put("items", items));
    assertThat(r.status()).as(r.body()).isEqualTo(201);
  }

  static void flushStats() {
    var r = node.post("/api/v1/stats/refresh", new JsonObject());
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.json().getBoolean("flushed")).as(r.body()).isTrue();
  }

  @Test
  @Order(1)
  void theChartShowsTrafficPushedBeforeThePageWasOpened() {
    push("history-orders", 1000, "h");
    flushStats();
    browser.page("");
    browser.until(d -> "1000".equals(attr("#throughput-chart", "data-history-pushed")));
    var c = chart();
    // drawn: a non-zero push rate among the chart's points
    assertThat((List<?>) c.get("push")).anySatisfy(v -> assertThat(((Number) v).doubleValue()).isPositive());
    // the x axis is the last hour up to now, in times of day, labelled with the browser's zone
    double min = ((Number) c.get("min")).doubleValue();
    double max = ((Number) c.get("max")).doubleValue();
    assertThat(max - min).isCloseTo(3600.0, within(1.0));
    assertThat(max * 1000).isCloseTo(System.currentTimeMillis(), within(60_000.0));
    assertThat((List<?>) c.get("ticks")).isNotEmpty().allSatisfy(t -> assertThat((String) t).matches("\\d\\d:\\d\\d"));
    assertThat(c.get("label")).isEqualTo("local time (" + zone() + ")");
  }

  @Test
  @Order(2)
  void anHourOfHistoryIsDrawnAcrossTheChart() {
    // a few real queues, a consumer group behind on one of them, and an hour of per-minute figures for them written
    // through the flush procedure the nodes use (as other nodes would have), so the chart has a whole hour to draw
    for (String q : new String[] {"orders", "billing.invoices", "emails.welcome"}) push(q, 40, q);
    var popped = node.get("/api/v1/pop/queue/orders?consumerGroup=reporting&subscriptionMode=all&batch=5&autoAck=true");
    assertThat(popped.status()).isEqualTo(200);
    TestDatabase.execute(Fixtures.db(node), "UPDATE queen.log_segments SET created_at = created_at - interval '4 minutes'");
    long now = System.currentTimeMillis() / 60_000;
    JsonArray rows = new JsonArray();
    for (int i = 60; i >= 1; i--) {
      long push = Math.round(900 + 500 * Math.sin(i / 7.0));
      long pop = Math.round(push * (0.9 + 0.1 * Math.cos(i / 5.0)));
      rows.add(new JsonObject().put("m", now - i).put("tenant", "00000000-0000-0000-0000-000000000001")
          .put("queue", "orders").put("push_requests", push / 10).put("push_messages", push).put("pop_messages", pop)
          .put("ack_success", pop - i % 4).put("ack_failed", i % 4).put("dlq_messages", i % 9 == 0 ? 3 : 0));
    }
    TestDatabase.queryString(Fixtures.db(node), "SELECT queen.stats_flush('node-b', 'h', '[]', '"
        + rows.encode() + "')::text");
    browser.page("");
    browser.until(d -> attr("#throughput-chart", "data-history-points") != null
        && Integer.parseInt(attr("#throughput-chart", "data-history-points")) >= 60);
    var c = chart();
    double first = ((Number) ((List<?>) c.get("xs")).get(0)).doubleValue();
    assertThat(first * 1000).as("the first point is about an hour old")
        .isCloseTo(System.currentTimeMillis() - 3_540_000.0, within(120_000.0));
    browser.waitText("#lagging-section", "reporting");
    browser.waitFor("tr[data-queue='orders'] td.depth");
    browser.waitText("#rates", "now on this node");
    browser.screenshot("overview");
  }
}
