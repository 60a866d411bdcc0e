package io.queenvertx.http;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class RequestIdIT {
  @NodeFixture(env = "QUEEN_ACCESS_LOG=true")
  static TestNode node;
  static final ListAppender<ILoggingEvent> ACCESS = new ListAppender<>();

  @BeforeAll
  static void start() {
    ((Logger) LoggerFactory.getLogger("queen.access")).addAppender(ACCESS);
    ACCESS.start();
  }

  @AfterAll
  static void stop() {
    ((Logger) LoggerFactory.getLogger("queen.access")).detachAppender(ACCESS);
  }

  @Test
  void everyResponseCarriesARequestIdThatIsWrittenInTheAccessLog() {
    var r = node.get("/api/v1/nope");
    String id = r.header("X-Request-Id");
    assertThat(id).startsWith("req_");
    org.awaitility.Awaitility.await().until(() -> ACCESS.list.stream()
        .anyMatch(e -> e.getFormattedMessage().contains("request_id=" + id) && e.getFormattedMessage().contains("404")));
  }

  @Test
  void aClientsOwnRequestIdIsEchoed() {
    var r = node.get("/health", Map.of("X-Request-Id", "trace-abc-123"));
    assertThat(r.header("X-Request-Id")).isEqualTo("trace-abc-123");
    org.awaitility.Awaitility.await().until(() -> ACCESS.list.stream()
        .anyMatch(e -> e.getFormattedMessage().contains("/health 200") && e.getFormattedMessage()
            .contains("request_id=trace-abc-123")));
  }

  @Test
  void anUnusableClientIdIsReplaced() {
    var r = node.get("/health", Map.of("X-Request-Id", "x".repeat(300)));
    assertThat(r.header("X-Request-Id")).startsWith("req_");
  }
}
