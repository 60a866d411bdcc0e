package io.queenvertx.state;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.TestNode.Reply;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.math.BigDecimal;
import java.net.URI;
import java.net.http.HttpRequest;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Key-value state over HTTP (docs/design/queen2-contract.md §2): every operation, CAS, TTL, paging, limits, tenancy. */
class KvIT {
  @NodeFixture(env = {"QUEEN_TENANCY_HEADER=true"})
  static TestNode node;

  static String ns() {
    return "t" + Wire.shortId().toLowerCase();
  }

  static JsonObject op(String op, String ns, String key) {
    return new JsonObject().put("op", op).put("ns", ns).put("key", key);
  }

  static Reply kv(Map<String, String> h, JsonObject... ops) {
    JsonArray a = new JsonArray();
    for (JsonObject o : ops) a.add(o);
    return node.post("/api/v1/kv", new JsonObject().put("operations", a), h);
  }

  static JsonArray results(JsonObject... ops) {
    Reply r = kv(Map.of(), ops);
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    return r.json().getJsonArray("results");
  }

  @Test
  void everyOperationAnswersInRequestOrder() {
    String ns = ns();
    JsonArray r = results(
        op("put", ns, "b").put("value", new JsonObject().put("n", 1)).put("forever", true),
        op("putIfAbsent", ns, "a").put("value", "first").put("ttlSeconds", 3600),
        op("incr", ns, "c").put("delta", 5).put("forever", true),
        op("get", ns, "b"),
        new JsonObject().put("op", "getMany").put("ns", ns).put("keys", new JsonArray().add("a").add("zz").add("c")),
        new JsonObject().put("op", "getPrefix").put("ns", ns).put("prefix", "a").put("limit", 10),
        new JsonObject().put("op", "getPrefix").put("ns", ns).put("prefix", "b"));
    assertThat(r).hasSize(7);
    for (int i = 0; i < 7; i++) assertThat(r.getJsonObject(i).getInteger("index")).isEqualTo(i);
    assertThat(r.getJsonObject(0).getString("op")).isEqualTo("put");
    assertThat(r.getJsonObject(0).getBoolean("applied")).isTrue();
    long vb = r.getJsonObject(0).getLong("version");
    assertThat(vb).isPositive();
    assertThat(r.getJsonObject(1).getString("op")).isEqualTo("putIfAbsent");
    assertThat(r.getJsonObject(1).getBoolean("applied")).isTrue();
    assertThat(r.getJsonObject(2).getValue("value")).isEqualTo(5);
    JsonObject get = r.getJsonObject(3);
    assertThat(get.getBoolean("found")).isTrue();
    assertThat(get.getJsonObject("value")).isEqualTo(new JsonObject().put("n", 1));
    assertThat(get.getLong("version")).isEqualTo(vb);
    assertThat(get.getString("expiresAt")).isNull();
    assertThat(get.getString("updatedAt")).endsWith("Z");
    JsonObject many = r.getJsonObject(4);
    assertThat(many.getJsonArray("rows")).extracting(o -> ((JsonObject) o).getString("key")).containsExactly("a", "c");
    assertThat(many.getJsonArray("missing")).containsExactly("zz");
    assertThat(many.getJsonArray("rows").getJsonObject(0).getString("expiresAt")).isNotNull();
    JsonObject prefix = r.getJsonObject(5);
    assertThat(prefix.getJsonArray("rows")).extracting(o -> ((JsonObject) o).getString("key"))
        .containsExactly("a");
    assertThat(r.getJsonObject(6).getJsonArray("rows").getJsonObject(0).getJsonObject("value"))
        .isEqualTo(new JsonObject().put("n", 1));
    assertThat(prefix.getBoolean("truncated")).isFalse();

    JsonArray d = results(op("delete", ns, "a"), op("delete", ns, "nope"), op("get", ns, "a"),
        op("check", ns, "b").put("expect", vb), op("check", ns, "b").put("expect", 0),
        op("incr", ns, "c").put("delta", -2).put("min", 0).put("forever", true));
    assertThat(d.getJsonObject(0).getBoolean("applied")).isTrue();
    assertThat(d.getJsonObject(0).getValue("value")).isEqualTo("first");
    assertThat(d.getJsonObject(1).getBoolean("applied")).isFalse();
    assertThat(d.getJsonObject(1).getString("reason")).isEqualTo("absent");
    assertThat(d.getJsonObject(2).getBoolean("found")).isFalse();
    assertThat(d.getJsonObject(3).getBoolean("applied")).isTrue();
    assertThat(d.getJsonObject(3).containsKey("value")).isFalse();
    assertThat(d.getJsonObject(4).getBoolean("applied")).isFalse();
    assertThat(d.getJsonObject(4).getString("reason")).isEqualTo("exists");
    assertThat(d.getJsonObject(5).getValue("value")).isEqualTo(3);
    JsonArray lim = results(op("incr", ns, "c").put("delta", -10).put("min", 0).put("forever", true));
    assertThat(lim.getJsonObject(0).getBoolean("applied")).isFalse();
    assertThat(lim.getJsonObject(0).getString("reason")).isEqualTo("limit");
    assertThat(lim.getJsonObject(0).getValue("value")).isEqualTo(3);
  }

  /** The results of a {@code POST /api/v1/kv} whose operations are written as JSON text (numbers as spelled). */
  static JsonArray rawResults(String... ops) {
    Reply r = node.post("/api/v1/kv", "{\"operations\":[" + String.join(",", ops) + "]}");
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    return r.json().getJsonArray("results");
  }

  static String incr(String ns, String key, String numbers) {
    return "{\"op\":\"incr\",\"ns\":\"" + ns + "\",\"key\":\"" + key + "\",\"forever\":true," + numbers + "}";
  }

  static BigDecimal number(JsonObject result) {
    return new BigDecimal(result.getValue("value").toString());
  }

  @Test
  void incrCountsExactlyBeyondTwoToThe53AndRefusesWhatItCannotCount() {
    String ns = ns();
    // 2^53 + 1 spelled as a decimal and with an exponent: a double holds neither, so each must arrive as its literal
    JsonArray r = rawResults(incr(ns, "c", "\"delta\":9007199254740993.0"), incr(ns, "e", "\"delta\":9.007199254740993e15"),
        "{\"op\":\"put\",\"ns\":\"" + ns + "\",\"key\":\"big\",\"value\":9223372036854775807,\"forever\":true}");
    assertThat(number(r.getJsonObject(0))).isEqualByComparingTo("9007199254740993");
    assertThat(number(r.getJsonObject(1))).isEqualByComparingTo("9007199254740993");
    r = rawResults(incr(ns, "c", "\"delta\":1"), incr(ns, "big", "\"delta\":1"),
        incr(ns, "e", "\"delta\":0.5,\"max\":9007199254740993.0"));
    assertThat(number(r.getJsonObject(0))).isEqualByComparingTo("9007199254740994");
    assertThat(number(r.getJsonObject(1))).as("past a bigint: numeric, never a wrap")
        .isEqualByComparingTo("9223372036854775808");
    assertThat(r.getJsonObject(2).getBoolean("applied")).as("max read exactly: 2^53 + 1.5 > 2^53 + 1").isFalse();
    assertThat(r.getJsonObject(2).getString("reason")).isEqualTo("limit");
    assertThat(number(r.getJsonObject(2))).isEqualByComparingTo("9007199254740993");

    for (String[] c : new String[][] {{"\"delta\":1e300", "delta"}, {"\"delta\":1,\"max\":1e400", "max"},
        {"\"delta\":1,\"min\":-1e999999999999", "min"}, {"\"delta\":1e-101", "delta"}}) {
      Reply bad = node.post("/api/v1/kv", "{\"operations\":[" + incr(ns, "c", c[0]) + "]}");
      assertRefused(bad, 400, "kv_bad_request", "kv_bad_request");
      assertThat(bad.json().getString("detail")).as(c[0]).contains("`" + c[1] + "`");
    }
    assertThat(number(results(op("get", ns, "c")).getJsonObject(0))).as("no refused call moved the counter")
        .isEqualByComparingTo("9007199254740994");
  }

  @Test
  void compareAndSetLosesOnAStaleVersionAndRequiredRollsTheCallBack() {
    String ns = ns();
    long v1 = results(op("put", ns, "k").put("value", 1).put("forever", true)).getJsonObject(0).getLong("version");
    long v2 = results(op("put", ns, "k").put("value", 2).put("forever", true).put("expect", v1))
        .getJsonObject(0).getLong("version");
    assertThat(v2).isGreaterThan(v1);
    JsonObject stale = results(op("put", ns, "k").put("value", 3).put("forever", true).put("expect", v1))
        .getJsonObject(0);
    assertThat(stale.getBoolean("applied")).isFalse();
    assertThat(stale.getString("reason")).isEqualTo("version");
    assertThat(stale.getLong("version")).isEqualTo(v2);
    assertThat(stale.getValue("value")).isEqualTo(2);
    JsonObject lost = results(op("putIfAbsent", ns, "k").put("value", 9).put("forever", true)).getJsonObject(0);
    assertThat(lost.getString("reason")).isEqualTo("exists");

    Reply r = kv(Map.of(), op("put", ns, "other").put("value", "x").put("forever", true),
        op("put", ns, "k").put("value", 4).put("forever", true).put("expect", v1).put("required", true));
    assertThat(r.status()).isEqualTo(200);
    JsonObject env = r.json();
    assertThat(env.getBoolean("ok")).isFalse();
    assertThat(env.getString("reason")).isEqualTo("kv_precondition");
    assertThat(env.getInteger("failedIndex")).isEqualTo(1);
    assertThat(env.getString("kvReason")).isEqualTo("version");
    assertThat(env.getLong("version")).isEqualTo(v2);
    assertThat(results(op("get", ns, "other")).getJsonObject(0).getBoolean("found"))
        .as("the call's other write rolled back").isFalse();
  }

  @Test
  void anEntryIsNeverSeenPastItsDeadline() {
    String ns = ns();
    results(op("put", ns, "ttl").put("value", "soon").put("ttlSeconds", 1));
    JsonObject first = results(op("get", ns, "ttl")).getJsonObject(0);
    assertThat(first.getBoolean("found")).isTrue();
    Instant deadline = Instant.parse(first.getString("expiresAt"));
    while (true) {
      Instant asked = Instant.now();
      JsonObject g = results(op("get", ns, "ttl"), op("putIfAbsent", ns, "ttl-probe").put("value", 1)
          .put("forever", true)).getJsonObject(0);
      if (g.getBoolean("found")) {
        assertThat(asked).as("found at %s, its deadline %s", asked, deadline).isBefore(deadline);
        continue;
      }
      assertThat(Instant.now()).isAfterOrEqualTo(deadline.minusMillis(5));
      break;
    }
    // past the deadline, whether or not the sweep deleted it: absent for every operation
    JsonArray after = results(op("get", ns, "ttl"), op("check", ns, "ttl").put("expect", 0),
        new JsonObject().put("op", "getPrefix").put("ns", ns).put("prefix", "ttl"));
    assertThat(after.getJsonObject(0).getBoolean("found")).isFalse();
    assertThat(after.getJsonObject(1).getBoolean("applied")).isTrue();
    assertThat(after.getJsonObject(2).getJsonArray("rows")).extracting(o -> ((JsonObject) o).getString("key"))
        .containsExactly("ttl-probe");
    assertThat(results(op("putIfAbsent", ns, "ttl").put("value", "again").put("ttlSeconds", 60)).getJsonObject(0)
        .getBoolean("applied")).as("an expired entry is replaced").isTrue();
  }

  @Test
  void prefixReadsArePagedByKeyset() {
    String ns = ns();
    List<JsonObject> puts = new ArrayList<>();
    for (String k : List.of("p/1", "p/2", "p/3", "p/4", "p/5", "q/1")) {
      puts.add(op("put", ns, k).put("value", k).put("forever", true));
    }
    results(puts.toArray(new JsonObject[0]));
    List<String> seen = new ArrayList<>();
    String after = null;
    int pages = 0;
    while (true) {
      JsonObject o = new JsonObject().put("op", "getPrefix").put("ns", ns).put("prefix", "p/").put("limit", 2);
      if (after != null) o.put("after", after);
      JsonObject page = results(o).getJsonObject(0);
      pages++;
      for (Object row : page.getJsonArray("rows")) seen.add(((JsonObject) row).getString("key"));
      if (!page.getBoolean("truncated")) {
        assertThat(page.getValue("nextAfter")).isNull();
        break;
      }
      after = page.getString("nextAfter");
      assertThat(after).isEqualTo(seen.get(seen.size() - 1));
    }
    assertThat(seen).containsExactly("p/1", "p/2", "p/3", "p/4", "p/5");
    assertThat(pages).isEqualTo(3);

    Reply list = node.post("/api/v1/resources/kv/list", new JsonObject().put("namespace", ns).put("limit", 4));
    assertThat(list.status()).as(list.body()).isEqualTo(200);
    assertThat(list.json().getBoolean("truncated")).isTrue();
    assertThat(list.json().getString("nextAfter")).isEqualTo("p/4");
    assertThat(list.json().getLong("bytes")).isPositive();
    Reply rest = node.post("/api/v1/resources/kv/list", new JsonObject().put("namespace", ns).put("after", "p/4")
        .put("keysOnly", true));
    assertThat(rest.json().getJsonArray("rows")).extracting(o -> ((JsonObject) o).getString("key"))
        .containsExactly("p/5", "q/1");
    assertThat(rest.json().getJsonArray("rows").getJsonObject(0).containsKey("value")).isFalse();
    Reply spaces = node.get("/api/v1/resources/kv/namespaces");
    assertThat(spaces.status()).isEqualTo(200);
    assertThat(spaces.array()).contains(new JsonObject().put("namespace", ns).put("keys", 6).put("keysCapped", false));
    assertThat(node.get("/api/v1/resources/kv/namespaces?x=1").status()).isEqualTo(400);
  }

  @Test
  void thePathRoutesReadWriteAndDeleteOneKey() {
    String ns = ns();
    String path = "/api/v1/kv/" + ns + "/order/9f1/it%20ems";
    Reply put = send("PUT", path, new JsonObject().put("value", new JsonObject().put("a", 1)).put("ttlSeconds", 60));
    assertThat(put.status()).as(put.body()).isEqualTo(200);
    assertThat(put.json().getBoolean("applied")).isTrue();
    assertThat(put.json().getString("key")).isEqualTo("order/9f1/it ems");
    Reply get = node.get(path);
    assertThat(get.status()).isEqualTo(200);
    assertThat(get.json().getBoolean("found")).isTrue();
    assertThat(get.header("ETag")).isEqualTo("\"" + put.json().getLong("version") + "\"");
    assertThat(results(op("get", ns, "order/9f1/it ems")).getJsonObject(0).getBoolean("found")).isTrue();
    Reply stale = send("DELETE", path, new JsonObject().put("expect", put.json().getLong("version") + 1000));
    assertThat(stale.json().getBoolean("applied")).isFalse();
    Reply del = node.delete(path);
    assertThat(del.status()).isEqualTo(200);
    assertThat(del.json().getBoolean("applied")).isTrue();
    assertThat(node.get(path).json().getBoolean("found")).isFalse();
  }

  @Test
  void aValueIsStoredAndReadAsItsTextWasSent() {
    String ns = ns();
    String value = "{\"p\": 1.10, \"big\": 123456789012345678901234567890.5, \"s\": \"\\u0000\"}";
    Reply put = node.post("/api/v1/kv", "{\"operations\":[{\"op\":\"put\",\"ns\":\"" + ns
        + "\",\"key\":\"exact\",\"forever\":true,\"value\":" + value + "}]}");
    assertThat(put.status()).as(put.body()).isEqualTo(200);
    assertThat(node.get("/api/v1/kv/" + ns + "/exact").body()).contains("\"value\":" + value + ",");
    Reply path = send("PUT", "/api/v1/kv/" + ns + "/exact2", new JsonObject().put("forever", true));
    assertThat(path.status()).isEqualTo(400);
    var b = HttpRequest.newBuilder(URI.create(node.baseUrl() + "/api/v1/kv/" + ns + "/exact2"))
        .method("PUT", HttpRequest.BodyPublishers.ofString("{\"forever\":true,\"value\":[2.50]}"))
        .header("Content-Type", "application/json");
    assertThat(node.send(b, Map.of()).status()).isEqualTo(200);
    assertThat(node.get("/api/v1/kv/" + ns + "/exact2").body()).contains("\"value\":[2.50],");
    Reply tx = node.post("/api/v1/transaction", "{\"kv\":[{\"op\":\"put\",\"ns\":\"" + ns
        + "\",\"key\":\"exact3\",\"forever\":true,\"value\":0.30}]}");
    assertThat(tx.json().getBoolean("success")).as(tx.body()).isTrue();
    assertThat(node.get("/api/v1/kv/" + ns + "/exact3").body()).contains("\"value\":0.30,");
  }

  @Test
  void limitsAndBadInputAre4xxNamingTheField() {
    String ns = ns();
    assertRefused(kv(Map.of(), op("put", ns, "x".repeat(513)).put("value", 1).put("forever", true)),
        413, "payload_too_large", "kv_key_too_large");
    assertRefused(kv(Map.of(), op("put", ns, "big").put("value", "v".repeat(65_537)).put("forever", true)),
        413, "payload_too_large", "kv_value_too_large");
    JsonObject[] many = new JsonObject[257];
    for (int i = 0; i < many.length; i++) many[i] = op("get", ns, "k" + i);
    assertRefused(kv(Map.of(), many), 400, "kv_bad_request", "kv_too_many_ops");
    assertRefused(kv(Map.of(), op("put", ns, "k").put("value", 1)), 400, "kv_bad_request", "kv_expiry_not_specified");
    assertRefused(kv(Map.of(), op("put", "Bad NS", "k").put("value", 1).put("forever", true)), 400,
        "kv_bad_request", "kv_bad_namespace");
    Reply ttl = kv(Map.of(), op("put", ns, "k").put("value", 1).put("ttlSeconds", "soon"));
    assertRefused(ttl, 400, "kv_bad_request", "kv_bad_ttl");
    assertThat(ttl.json().getString("detail")).contains("ttlSeconds").contains("operation 0");
    Reply tenant = kv(Map.of(), op("get", ns, "k").put("tenant", UUID.randomUUID().toString()));
    assertRefused(tenant, 400, "kv_bad_request", "kv_tenant_not_an_input");
    assertRefused(kv(Map.of(), op("frob", ns, "k")), 400, "kv_bad_request", "kv_unknown_op");
    assertRefused(kv(Map.of(), new JsonObject().put("op", "getPrefix").put("ns", ns).put("prefix", "")), 400,
        "kv_bad_request", "kv_prefix_required");
    assertRefused(kv(Map.of(), op("put", ns, "d").put("value", 1).put("forever", true),
        op("delete", ns, "d")), 400, "kv_bad_request", "kv_duplicate_key_in_call");
    assertThat(results(op("get", ns, "d")).getJsonObject(0).getBoolean("found"))
        .as("a refused call writes nothing").isFalse();
    Reply list = node.post("/api/v1/resources/kv/list", new JsonObject().put("namespace", 7));
    assertRefused(list, 400, "kv_bad_request", "kv_bad_namespace");
    assertThat(list.json().getString("detail")).contains("namespace");
  }

  @Test
  void aTenantSeesOnlyItsOwnEntries() {
    String ns = ns();
    Map<String, String> a = Map.of("x-queen-tenant", UUID.randomUUID().toString());
    Map<String, String> b = Map.of("x-queen-tenant", UUID.randomUUID().toString());
    assertThat(kv(a, op("put", ns, "secret").put("value", "A").put("forever", true)).status()).isEqualTo(200);
    JsonObject got = kv(b, op("get", ns, "secret")).json().getJsonArray("results").getJsonObject(0);
    assertThat(got.getBoolean("found")).isFalse();
    JsonObject own = kv(b, op("putIfAbsent", ns, "secret").put("value", "B").put("forever", true)).json()
        .getJsonArray("results").getJsonObject(0);
    assertThat(own.getBoolean("applied")).as("tenant b's key is its own").isTrue();
    assertThat(kv(a, op("get", ns, "secret")).json().getJsonArray("results").getJsonObject(0).getValue("value"))
        .isEqualTo("A");
    Map<String, String> c = Map.of("x-queen-tenant", UUID.randomUUID().toString());
    assertThat(node.get("/api/v1/resources/kv/namespaces", c).array()).isEmpty();
    assertThat(node.post("/api/v1/resources/kv/list", new JsonObject().put("namespace", ns), c).json()
        .getJsonArray("rows")).isEmpty();
  }

  @Test
  void theOperationCounterMoves() {
    String series = "queen_kv_ops_total{op=\"putIfAbsent\",result=\"rejected\"}";
    String ns = ns();
    results(op("putIfAbsent", ns, "m").put("value", 1).put("forever", true));
    double before = metricOrZero(series);
    results(op("putIfAbsent", ns, "m").put("value", 1).put("forever", true));
    assertThat(node.metric(series)).isEqualTo(before + 1);
  }

  static double metricOrZero(String series) {
    return metricOrZero(node, series);
  }

  static double metricOrZero(TestNode node, String series) {
    try {
      return node.metric(series);
    } catch (IllegalStateException absent) {
      return 0;
    }
  }

  static void assertRefused(Reply r, int status, String error, String reason) {
    assertThat(r.status()).as(r.body()).isEqualTo(status);
    JsonObject j = r.json();
    assertThat(j.getString("error")).as(r.body()).isEqualTo(error);
    assertThat(j.getString("code")).isEqualTo(error);
    assertThat(j.getString("reason")).as(r.body()).isEqualTo(reason);
    assertThat(j.getString("detail")).isNotBlank();
  }

  static Reply send(String method, String path, JsonObject body) {
    return send(node, method, path, body);
  }

  static Reply send(TestNode n, String method, String path, JsonObject body) {
    var b = HttpRequest.newBuilder(URI.create(n.baseUrl() + path))
        .method(method, HttpRequest.BodyPublishers.ofString(body.encode())).header("Content-Type", "application/json");
    return n.send(b, Map.of());
  }
}
