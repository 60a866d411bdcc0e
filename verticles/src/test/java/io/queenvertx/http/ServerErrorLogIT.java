package io.queenvertx.http;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.TestNode;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Every 5xx logs its cause once at ERROR with the request id and the method and path; a 4xx is no error log. The 5xx
 * is a real one: the stored procedure behind {@code POST /api/v1/configure} is dropped from the node's own database.
 */
class ServerErrorLogIT {
  static final ListAppender<ILoggingEvent> LOGS = new ListAppender<>();
  static TestNode node;

  @BeforeAll
  static void start() {
    LOGS.start();
    ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).addAppender(LOGS);
    var db = TestDatabase.get().fresh();
    node = TestNode.start(Map.of(), db);
    TestDatabase.execute(db, "DO $$ DECLARE f regprocedure; BEGIN FOR f IN SELECT p.oid::regprocedure FROM pg_proc p "
        + "JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'queen' AND p.proname = 'configure_queue' "
        + "LOOP EXECUTE 'DROP FUNCTION ' || f; END LOOP; END $$");
  }

  @AfterAll
  static void stop() throws Exception {
    ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).detachAppender(LOGS);
    if (node != null) node.close();
  }

  @Test
  void aServerErrorLogsItsCauseOnceWithTheRequestId() {
    var r = node.post("/api/v1/configure", new JsonObject().put("queue", "first-hour-q"));
    assertThat(r.status()).isEqualTo(500);
    String id = r.header("X-Request-Id");
    assertThat(id).isNotBlank();
    // the access line (WARN) is written when the response ends: wait for it, then count the ERROR lines
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> !events(id, Level.WARN).isEmpty());
    List<ILoggingEvent> errors = events(id, Level.ERROR);
    assertThat(errors).hasSize(1);
    ILoggingEvent e = errors.get(0);
    assertThat(e.getFormattedMessage()).contains("POST /api/v1/configure 500").contains("configure_queue")
        .contains("request_id=" + id);
    assertThat(e.getThrowableProxy()).as("the SQL failure's stack trace").isNotNull();
  }

  @Test
  void aClientErrorIsNoErrorLog() {
    var r = node.post("/api/v1/configure", "{not json");
    assertThat(r.status()).isEqualTo(400);
    String id = r.header("X-Request-Id");
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> !events(id, Level.INFO).isEmpty());
    assertThat(events(id, Level.ERROR)).isEmpty();
  }

  private static List<ILoggingEvent> events(String requestId, Level level) {
    synchronized (LOGS) {
      return List.copyOf(LOGS.list).stream()
          .filter(e -> e.getLevel() == level && e.getFormattedMessage().contains(requestId)).toList();
    }
  }
}
