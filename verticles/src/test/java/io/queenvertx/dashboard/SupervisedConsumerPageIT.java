package io.queenvertx.dashboard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queenvertx.clients.JsClientProject;
import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;

/**
 * Issue 36's acceptance, "the supervision record appearing on the Consumers page (Chromium)": Queen's own 2.x
 * JavaScript client ({@code clients-test/js2/scripts/supervised-consumer.mjs}, a consume loop started with
 * {@code .supervision({group: app})}) runs in a node process against a real node, and the dashboard in Chromium shows
 * its record as the client wrote it: running while it consumes, stopped once its loop's signal is aborted.
 */
class SupervisedConsumerPageIT {
  @NodeFixture
  static TestNode node;

  @BrowserFixture
  static Browser browser;

  static JsClientProject project;

  @BeforeAll
  static void install() throws Exception {
    project = JsClientProject.js2();
    project.install();
  }

  /** The text of a cell of the row, read again if the page's refresh redrew it in between. */
  static String cell(String rowCss, String cellCss) {
    return browser.until(d -> d.findElement(By.cssSelector(rowCss + " " + cellCss)).getText());
  }

  /** Waits until the consumer printed {@code line} (a line of its own); its output so far in the failure. */
  static void printed(JsClientProject.Child consumer, String line) throws Exception {
    try {
      await("`" + line + "` from the supervised consumer").atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofMillis(100))
          .until(() -> List.of(consumer.output().split("\n")).contains(line) || !alive(consumer, line));
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      throw new AssertionError(e.getMessage() + "; it printed:\n" + consumer.output(), e);
    }
  }

  /** True while the process runs; once it has ended without the awaited line, fails with its output. */
  static boolean alive(JsClientProject.Child consumer, String awaited) throws Exception {
    int exit = consumer.waitFor(Duration.ZERO);
    if (exit == -1) return true;
    throw new AssertionError("the supervised consumer exited " + exit + " before printing `" + awaited + "`:\n"
        + consumer.output());
  }

  /**
   * Waits until the row's State cell reads {@code state}; fails with what the page's list showed and what the consumer
   * printed.
   */
  static void stateShows(String row, String state, JsClientProject.Child consumer) throws Exception {
    try {
      browser.until(d -> state.equals(d.findElement(By.cssSelector(row + " td.state")).getText()));
    } catch (org.openqa.selenium.TimeoutException e) {
      throw new AssertionError("no row " + row + " in state " + state + " on the Consumers page; its list:\n"
          + browser.driver.findElement(By.id("consumers-list")).getText() + "\n--- the consumer printed:\n"
          + consumer.output(), e);
    }
  }

  @Test
  void queensClientSupervisedConsumerShowsRunningOnTheConsumersPageThenStoppedAfterItsLoopIsAborted()
      throws Exception {
    String tag = Fixtures.hex32().substring(0, 8);
    String queue = "sup-orders-" + tag;
    String group = "billing-" + tag;
    String app = "invoicer-" + tag;
    try (JsClientProject.Child consumer = project.start(
        List.of("node", "scripts/supervised-consumer.mjs", queue, group, app), Map.of("QUEEN_URL", node.baseUrl()))) {
      printed(consumer, "consuming " + queue + " " + group + " " + app);

      browser.page("consumers");
      String row = "tr[data-group='" + app + "']";
      stateShows(row, "running", consumer);
      assertThat(browser.all(row)).as("one instance, one pool").hasSize(1);
      assertThat(browser.waitFor(row).getAttribute("data-instance")).matches("[0-9a-f]{32}");
      assertThat(browser.waitFor(row).getAttribute("data-stale")).isEqualTo("false");
      // the cells the record of that very process carries: application, pid, queue, group, concurrency 1
      List<String> cells = browser.until(d -> d.findElements(By.cssSelector(row + " td")).stream()
          .map(e -> e.getText()).toList());
      assertThat(cells).as("Application, Host, PID, Queue, Consumer group, In flight, Running / desired, ...")
          .hasSize(11);
      assertThat(cells.get(0)).isEqualTo(app);
      assertThat(cells.get(1)).isNotBlank();
      assertThat(cells.get(2).replace(",", "")).isEqualTo(Long.toString(consumer.pid()));
      assertThat(cells.get(3)).isEqualTo(queue);
      assertThat(cells.get(4)).isEqualTo(group);
      assertThat(cells.get(6)).isEqualTo("1 / 1");
      assertThat(cells.get(7)).isEqualTo("0");

      for (int n = 1; n <= 3; n++) {
        Fixtures.push(node, queue, queue + "-" + n, new JsonObject().put("n", n), Map.of());
      }
      printed(consumer, "handled 3");
      // the loop's signal aborted: the client writes its record once more, state stopped, and the loop ends
      consumer.send("stop");
      assertThat(consumer.waitFor(Duration.ofSeconds(30))).as("the consumer's exit; its output:\n%s",
          consumer.output()).isZero();
      assertThat(consumer.output()).contains("stopped 3");

      // the page picks the stopped record up on its own refresh, no reload
      stateShows(row, "stopped", consumer);
      assertThat(cell(row, "td:nth-child(8)")).as("completed").isEqualTo("3");
      assertThat(browser.waitFor(row).getAttribute("data-stale")).isEqualTo("false");
      assertThat(cell(row, "td:nth-child(1)")).isEqualTo(app);
      assertThat(cell(row, "td:nth-child(4)")).isEqualTo(queue);
      assertThat(cell(row, "td:nth-child(5)")).isEqualTo(group);
    }
  }
}
