package io.queenvertx.webhook;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.kernel.Config;
import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.TestNode.Reply;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.sql.DriverManager;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The webhook API under /v1 (issue #9, shared/seeds/webhook-dlq-listing.txt): API-key auth and the error envelope,
 * endpoint CRUD and validation, tenant isolation, the DLQ listing with its stable cursor, soft delete and replay.
 * Dead letters are written straight into the database; the delivery verticle is tested by {@link DeliveryIT}.
 */
class WebhookApiIT {
  static final Config.Database DB = TestDatabase.get().shared();
  static final String DEFAULT_TENANT = "00000000-0000-0000-0000-000000000001";
  /** k-b's tenant and k-p's (the pagination test's own tenant), fresh per run so no other test's rows are seen. */
  static final String TENANT_B = UUID.randomUUID().toString();
  static final String TENANT_P = UUID.randomUUID().toString();
  static final Map<String, String> A = Map.of("Authorization", "Bearer k-a");
  static final Map<String, String> B = Map.of("Authorization", "Bearer k-b");
  static final Map<String, String> P = Map.of("Authorization", "Bearer k-p");
  static final Pattern ISO = Pattern.compile("\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,6})?Z");
  static final Set<String> ENDPOINT_KEYS = Set.of("id", "queue", "partition", "url", "timeout_ms", "max_attempts",
      "backoff_initial_ms", "backoff_max_ms", "max_concurrency", "enabled", "consumer_group", "created_at",
      "updated_at");
  /** The seed's message object, plus the row id the replay and delete routes take; deleted_at only when deleted. */
  static final Set<String> MESSAGE_KEYS = Set.of("id", "message_id", "endpoint", "status", "attempt_count",
      "created_at", "delivered_at", "first_attempt_at", "response_status", "response_latency_ms", "processing_ms",
      "total_delivery_ms", "queue_wait_ms", "last_error");

  static TestNode node;

  @BeforeAll
  static void start() {
    node = TestNode.start(Map.of("QUEEN_WEBHOOK_API_KEYS", "k-a, k-b=" + TENANT_B + ",k-p=" + TENANT_P));
  }

  @AfterAll
  static void stop() {
    TestDatabase.execute(DB, "DELETE FROM queen.webhook_endpoints WHERE queue LIKE 'whapi-%' OR tenant_id IN ('"
        + TENANT_B + "', '" + TENANT_P + "')");
    node.close();
  }

  // ---- helpers ---------------------------------------------------------------------------------------------------

  static String queue(String prefix) {
    return "whapi-" + prefix + "-" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
  }

  static Reply patch(String path, Object body, Map<String, String> h) {
    String text = body instanceof String s ? s : body.toString();
    return node.send(HttpRequest.newBuilder(URI.create(node.baseUrl() + path))
        .method("PATCH", HttpRequest.BodyPublishers.ofString(text)).header("Content-Type", "application/json"), h);
  }

  /** Asserts the error envelope exactly: {error:{code,message}, meta:{request_id}} and the X-Request-Id header. */
  static JsonObject error(Reply r, int status, String code) {
    assertThat(r.status()).as("%s", r.body()).isEqualTo(status);
    assertThat(r.header("content-type")).startsWith("application/json");
    JsonObject j = r.json();
    assertThat(j.fieldNames()).containsExactlyInAnyOrder("error", "meta");
    assertThat(j.getJsonObject("error").fieldNames()).containsExactlyInAnyOrder("code", "message");
    assertThat(j.getJsonObject("error").getString("code")).isEqualTo(code);
    assertThat(j.getJsonObject("error").getString("message")).isNotBlank();
    assertThat(j.getJsonObject("meta").fieldNames()).containsExactly("request_id");
    assertThat(j.getJsonObject("meta").getString("request_id")).isEqualTo(r.header("X-Request-Id")).isNotBlank();
    return j.getJsonObject("error");
  }

  /** Asserts a success envelope and returns its data. */
  static <T> T data(Reply r, int status) {
    assertThat(r.status()).as("%s", r.body()).isEqualTo(status);
    JsonObject j = r.json();
    assertThat(j.fieldNames()).containsExactlyInAnyOrder("data", "meta");
    assertThat(j.getJsonObject("meta").getString("request_id")).isEqualTo(r.header("X-Request-Id")).isNotBlank();
    @SuppressWarnings("unchecked")
    T d = (T) j.getValue("data");
    return d;
  }

  static JsonObject createEndpoint(Map<String, String> h, JsonObject body) {
    return data(node.post("/v1/endpoints", body, h), 201);
  }

  /** A disabled endpoint (so no delivery verticle delivers for it) on a fresh queue. */
  static JsonObject disabledEndpoint(Map<String, String> h, String queue, String url) {
    return createEndpoint(h, new JsonObject().put("queue", queue).put("url", url).put("enabled", false));
  }

  static void sql(String s) {
    TestDatabase.execute(DB, s);
  }

  static long count(String s) {
    return TestDatabase.queryLong(DB, s);
  }

  /** Inserts a failed_permanent delivery; returns its id. */
  static String deadLetter(String tenant, String endpointId, String partitionId, String dlqId, String failedAtSql) {
    String id = UUID.randomUUID().toString();
    sql("INSERT INTO queen.webhook_deliveries(id, endpoint_id, tenant_id, partition_id, transaction_id, message_id, "
        + "status, attempt_count, created_at, first_attempt_at, response_status, response_latency_ms, processing_ms, "
        + "total_delivery_ms, queue_wait_ms, last_error, dlq_id, failed_at) VALUES ('" + id + "', '" + endpointId
        + "', '" + tenant + "', '" + partitionId + "', 'tx-" + id + "', gen_random_uuid(), 'failed_permanent', 5, "
        + "now() - interval '1 minute', now() - interval '50 seconds', 500, 120, 3, 60000, 10000, "
        + "'HTTP 500', " + (dlqId == null ? "NULL" : "'" + dlqId + "'") + ", " + failedAtSql + ")");
    return id;
  }

  static JsonObject page(Map<String, String> h, String query) {
    return data(node.get("/v1/dlq/messages" + query, h), 200);
  }

  static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }

  // ---- authentication --------------------------------------------------------------------------------------------

  @Test
  void aMissingOrUnknownKeyIs401WithTheSeedsEnvelope() {
    List<Reply> replies = List.of(
        node.get("/v1/dlq/messages"),
        node.get("/v1/dlq/messages", Map.of("Authorization", "Bearer nope")),
        node.get("/v1/dlq/messages", Map.of("Authorization", "k-a")),
        node.get("/v1/dlq/messages", Map.of("Authorization", "Bearer ")),
        node.get("/v1/dlq/messages", Map.of("Authorization", "Basic k-a")),
        node.get("/v1/endpoints", Map.of("Authorization", "Bearer k-a2")),
        node.post("/v1/endpoints", "{}", Map.of()),
        node.post("/v1/dlq/replay/" + UUID.randomUUID(), "", Map.of()),
        node.delete("/v1/endpoints/" + UUID.randomUUID()),
        node.delete("/v1/dlq/messages/not-a-uuid"),
        patch("/v1/endpoints/" + UUID.randomUUID(), "{}", Map.of("Authorization", "Bearer K-A")));
    for (Reply r : replies) {
      error(r, 401, "UNAUTHORIZED");
      JsonObject j = r.json();
      assertThat(j).isEqualTo(new JsonObject()
          .put("error", new JsonObject().put("code", "UNAUTHORIZED").put("message", "Invalid or missing API key"))
          .put("meta", new JsonObject().put("request_id", r.header("X-Request-Id"))));
    }
    // a client's own request id is echoed in the body as in the header
    Reply r = node.get("/v1/dlq/messages", Map.of("X-Request-Id", "req_xyz123"));
    assertThat(r.json().getJsonObject("meta").getString("request_id")).isEqualTo("req_xyz123");
    // the scheme is case-insensitive; the key is not
    assertThat(node.get("/v1/endpoints", Map.of("Authorization", "bearer k-a")).status()).isEqualTo(200);
  }

  @Test
  void theRoutersOwnErrorsUnderV1UseTheSeedsEnvelopeToo() {
    // no such path, no such method: 404 NOT_FOUND in the envelope, with or without a key, never Queen's body
    for (Reply r : List.of(node.get("/v1/nope", A), node.get("/v1", A), node.get("/v1/dlq/nothing/here"),
        node.post("/v1/dlq/messages", "{}", A), patch("/v1/dlq/messages", "{}", A),
        node.delete("/v1/endpoints", A))) {
      assertThat(error(r, 404, "NOT_FOUND").getString("message")).startsWith("no such route");
    }
    // Queen's own routes keep Queen's contract
    Reply q = node.get("/api/v1/nope");
    assertThat(q.status()).isEqualTo(404);
    assertThat(q.json()).isEqualTo(new JsonObject().put("error", "Not Found").put("code", "no_such_route"));
  }

  // ---- endpoints -------------------------------------------------------------------------------------------------

  @Test
  void endpointCrudWithDefaultsAndAGeneratedSecret() {
    String q = queue("crud");
    JsonObject e = createEndpoint(A, new JsonObject().put("queue", q).put("url", "https://127.0.0.1:9/hook")
        .put("enabled", false));
    Set<String> withSecret = new HashSet<>(ENDPOINT_KEYS);
    withSecret.add("secret");
    assertThat(e.fieldNames()).containsExactlyInAnyOrderElementsOf(withSecret);
    String id = e.getString("id");
    assertThat(e.getString("queue")).isEqualTo(q);
    assertThat(e.getValue("partition")).isNull();
    assertThat(e.getString("url")).isEqualTo("https://127.0.0.1:9/hook");
    assertThat(e.getString("secret")).matches("[0-9a-f]{64}");
    assertThat(e.getInteger("timeout_ms")).isEqualTo(10_000);
    assertThat(e.getInteger("max_attempts")).isEqualTo(5);
    assertThat(e.getInteger("backoff_initial_ms")).isEqualTo(1_000);
    assertThat(e.getInteger("backoff_max_ms")).isEqualTo(60_000);
    assertThat(e.getInteger("max_concurrency")).isEqualTo(4);
    assertThat(e.getBoolean("enabled")).isFalse();
    assertThat(e.getString("consumer_group")).isEqualTo("webhook:" + id);
    assertThat(e.getString("created_at")).matches(ISO);
    assertThat(e.getString("updated_at")).matches(ISO);
    assertThat(count("SELECT count(*) FROM queen.webhook_endpoints WHERE id = '" + id + "' AND tenant_id = '"
        + DEFAULT_TENANT + "' AND secret = '" + e.getString("secret") + "'")).isEqualTo(1);

    // get: no secret
    JsonObject got = data(node.get("/v1/endpoints/" + id, A), 200);
    assertThat(got.fieldNames()).containsExactlyInAnyOrderElementsOf(ENDPOINT_KEYS);
    JsonObject expected = e.copy();
    expected.remove("secret");
    assertThat(got).isEqualTo(expected);

    // an explicit secret and every setting
    JsonObject e2 = createEndpoint(A, new JsonObject().put("queue", q).put("partition", "eu-1")
        .put("url", "http://localhost:8080/x?y=1").put("secret", "s3cr3t").put("timeout_ms", 120_000)
        .put("max_attempts", 50).put("backoff_initial_ms", 5).put("backoff_max_ms", 5).put("max_concurrency", 64)
        .put("enabled", false));
    assertThat(e2.getString("secret")).isEqualTo("s3cr3t");
    assertThat(e2.getString("partition")).isEqualTo("eu-1");
    assertThat(e2.getInteger("timeout_ms")).isEqualTo(120_000);
    assertThat(e2.getInteger("max_concurrency")).isEqualTo(64);

    // list: the tenant's, newest first
    JsonArray list = data(node.get("/v1/endpoints", A), 200) instanceof JsonObject o ? o.getJsonArray("endpoints")
        : null;
    assertThat(list).isNotNull();
    List<String> ids = new ArrayList<>();
    for (Object o : list) {
      assertThat(((JsonObject) o).fieldNames()).containsExactlyInAnyOrderElementsOf(ENDPOINT_KEYS);
      ids.add(((JsonObject) o).getString("id"));
    }
    assertThat(ids).contains(id, e2.getString("id"));
    assertThat(ids.indexOf(e2.getString("id"))).isLessThan(ids.indexOf(id));

    // patch: partial, validated over the current values
    JsonObject p = data(patch("/v1/endpoints/" + id, new JsonObject().put("max_attempts", 7).put("partition", "p9")
        .put("secret", "rotated"), A), 200);
    assertThat(p.fieldNames()).containsExactlyInAnyOrderElementsOf(ENDPOINT_KEYS);
    assertThat(p.getInteger("max_attempts")).isEqualTo(7);
    assertThat(p.getString("partition")).isEqualTo("p9");
    assertThat(p.getString("url")).isEqualTo("https://127.0.0.1:9/hook");
    assertThat(p.getInteger("timeout_ms")).isEqualTo(10_000);
    assertThat(p.getString("created_at")).isEqualTo(e.getString("created_at"));
    assertThat(count("SELECT count(*) FROM queen.webhook_endpoints WHERE id = '" + id + "' AND secret = 'rotated'"))
        .isEqualTo(1);
    JsonObject cleared = data(patch("/v1/endpoints/" + id, new JsonObject().putNull("partition"), A), 200);
    assertThat(cleared.getValue("partition")).as("null partition = every partition").isNull();
    assertThat(cleared.getInteger("max_attempts")).isEqualTo(7);
    error(patch("/v1/endpoints/" + id, new JsonObject().put("backoff_max_ms", 999), A), 400, "INVALID_REQUEST");
    error(patch("/v1/endpoints/" + id, new JsonObject().put("url", "ftp://example.com/x"), A), 400,
        "INVALID_REQUEST");
    error(patch("/v1/endpoints/" + id, "[1]", A), 400, "INVALID_REQUEST");
    assertThat(data(node.get("/v1/endpoints/" + id, A), 200) instanceof JsonObject o
        && o.getInteger("backoff_max_ms") == 60_000 && o.getString("url").startsWith("https:")).isTrue();

    // delete
    assertThat((JsonObject) data(node.delete("/v1/endpoints/" + id, A), 200))
        .isEqualTo(new JsonObject().put("id", id).put("deleted", true));
    error(node.get("/v1/endpoints/" + id, A), 404, "NOT_FOUND");
    error(node.delete("/v1/endpoints/" + id, A), 404, "NOT_FOUND");
    error(patch("/v1/endpoints/" + id, new JsonObject().put("max_attempts", 2), A), 404, "NOT_FOUND");
    error(node.get("/v1/endpoints/not-a-uuid", A), 404, "NOT_FOUND");
    error(node.delete("/v1/endpoints/not-a-uuid", A), 404, "NOT_FOUND");
  }

  @Test
  void endpointValidation() {
    String q = queue("valid");
    JsonObject ok = new JsonObject().put("queue", q).put("url", "https://example.com/hook").put("enabled", false);
    Map<String, JsonObject> bad = new HashMap<>();
    bad.put("ftp scheme", ok.copy().put("url", "ftp://example.com/hook"));
    bad.put("file scheme", ok.copy().put("url", "file:///etc/passwd"));
    bad.put("javascript", ok.copy().put("url", "javascript:alert(1)"));
    bad.put("relative", ok.copy().put("url", "/hook"));
    bad.put("no host", ok.copy().put("url", "http:///hook"));
    bad.put("garbage", ok.copy().put("url", "ht tp://x y"));
    bad.put("not a string", ok.copy().put("url", 42));
    bad.put("missing url", new JsonObject().put("queue", q));
    bad.put("missing queue", new JsonObject().put("url", "https://example.com/hook"));
    bad.put("blank queue", ok.copy().put("queue", "  "));
    bad.put("timeout 0", ok.copy().put("timeout_ms", 0));
    bad.put("timeout too big", ok.copy().put("timeout_ms", 120_001));
    bad.put("timeout fractional", ok.copy().put("timeout_ms", 1.5));
    bad.put("timeout string", ok.copy().put("timeout_ms", "100"));
    bad.put("attempts 0", ok.copy().put("max_attempts", 0));
    bad.put("attempts 51", ok.copy().put("max_attempts", 51));
    bad.put("concurrency 0", ok.copy().put("max_concurrency", 0));
    bad.put("concurrency 65", ok.copy().put("max_concurrency", 65));
    bad.put("backoff max < initial", ok.copy().put("backoff_initial_ms", 2000).put("backoff_max_ms", 1000));
    bad.put("backoff initial above the default max", ok.copy().put("backoff_initial_ms", 60_001));
    bad.put("backoff 0", ok.copy().put("backoff_initial_ms", 0));
    bad.put("enabled string", ok.copy().put("enabled", "yes"));
    bad.put("empty secret", ok.copy().put("secret", ""));
    bad.put("blank partition", ok.copy().put("partition", " "));
    for (var c : bad.entrySet()) {
      error(node.post("/v1/endpoints", c.getValue(), A), 400, "INVALID_REQUEST");
    }
    JsonObject ftp = error(node.post("/v1/endpoints", bad.get("ftp scheme"), A), 400, "INVALID_REQUEST");
    assertThat(ftp.getString("message")).isEqualTo("endpoint must be a valid HTTP(S) URL");
    assertThat(error(node.post("/v1/endpoints", bad.get("missing url"), A), 400, "INVALID_REQUEST")
        .getString("message")).isEqualTo("url is required");
    for (String body : new String[] {"", "not json", "[]", "42", "null"}) {
      error(node.post("/v1/endpoints", body, A), 400, "INVALID_REQUEST");
    }
    assertThat(count("SELECT count(*) FROM queen.webhook_endpoints WHERE queue = '" + q + "'")).isZero();
    // the boundaries themselves are accepted; the scheme is case-insensitive
    createEndpoint(A, ok.copy().put("timeout_ms", 1).put("max_attempts", 1).put("max_concurrency", 1)
        .put("url", "HTTP://Example.com:8080/a"));
  }

  @Test
  void endpointsAreTenantScoped() {
    String q = queue("tenants");
    JsonObject a = disabledEndpoint(A, q, "https://a.example/hook");
    JsonObject b = disabledEndpoint(B, q, "https://b.example/hook");
    String aid = a.getString("id");
    assertThat(count("SELECT count(*) FROM queen.webhook_endpoints WHERE id = '" + b.getString("id")
        + "' AND tenant_id = '" + TENANT_B + "'")).isEqualTo(1);
    // B sees only its own
    JsonArray bl = ((JsonObject) data(node.get("/v1/endpoints", B), 200)).getJsonArray("endpoints");
    assertThat(bl).hasSize(1);
    assertThat(bl.getJsonObject(0).getString("id")).isEqualTo(b.getString("id"));
    // and cannot read, change or delete A's
    error(node.get("/v1/endpoints/" + aid, B), 404, "NOT_FOUND");
    error(patch("/v1/endpoints/" + aid, new JsonObject().put("url", "https://evil.example/"), B), 404, "NOT_FOUND");
    error(node.delete("/v1/endpoints/" + aid, B), 404, "NOT_FOUND");
    assertThat(((JsonObject) data(node.get("/v1/endpoints/" + aid, A), 200)).getString("url"))
        .isEqualTo("https://a.example/hook");
    // the x-queen-tenant header does not change the key's tenant
    var withHeader = new HashMap<>(B);
    withHeader.put("x-queen-tenant", DEFAULT_TENANT);
    error(node.get("/v1/endpoints/" + aid, withHeader), 404, "NOT_FOUND");
  }

  // ---- the DLQ listing -------------------------------------------------------------------------------------------

  @Test
  void theListingHasTheSeedsFieldsAndValidatesItsParameters() {
    JsonObject ep = disabledEndpoint(B, queue("list"), "https://customer.app/webhooks");
    String eid = ep.getString("id");
    UUID pid = UUID.randomUUID();
    String live = deadLetter(TENANT_B, eid, pid.toString(), null, "now() - interval '3 seconds'");
    String gone = deadLetter(TENANT_B, eid, pid.toString(), null, "now() - interval '2 seconds'");
    // not dead letters: never listed
    sql("INSERT INTO queen.webhook_deliveries(endpoint_id, tenant_id, partition_id, transaction_id, message_id, "
        + "status, created_at) VALUES ('" + eid + "', '" + TENANT_B + "', '" + pid + "', 'q-1', gen_random_uuid(), "
        + "'pending_retry', now()), ('" + eid + "', '" + TENANT_B + "', '" + pid + "', 'q-2', gen_random_uuid(), "
        + "'succeeded', now())");

    JsonObject d = page(B, "");
    assertThat(d.fieldNames()).containsExactlyInAnyOrder("messages", "has_more", "next_cursor");
    assertThat(d.getBoolean("has_more")).isFalse();
    assertThat(d.containsKey("next_cursor")).isTrue();
    assertThat(d.getValue("next_cursor")).isNull();
    JsonArray ms = d.getJsonArray("messages");
    assertThat(ms).hasSize(2);
    JsonObject m = ms.getJsonObject(0);
    assertThat(m.fieldNames()).containsExactlyInAnyOrderElementsOf(MESSAGE_KEYS);
    assertThat(m.getString("id")).isEqualTo(live);
    assertThat(m.getString("message_id")).matches("[0-9a-f-]{36}");
    assertThat(m.getString("endpoint")).isEqualTo("https://customer.app/webhooks");
    assertThat(m.getString("status")).isEqualTo("failed_permanent");
    assertThat(m.getInteger("attempt_count")).isEqualTo(5);
    assertThat(m.getString("created_at")).matches(ISO);
    assertThat(m.getString("first_attempt_at")).matches(ISO);
    assertThat(m.containsKey("delivered_at")).isTrue();
    assertThat(m.getValue("delivered_at")).isNull();
    assertThat(m.getInteger("response_status")).isEqualTo(500);
    assertThat(m.getInteger("response_latency_ms")).isEqualTo(120);
    assertThat(m.getInteger("processing_ms")).isEqualTo(3);
    assertThat(m.getInteger("total_delivery_ms")).isEqualTo(60_000);
    assertThat(m.getInteger("queue_wait_ms")).isEqualTo(10_000);
    assertThat(m.getString("last_error")).isEqualTo("HTTP 500");
    assertThat(ms.getJsonObject(1).getString("id")).isEqualTo(gone);

    // soft delete
    JsonObject del = data(node.delete("/v1/dlq/messages/" + gone, B), 200);
    assertThat(del.fieldNames()).containsExactlyInAnyOrder("id", "deleted_at");
    assertThat(del.getString("id")).isEqualTo(gone);
    assertThat(del.getString("deleted_at")).matches(ISO);
    error(node.delete("/v1/dlq/messages/" + gone, B), 404, "NOT_FOUND");
    error(node.delete("/v1/dlq/messages/" + UUID.randomUUID(), B), 404, "NOT_FOUND");
    error(node.delete("/v1/dlq/messages/xyz", B), 404, "NOT_FOUND");
    error(node.delete("/v1/dlq/messages/" + live, A), 404, "NOT_FOUND");
    assertThat(count("SELECT count(*) FROM queen.webhook_deliveries WHERE id = '" + gone
        + "' AND deleted_at IS NOT NULL")).as("soft, not hard").isEqualTo(1);
    error(node.post("/v1/dlq/replay/" + gone, "", B), 404, "NOT_FOUND");

    JsonArray after = page(B, "").getJsonArray("messages");
    assertThat(after).hasSize(1);
    assertThat(after.getJsonObject(0).getString("id")).isEqualTo(live);
    assertThat(after.getJsonObject(0).containsKey("deleted_at")).isFalse();
    JsonArray all = page(B, "?include_deleted=true").getJsonArray("messages");
    assertThat(all).hasSize(2);
    assertThat(all.getJsonObject(0).containsKey("deleted_at")).as("live rows have no deleted_at").isFalse();
    assertThat(all.getJsonObject(1).fieldNames()).containsAll(MESSAGE_KEYS).contains("deleted_at")
        .hasSize(MESSAGE_KEYS.size() + 1);
    assertThat(all.getJsonObject(1).getString("deleted_at")).isEqualTo(del.getString("deleted_at"));
    assertThat(page(B, "?include_deleted=false").getJsonArray("messages")).hasSize(1);

    // other tenants see none of it
    assertThat(page(P, "?limit=1000").getJsonArray("messages").stream()
        .map(o -> ((JsonObject) o).getString("id"))).doesNotContain(live, gone);

    // parameters
    for (String q : new String[] {"?limit=0", "?limit=1001", "?limit=abc", "?limit=-1", "?limit=1.5", "?limit=",
        "?cursor=" + enc("!!!"), "?cursor=abc", "?cursor=" + enc(java.util.Base64.getUrlEncoder().encodeToString(
            "v1:x:y".getBytes(StandardCharsets.UTF_8))), "?include_deleted=maybe"}) {
      error(node.get("/v1/dlq/messages" + q, B), 400, "INVALID_REQUEST");
    }
    assertThat(page(B, "?limit=1").getJsonArray("messages")).hasSize(1);
    assertThat(page(B, "?limit=1000").getJsonArray("messages")).hasSize(1);
    JsonObject one = page(B, "?limit=1&include_deleted=true");
    assertThat(one.getBoolean("has_more")).isTrue();
    assertThat(one.getString("next_cursor")).isNotBlank();
    JsonObject two = page(B, "?limit=1&include_deleted=true&cursor=" + enc(one.getString("next_cursor")));
    assertThat(two.getJsonArray("messages").getJsonObject(0).getString("id")).isEqualTo(gone);
    assertThat(two.getBoolean("has_more")).isFalse();
    assertThat(two.getValue("next_cursor")).isNull();
  }

  @Test
  void cursorPagingOver2500DeadLettersSeesEveryPreexistingRowExactlyOnceUnderConcurrentWrites() throws Exception {
    JsonObject ep = disabledEndpoint(P, queue("page"), "https://customer.app/webhooks");
    String eid = ep.getString("id");
    String pid = UUID.randomUUID().toString();
    // 2,500 dead letters, three to a failed_at so the id breaks ties
    sql("INSERT INTO queen.webhook_deliveries(endpoint_id, tenant_id, partition_id, transaction_id, message_id, "
        + "status, attempt_count, created_at, failed_at) SELECT '" + eid + "', '" + TENANT_P + "', '" + pid + "', "
        + "'pre-' || i, gen_random_uuid(), 'failed_permanent', 5, now() - interval '2 hours', "
        + "now() - interval '1 hour' + (i / 3) * interval '1 millisecond' FROM generate_series(1, 2500) i");
    Set<String> pre = new LinkedHashSet<>();
    try (var c = DriverManager.getConnection("jdbc:postgresql://" + DB.host() + ":" + DB.port() + "/"
        + DB.database(), DB.user(), DB.password()); var st = c.createStatement();
         var rs = st.executeQuery("SELECT id::text FROM queen.webhook_deliveries WHERE tenant_id = '" + TENANT_P
             + "' AND status = 'failed_permanent' ORDER BY failed_at, id")) {
      while (rs.next()) pre.add(rs.getString(1));
    }
    assertThat(pre).hasSize(2500);
    List<String> preList = new ArrayList<>(pre);

    // a writer adding dead letters the whole time, some behind the cursor, some ahead of it
    AtomicBoolean stop = new AtomicBoolean();
    AtomicInteger added = new AtomicInteger();
    Thread writer = new Thread(() -> {
      int i = 0;
      while (!stop.get()) {
        String at = (i % 2 == 0) ? "now()" : "now() - interval '1 hour' + " + (i * 37 % 900) + " * interval '1 ms'";
        sql("INSERT INTO queen.webhook_deliveries(endpoint_id, tenant_id, partition_id, transaction_id, message_id, "
            + "status, created_at, failed_at) VALUES ('" + eid + "', '" + TENANT_P + "', '" + pid + "', 'bg-" + i
            + "', gen_random_uuid(), 'failed_permanent', now(), " + at + ")");
        added.incrementAndGet();
        i++;
      }
    });
    writer.start();

    Set<String> deleted = new HashSet<>();
    List<String> seen = new ArrayList<>();
    Set<String> seenSet = new HashSet<>();
    String cursor = null;
    int pages = 0;
    try {
      while (true) {
        JsonObject d = page(P, "?limit=97" + (cursor == null ? "" : "&cursor=" + enc(cursor)));
        JsonArray ms = d.getJsonArray("messages");
        for (Object o : ms) {
          seen.add(((JsonObject) o).getString("id"));
          seenSet.add(((JsonObject) o).getString("id"));
        }
        pages++;
        if (!d.getBoolean("has_more")) {
          assertThat(d.getValue("next_cursor")).isNull();
          break;
        }
        assertThat(ms).hasSize(97);
        cursor = d.getString("next_cursor");
        // between pages: inserts on both sides of the cursor, a soft and a hard delete of rows not yet seen, and a
        // soft delete of a row already seen
        int k = pages;
        sql("INSERT INTO queen.webhook_deliveries(endpoint_id, tenant_id, partition_id, transaction_id, message_id, "
            + "status, created_at, failed_at) VALUES ('" + eid + "', '" + TENANT_P + "', '" + pid + "', 'mid-a-" + k
            + "', gen_random_uuid(), 'failed_permanent', now(), now() - interval '1 hour'), ('" + eid + "', '"
            + TENANT_P + "', '" + pid + "', 'mid-b-" + k + "', gen_random_uuid(), 'failed_permanent', now(), "
            + "now() + interval '1 hour')");
        int ahead = seen.size() + 50 + k;
        if (ahead + 3 < preList.size()) {
          String soft = preList.get(ahead);
          String hard = preList.get(ahead + 3);
          assertThat(seenSet).doesNotContain(soft, hard);
          sql("UPDATE queen.webhook_deliveries SET deleted_at = now() WHERE id = '" + soft + "'");
          sql("DELETE FROM queen.webhook_deliveries WHERE id = '" + hard + "'");
          deleted.add(soft);
          deleted.add(hard);
        }
        sql("UPDATE queen.webhook_deliveries SET deleted_at = now() WHERE id = '" + seen.get(seen.size() / 2) + "'");
      }
    } finally {
      stop.set(true);
      writer.join(10_000);
    }
    assertThat(added.get()).as("the writer ran").isPositive();
    assertThat(pages).isGreaterThanOrEqualTo(2500 / 97);
    assertThat(new HashSet<>(seen)).as("no row twice").hasSize(seen.size());
    Set<String> expected = new HashSet<>(pre);
    expected.removeAll(deleted);
    assertThat(new HashSet<>(seen)).as("every pre-existing live row").containsAll(expected);
    assertThat(seen).as("rows deleted before their page never appear").doesNotContainAnyElementsOf(deleted);
  }

  // ---- replay ----------------------------------------------------------------------------------------------------

  @Test
  void replayMovesTheDeadLetterBackIntoItsQueue() {
    String q = queue("replay");
    JsonObject ep = disabledEndpoint(A, q, "https://customer.app/webhooks");
    String eid = ep.getString("id");
    String group = ep.getString("consumer_group");
    Reply pushed = node.post("/api/v1/push", new JsonObject().put("items", new JsonArray().add(new JsonObject()
        .put("queue", q).put("partition", "eu-1").put("transactionId", "orig-1")
        .put("payload", new JsonObject().put("first", true)))));
    assertThat(pushed.status()).as("%s", pushed.body()).isEqualTo(201);
    JsonObject res = pushed.array().getJsonObject(0);
    String pid = res.getString("partitionId");
    assertThat(pid).isNotNull();

    // the dead letter the delivery verticle would have filed for its group, and its delivery record
    String dlqId = UUID.randomUUID().toString();
    sql("INSERT INTO queen.log_dlq(id, partition_id, consumer_group, \"offset\", message_id, transaction_id, payload, "
        + "error, retry_count) VALUES ('" + dlqId + "', '" + pid + "', '" + group + "', 0, '"
        + res.getString("message_id") + "', 'orig-1', '{\"amount\":41}', 'HTTP 500', 5)");
    String id = deadLetter(DEFAULT_TENANT, eid, pid, dlqId, "now()");
    String messageId = data(node.get("/v1/dlq/messages?limit=1000", A), 200) instanceof JsonObject d
        ? d.getJsonArray("messages").stream().map(o -> (JsonObject) o).filter(o -> o.getString("id").equals(id))
            .findFirst().orElseThrow().getString("message_id") : null;

    // another tenant cannot replay it
    error(node.post("/v1/dlq/replay/" + id, "", B), 404, "NOT_FOUND");
    error(node.post("/v1/dlq/replay/" + UUID.randomUUID(), "", A), 404, "NOT_FOUND");
    error(node.post("/v1/dlq/replay/nope", "", A), 404, "NOT_FOUND");

    JsonObject r = data(node.post("/v1/dlq/replay/" + id, "", A), 200);
    assertThat(r.fieldNames()).containsExactlyInAnyOrder("id", "message_id", "result", "replayed_as");
    assertThat(r.getString("id")).isEqualTo(id);
    assertThat(r.getString("message_id")).isEqualTo(messageId);
    assertThat(r.getString("result")).isEqualTo("moved");
    JsonObject as = r.getJsonObject("replayed_as");
    assertThat(as.fieldNames()).containsExactlyInAnyOrder("transaction_id", "offset", "message_id");
    assertThat(as.getString("transaction_id")).isEqualTo("dlq:" + dlqId);
    assertThat(as.getLong("offset")).isEqualTo(1L);
    assertThat(as.getString("message_id")).matches("[0-9a-f-]{36}");
    assertThat(count("SELECT count(*) FROM queen.log_dlq WHERE id = '" + dlqId + "'")).as("dlq row moved").isZero();
    assertThat(count("SELECT count(*) FROM queen.webhook_deliveries WHERE id = '" + id + "'")).isZero();
    assertThat(page(A, "?limit=1000").getJsonArray("messages").stream()
        .map(o -> ((JsonObject) o).getString("id"))).doesNotContain(id);

    // the replayed message is in the queue
    Reply pop = node.get("/api/v1/pop/queue/" + q + "/partition/eu-1?batch=10");
    assertThat(pop.status()).as("%s", pop.body()).isEqualTo(200);
    JsonObject replayed = pop.json().getJsonArray("messages").stream().map(o -> (JsonObject) o)
        .filter(o -> ("dlq:" + dlqId).equals(o.getString("transactionId"))).findFirst().orElseThrow(
            () -> new AssertionError("no dlq:" + dlqId + " in " + pop.body()));
    assertThat(replayed.getValue("data")).isEqualTo(new JsonObject().put("amount", 41));

    // a second replay of the same row id: gone
    error(node.post("/v1/dlq/replay/" + id, "", A), 404, "NOT_FOUND");

    // the same dead-letter row filed again (same id): the move is a duplicate, 409, and the record stays
    sql("INSERT INTO queen.log_dlq(id, partition_id, consumer_group, \"offset\", transaction_id, payload, error) "
        + "VALUES ('" + dlqId + "', '" + pid + "', '" + group + "', 0, 'orig-1', '{\"amount\":41}', 'HTTP 500')");
    String again = deadLetter(DEFAULT_TENANT, eid, pid, dlqId, "now()");
    error(node.post("/v1/dlq/replay/" + again, "", A), 409, "CONFLICT");
    assertThat(count("SELECT count(*) FROM queen.webhook_deliveries WHERE id = '" + again + "'")).isEqualTo(1);

    // a delivery record whose dead-letter row is gone (purged through /api/v1/dlq): 404, the record stays
    String orphan = deadLetter(DEFAULT_TENANT, eid, pid, UUID.randomUUID().toString(), "now()");
    error(node.post("/v1/dlq/replay/" + orphan, "", A), 404, "NOT_FOUND");
    String noDlq = deadLetter(DEFAULT_TENANT, eid, pid, null, "now()");
    error(node.post("/v1/dlq/replay/" + noDlq, "", A), 404, "NOT_FOUND");
    sql("DELETE FROM queen.log_dlq WHERE id = '" + dlqId + "'");
  }
}
