package io.queenvertx.state;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.queenvertx.http.server.ErrorContract;
import io.queenvertx.testing.StoppableDatabase;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.TestNode.Reply;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The key-value, timer and lock routes while PostgreSQL is away (docs/design/queen2-contract.md §1.3): every one answers
 * 503 {@code <family>_unavailable} with {@code Retry-After: 1} and the family's envelope ({@code error} = {@code code}
 * = {@code reason}, a {@code detail}), which Queen's 2.x clients retry; never a 500, a 4xx or a hang. The database is
 * stopped under a running node, as {@code DatabaseOutageIT} does.
 */
class StateUnavailableIT {
  static JsonObject ops(JsonObject op) {
    return new JsonObject().put("operations", new JsonArray().add(op));
  }

  static final JsonObject PUT = new JsonObject().put("op", "put").put("ns", "out").put("key", "k").put("value", 1)
      .put("forever", true);
  static final JsonObject LOCK = new JsonObject().put("op", "acquire").put("name", "out").put("ttlSeconds", 30);
  static final JsonObject TIMER = new JsonObject().put("op", "schedule").put("queue", "out-q").put("timerKey", "k")
      .put("delayMs", 60_000).put("txn", "t1")
      .put("payload", Base64.getEncoder().encodeToString("{\"a\":1}".getBytes(StandardCharsets.UTF_8)));

  /** One call of each state route, named by its family and route. */
  static Map<String, Reply> calls(TestNode node) {
    Map<String, Reply> r = new LinkedHashMap<>();
    r.put("kv POST /api/v1/kv", node.post("/api/v1/kv", ops(PUT)));
    r.put("kv GET /api/v1/kv/out/k", node.get("/api/v1/kv/out/k"));
    r.put("kv PUT /api/v1/kv/out/k", KvIT.send(node, "PUT", "/api/v1/kv/out/k",
        new JsonObject().put("value", 2).put("forever", true)));
    r.put("kv DELETE /api/v1/kv/out/gone", node.delete("/api/v1/kv/out/gone"));
    r.put("kv GET /api/v1/resources/kv/namespaces", node.get("/api/v1/resources/kv/namespaces"));
    r.put("kv POST /api/v1/resources/kv/list", node.post("/api/v1/resources/kv/list",
        new JsonObject().put("namespace", "out")));
    r.put("timers POST /api/v1/timers", node.post("/api/v1/timers", ops(TIMER)));
    r.put("timers GET /api/v1/timers/out-q", node.get("/api/v1/timers/out-q"));
    r.put("timers GET /api/v1/timers/out-q/k", node.get("/api/v1/timers/out-q/k"));
    r.put("timers DELETE /api/v1/timers/out-q/gone", node.delete("/api/v1/timers/out-q/gone"));
    r.put("locks POST /api/v1/locks", node.post("/api/v1/locks", ops(LOCK)));
    return r;
  }

  @Test
  void everyStateRouteAnswers503WithRetryAfterWhileTheDatabaseIsDown() throws Exception {
    try (var pg = new StoppableDatabase(); var node = TestNode.start(Map.of(), pg.config())) {
      calls(node).forEach((what, r) -> assertThat(r.status()).as("up: " + what + ": " + r.body()).isEqualTo(200));
      pg.stop();
      var errorLines = new ListAppender<ILoggingEvent>();
      errorLines.start();
      Logger contract = (Logger) LoggerFactory.getLogger(ErrorContract.class);
      contract.addAppender(errorLines);
      Map<String, Reply> down;
      try {
        down = calls(node);
      } finally {
        contract.detachAppender(errorLines);
      }
      // an outage answers each call 503 like the key-value routes always did: no ERROR line (with its stack trace)
      // per request from any family
      assertThat(List.copyOf(errorLines.list).stream().filter(e -> e.getLevel() == Level.ERROR)
          .map(ILoggingEvent::getFormattedMessage)).isEmpty();
      down.forEach((what, r) -> {
        String family = what.substring(0, what.indexOf(' '));
        String code = family + "_unavailable";
        assertThat(r.status()).as(what + ": " + r.body()).isEqualTo(503);
        assertThat(r.header("Retry-After")).as(what).isEqualTo("1");
        JsonObject body = r.json();
        assertThat(body.getString("error")).as(what).isEqualTo(code);
        assertThat(body.getString("code")).as(what).isEqualTo(code);
        assertThat(body.getString("reason")).as(what).isEqualTo(code);
        assertThat(body.getString("detail")).as(what).isNotBlank();
      });
    }
  }
}
