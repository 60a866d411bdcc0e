package io.queenvertx.auth;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpRequest;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The access levels of the key-value, lock, timer and rider routes over real HTTP (docs/design/queen2-contract.md
 * §2.1, §3.1, §4.1): a read-only token reads state and writes none of it (not by {@code POST /api/v1/kv}, the path
 * routes, the locks, the timers nor a transaction's riders); a write-only token schedules timers, cancels none and reads
 * nothing; each operation of a batch route is held to its own level ({@code AccessLevel.ofOperation}), so a call is
 * refused whole when one of its operations is beyond the token.
 */
class StateAccessIT {
  @NodeFixture(env = {"JWT_ENABLED=true", "JWT_SECRET=" + JwtAuthIT.SECRET, "JWT_ISSUER=queen-tests",
      "JWT_AUDIENCE=queen"})
  static TestNode node;

  static Map<String, String> as(String role) {
    return JwtAuthIT.bearer(Tokens.hs("HS256", JwtAuthIT.SECRET, JwtAuthIT.claims(role)));
  }

  static TestNode.Reply send(String method, String path, Object body, Map<String, String> h) {
    var b = HttpRequest.newBuilder(URI.create(node.baseUrl() + path));
    Map<String, String> headers = new HashMap<>(h);
    if (body == null) {
      b.method(method, HttpRequest.BodyPublishers.noBody());
    } else {
      b.method(method, HttpRequest.BodyPublishers.ofString(body instanceof String s ? s : body.toString()));
      headers.put("Content-Type", "application/json");
    }
    return node.send(b, headers);
  }

  static JsonObject ops(JsonObject... ops) {
    JsonArray a = new JsonArray();
    for (JsonObject o : ops) a.add(o);
    return new JsonObject().put("operations", a);
  }

  static final JsonObject PUT = new JsonObject().put("op", "put").put("ns", "acl").put("key", "k").put("value", 1)
      .put("forever", true);
  static final JsonObject LOCK = new JsonObject().put("op", "acquire").put("name", "acl").put("ttlSeconds", 5);
  static final JsonObject TIMER = new JsonObject().put("op", "schedule").put("queue", "acl-q").put("timerKey", "k")
      .put("txn", "t1").put("delayMs", 60_000)
      .put("payload", Base64.getEncoder().encodeToString("{\"a\":1}".getBytes()));

  static JsonObject transaction(String rider, JsonObject op) {
    return new JsonObject().put("operations", new JsonArray().add(new JsonObject().put("type", "push")
        .put("items", new JsonArray().add(new JsonObject().put("queue", "acl-q").put("payload", 1)))))
        .put(rider, new JsonArray().add(op));
  }

  @Test
  void aReadOnlyTokenReadsStateAndWritesNone() {
    Map<String, String> rw = as("read-write");
    assertThat(send("POST", "/api/v1/kv", ops(PUT), rw).status()).isEqualTo(200);
    Map<String, String> ro = as("read-only");
    assertThat(send("GET", "/api/v1/kv/acl/k", null, ro).status()).isEqualTo(200);
    assertThat(send("POST", "/api/v1/resources/kv/list", new JsonObject().put("namespace", "acl"), ro).status())
        .isEqualTo(200);
    assertThat(send("GET", "/api/v1/resources/kv/namespaces", null, ro).status()).isEqualTo(200);
    assertThat(send("GET", "/api/v1/timers/acl-q", null, ro).status()).isEqualTo(200);
    assertThat(send("GET", "/api/v1/timers/acl-q/k", null, ro).status()).isEqualTo(200);
    Map<String, TestNode.Reply> writes = new java.util.LinkedHashMap<>();
    writes.put("POST /kv put", send("POST", "/api/v1/kv", ops(PUT), ro));
    writes.put("POST /kv bare array", send("POST", "/api/v1/kv", new JsonArray().add(PUT), ro));
    writes.put("PUT /kv/acl/k", send("PUT", "/api/v1/kv/acl/k", new JsonObject().put("value", 2).put("forever", true), ro));
    writes.put("DELETE /kv/acl/k", send("DELETE", "/api/v1/kv/acl/k", null, ro));
    writes.put("POST /locks", send("POST", "/api/v1/locks", ops(LOCK), ro));
    writes.put("POST /timers", send("POST", "/api/v1/timers", ops(TIMER), ro));
    writes.put("DELETE /timers", send("DELETE", "/api/v1/timers/acl-q/k", null, ro));
    writes.put("transaction kv", send("POST", "/api/v1/transaction", transaction("kv", PUT), ro));
    writes.put("transaction timers", send("POST", "/api/v1/transaction", transaction("timers", TIMER), ro));
    writes.forEach((what, r) -> assertThat(r.status()).as(what + ": " + r.body()).isEqualTo(403));
    // nothing of it landed
    assertThat(send("GET", "/api/v1/kv/acl/k", null, rw).json().getValue("value")).isEqualTo(1);
    assertThat(send("GET", "/api/v1/timers/acl-q/k", null, rw).json().getBoolean("found")).isFalse();
  }

  static JsonObject op(String op, String field, String value) {
    return new JsonObject().put("op", op).put(field, value);
  }

  /** Each of a batch route's calls, by the roles allowed to make it: a call holding several levels needs all of them. */
  @Test
  void eachOperationIsHeldToItsOwnLevel() {
    JsonObject kvGet = op("get", "ns", "acl").put("key", "k");
    JsonObject kvMany = op("getMany", "ns", "acl").put("keys", new JsonArray().add("k"));
    JsonObject kvPrefix = op("getPrefix", "ns", "acl").put("prefix", "k");
    JsonObject kvCheck = op("check", "ns", "acl").put("key", "k").put("expect", 0);
    JsonObject kvIncr = op("incr", "ns", "acl").put("key", "n").put("delta", 1).put("forever", true);
    JsonObject lockGet = op("get", "name", "acl-get");
    JsonObject cancel = op("cancel", "queue", "acl-q").put("timerKey", "held");
    Map<String, Object[]> calls = new java.util.LinkedHashMap<>();
    // call -> {path, body, roles that may make it}
    calls.put("kv reads", new Object[] {"/api/v1/kv", ops(kvGet, kvMany, kvPrefix, kvCheck), "ro rw admin"});
    calls.put("kv read and incr", new Object[] {"/api/v1/kv", ops(kvGet, kvIncr), "rw admin"});
    calls.put("lock get", new Object[] {"/api/v1/locks", ops(lockGet), "ro rw admin"});
    calls.put("lock get and acquire", new Object[] {"/api/v1/locks", ops(lockGet, LOCK.copy().put("name", "acl2")),
        "rw admin"});
    calls.put("timer schedule", new Object[] {"/api/v1/timers", ops(TIMER.copy().put("timerKey", "lvl")),
        "wo rw admin"});
    calls.put("timer cancel", new Object[] {"/api/v1/timers", ops(cancel), "rw admin"});
    calls.put("timer schedule and cancel", new Object[] {"/api/v1/timers",
        ops(TIMER.copy().put("timerKey", "lvl2"), cancel), "rw admin"});
    Map<String, String> roles = Map.of("ro", "read-only", "wo", "write-only", "rw", "read-write", "admin", "admin");
    Map<String, String> rw = as("read-write");
    for (var call : calls.entrySet()) {
      for (var role : roles.entrySet()) {
        // the timer a cancel aims at exists before each call, so a cancel that ran would show
        assertThat(send("POST", "/api/v1/timers", ops(TIMER.copy().put("timerKey", "held")), rw).status()).isEqualTo(200);
        boolean allowed = List.of(((String) call.getValue()[2]).split(" ")).contains(role.getKey());
        TestNode.Reply r = send("POST", (String) call.getValue()[0], call.getValue()[1], as(role.getValue()));
        assertThat(r.status()).as(call.getKey() + " by " + role.getValue() + ": " + r.body()).isEqualTo(allowed ? 200 : 403);
        if (!allowed) {
          assertThat(r.json().getString("error")).isEqualTo("Insufficient permissions");
          assertThat(send("GET", "/api/v1/timers/acl-q/held", null, rw).json().getBoolean("found"))
              .as("a refused call cancelled nothing: " + call.getKey()).isTrue();
        }
      }
    }
    // refused calls applied none of their operations: only the allowed ones counted
    assertThat(send("GET", "/api/v1/kv/acl/n", null, rw).json().getValue("value")).isEqualTo(2);
    assertThat(send("GET", "/api/v1/timers/acl-q/lvl2", null, rw).json().getBoolean("found")).isTrue();
  }

  @Test
  void aWriteOnlyTokenSchedulesTimersAndTouchesNoState() {
    Map<String, String> wo = as("write-only");
    assertThat(send("POST", "/api/v1/timers", ops(TIMER.copy().put("timerKey", "wo")), wo).status()).isEqualTo(200);
    Map<String, TestNode.Reply> refused = new java.util.LinkedHashMap<>();
    refused.put("POST /kv", send("POST", "/api/v1/kv", ops(PUT), wo));
    refused.put("GET /kv", send("GET", "/api/v1/kv/acl/k", null, wo));
    refused.put("POST /locks", send("POST", "/api/v1/locks", ops(LOCK), wo));
    refused.put("GET /timers", send("GET", "/api/v1/timers/acl-q/wo", null, wo));
    refused.put("DELETE /timers", send("DELETE", "/api/v1/timers/acl-q/wo", null, wo));
    refused.put("POST /timers cancel", send("POST", "/api/v1/timers",
        ops(new JsonObject().put("op", "cancel").put("queue", "acl-q").put("timerKey", "wo")), wo));
    refused.put("kv list", send("POST", "/api/v1/resources/kv/list", new JsonObject().put("namespace", "acl"), wo));
    refused.forEach((what, r) -> assertThat(r.status()).as(what + ": " + r.body()).isEqualTo(403));
    assertThat(send("GET", "/api/v1/timers/acl-q/wo", null, as("read-only")).json().getBoolean("found"))
        .as("the write-only token cancelled nothing").isTrue();
  }
}
