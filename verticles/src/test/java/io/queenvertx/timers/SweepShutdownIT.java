package io.queenvertx.timers;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.queenvertx.maintenance.RetentionVerticle;
import io.queenvertx.testing.TestNode;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * A node that stops says nothing alarming: the timer sweep and the retention cycle (its key-value and lock sweeps)
 * finish the call they are in before the pool closes, and start none after, so a stop never logs
 * {@code timer sweep failed: ... Pool closed} or {@code retention cycle failed}.
 */
class SweepShutdownIT {
  @Test
  void stoppingANodeWhileItsSweepsRunLogsNoWarning() {
    ListAppender<ILoggingEvent> logs = new ListAppender<>();
    List<Logger> loggers = List.of((Logger) LoggerFactory.getLogger(TimerFiringVerticle.class),
        (Logger) LoggerFactory.getLogger(RetentionVerticle.class));
    logs.start();
    loggers.forEach(l -> l.addAppender(logs));
    try {
      // the shortest periods, so a sweep is in flight (or about to start) whenever the node stops
      for (int i = 0; i < 4; i++) {
        TestNode node = TestNode.start(Map.of("QUEEN_TIMER_POLL_MS", "10", "RETENTION_INTERVAL", "100"));
        node.close();
      }
    } finally {
      loggers.forEach(l -> l.detachAppender(logs));
    }
    assertThat(logs.list.stream().filter(e -> e.getLevel().isGreaterOrEqual(Level.WARN))
        .map(ILoggingEvent::getFormattedMessage)).isEmpty();
  }
}
