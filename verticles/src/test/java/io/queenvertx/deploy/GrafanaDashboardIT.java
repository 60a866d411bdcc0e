package io.queenvertx.deploy;

import static io.queenvertx.testing.Wire.item;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.queenvertx.bus.Addresses;
import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * deploy/grafana/dashboards/queen-vertx.json asks only for series a node exports: every PromQL expression of the
 * dashboard (panel targets and template-variable queries) is reduced to the metric names it selects, and each must be
 * a series of a real node's {@code /metrics/prometheus} after traffic behind every family (pushes, pops, acks, a
 * consumer group, dead letters, a closed minute of per-queue statistics).
 */
class GrafanaDashboardIT {
  static final String DASHBOARD = "deploy/grafana/dashboards/queen-vertx.json";
  private static final Pattern IDENT = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");
  private static final Set<String> KEYWORDS = Set.of("by", "without", "on", "ignoring", "group_left", "group_right",
      "bool", "and", "or", "unless", "offset", "inf", "nan");

  @NodeFixture
  static TestNode node;

  /** The metric names a PromQL expression selects. */
  static Set<String> metricNames(String promql) {
    String e = promql.replaceAll("\"(?:[^\"\\\\]|\\\\.)*\"", "\"\"")   // string literals (label values)
        .replaceAll("\\{[^}]*}", " ")                                     // label matchers
        .replaceAll("\\[[^]]*]", " ")                                     // ranges and subqueries
        .replaceAll("\\b(?:by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)", " ");
    Set<String> names = new TreeSet<>();
    Matcher m = IDENT.matcher(e);
    while (m.find()) {
      String id = m.group();
      int after = m.end();
      while (after < e.length() && Character.isWhitespace(e.charAt(after))) after++;
      boolean call = after < e.length() && e.charAt(after) == '(';
      char before = m.start() > 0 ? e.charAt(m.start() - 1) : ' ';
      boolean partOfNumber = Character.isDigit(before) || before == '.';
      if (!call && !partOfNumber && !KEYWORDS.contains(id.toLowerCase(java.util.Locale.ROOT))) names.add(id);
    }
    return names;
  }

  /** expression -> where in the dashboard it is; template variables' label_values(metric, label) give the metric. */
  static TreeMap<String, String> expressions() throws Exception {
    JsonNode d = Repo.JSON.readTree(Repo.file(DASHBOARD).toFile());
    TreeMap<String, String> out = new TreeMap<>();
    for (JsonNode panel : d.findValues("panels").stream().flatMap(p -> toList(p).stream()).toList()) {
      for (JsonNode t : toList(panel.path("targets"))) {
        if (t.hasNonNull("expr")) out.put(t.get("expr").asText(), "panel " + panel.path("title").asText());
      }
    }
    for (JsonNode v : toList(d.path("templating").path("list"))) {
      JsonNode q = v.path("query");
      String text = q.isObject() ? q.path("query").asText() : q.asText();
      Matcher m = Pattern.compile("label_values\\(\\s*([^,)]+)").matcher(text);
      if (m.find()) out.put(m.group(1).strip(), "variable " + v.path("name").asText());
      else if (!text.isBlank()) out.put(text, "variable " + v.path("name").asText());
    }
    return out;
  }

  private static java.util.List<JsonNode> toList(JsonNode array) {
    java.util.List<JsonNode> l = new java.util.ArrayList<>();
    array.forEach(l::add);
    return l;
  }

  /** The series names of the node's exposition. */
  static Set<String> exported() {
    var r = node.get("/metrics/prometheus");
    assertThat(r.status()).isEqualTo(200);
    Set<String> names = new TreeSet<>();
    for (String line : r.body().split("\n")) {
      if (line.isBlank() || line.startsWith("#")) continue;
      Matcher m = IDENT.matcher(line);
      if (m.lookingAt()) names.add(m.group());
    }
    return names;
  }

  @Test
  void theExtractorFindsMetricNamesAndNothingElse() {
    assertThat(metricNames("topk(10, max by (queue, group) (queen_consumer_group_lag_messages{queue=~\"$queue\"}))"
        + " / on(queue) group_left sum without (stat) (rate(queen_x_total{a=\"b{c}\"}[$__rate_interval] offset 5m))"
        + " > bool 1e3 + 0.5"))
        .containsExactly("queen_consumer_group_lag_messages", "queen_x_total");
  }

  @Test
  void everyQueryOfTheDashboardNamesASeriesTheNodeExports() throws Exception {
    traffic();
    Set<String> exported = exported();
    TreeMap<String, String> missing = new TreeMap<>();
    Set<String> asked = new TreeSet<>();
    for (var e : expressions().entrySet()) {
      Set<String> names = metricNames(e.getKey());
      assertThat(names).as("%s selects no metric: %s", e.getValue(), e.getKey()).isNotEmpty();
      for (String n : names) {
        asked.add(n);
        if (!exported.contains(n)) missing.put(n, e.getValue());
      }
    }
    assertThat(asked).as("metric names the dashboard asks for").hasSizeGreaterThan(20);
    assertThat(missing).as("dashboard series the node does not export (name -> where)").isEmpty();
  }

  /** Traffic behind every family the dashboard shows. */
  static void traffic() throws Exception {
    String q = Wire.queue("grafana");
    Wire.push(node, item(q, null, 1, "a"), item(q, null, 2, "b"), item(q, null, 3, "c"));
    assertThat(node.get(Wire.popPath(q, null, "grafana-group", "batch=1&autoAck=true")).status()).isEqualTo(200);
    var pop = Wire.popSome(node, q, "batch=1&wait=false");
    Wire.ackOne(node, Wire.ack(Wire.messages(pop).get(0).getString("transactionId"), pop.getString("partitionId"),
        "completed", pop.getString("leaseId")));
    String d = Wire.queue("grafana-dlq");
    Wire.retryLimitZero(node, Wire.NONE, d);
    Wire.deadLetter(node, d, null, 1, "x", null, "bad");
    node.node().vertx().eventBus().request(Addresses.STATS_FLUSH, new JsonObject())
        .toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    // a closed minute for the queue, so the per-minute families have a sample
    String rows = new JsonArray().add(new JsonObject().put("m", System.currentTimeMillis() / 60_000 - 2)
        .put("tenant", Wire.DEFAULT_TENANT).put("queue", q).put("push_requests", 1).put("push_messages", 3)
        .put("pop_messages", 2).put("pop_empty", 1).put("pop_lag_ms_sum", 5).put("pop_lag_ms_max", 5)
        .put("ack_success", 1).put("ack_failed", 1).put("parked_consumers", 1)).encode();
    Wire.execute("SELECT queen.stats_flush('grafana-node', 'h', '[]', '" + rows.replace("'", "''") + "')");
  }
}
