package io.queenvertx.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.TestNode;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;

/**
 * The operator's dashboard (issue 21) in a real headless Chromium against a real node on its own database: every
 * check reads the page the way an operator would, and side effects are confirmed through the API.
 */
class DashboardIT {
  @NodeFixture(freshDatabase = true)
  static TestNode node;

  @BrowserFixture
  static Browser browser;

  static String unique(String prefix) {
    return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  @Test
  void theOverviewShowsAQueueCreatedByTheTestWithItsDepth() {
    String q = unique("orders");
    for (int i = 0; i < 3; i++) Fixtures.push(node, q, q + "-" + i, new JsonObject().put("amount", 40 + i), Map.of());
    Fixtures.push(node, unique("billing.invoices"), "inv-1", new JsonObject().put("amount", 1), Map.of());
    String failing = unique("charges");
    Fixtures.deadLetters(node, failing, 2, Map.of());
    String oldest = TestDatabase.queryString(Fixtures.db(node), "SELECT queen._log_ts(failed_at) FROM queen.log_dlq "
        + "WHERE transaction_id = '" + failing + "-1'");
    browser.page("");
    browser.waitText("tr[data-queue='" + q + "'] td.depth", "3");
    // the oldest dead letter's age (the fixture files it an hour ago) with its time as the title; none for q
    browser.waitText("tr[data-queue='" + failing + "'] td.dlq-oldest", "1.0 h");
    assertThat(browser.driver.findElement(By.cssSelector("tr[data-queue='" + failing + "'] td.dlq-oldest span"))
        .getAttribute("title")).isEqualTo(oldest);
    assertThat(browser.driver.findElement(By.cssSelector("tr[data-queue='" + q + "'] td.dlq-oldest")).getText())
        .isEqualTo("—");
    browser.waitFor("#throughput-chart .uplot");
  }

  @Test
  void theMessageBrowserFindsAPushedMessageByQueueAndShowsItsPayload() {
    String q = unique("shipments");
    String txn = unique("ship");
    Fixtures.push(node, q, txn, new JsonObject().put("order", 4471).put("carrier", "dashboard-express"), Map.of());
    Fixtures.push(node, q, unique("ship"), new JsonObject().put("order", 4472).put("carrier", "other"), Map.of());
    browser.page("messages");
    browser.waitFor("#f-queue").sendKeys(q);
    browser.driver.findElement(By.id("f-apply")).click();
    browser.waitFor("tr[data-txn='" + txn + "']").click();
    browser.waitText("#drawer pre.payload", "dashboard-express");
    assertThat(browser.driver.findElement(By.cssSelector("#drawer pre.payload")).getText()).contains("4471");
    browser.screenshot("messages");
  }

  @Test
  void aReplayFromTheDlqPageShowsMovedAndTheRowGoesAndAStaleSecondReplayShowsGone() {
    String q = unique("payments");
    Fixtures.deadLetters(node, q, 5, Map.of());
    String first = Fixtures.dlqId(node, q + "-5");
    String second = Fixtures.dlqId(node, q + "-4");
    browser.page("dlq?queue=" + q);
    row(first).findElement(By.cssSelector("button.replay")).click();
    browser.waitFor("#outcome .outcome[data-result='moved'][data-dlq-id='" + first + "']");
    browser.waitGone("tr[data-dlq-id='" + first + "']");
    assertThat(Fixtures.dlqId(node, q + "-5")).as("the row left the DLQ").isNull();
    browser.screenshot("dlq");

    // the page still shows the second row; someone else replays it first (stale page)
    WebElement stale = row(second);
    assertThat(node.post("/api/v1/dlq/" + second + "/replay", "").status()).isEqualTo(200);
    stale.findElement(By.cssSelector("button.replay")).click();
    browser.waitFor("#outcome .outcome[data-result='gone'][data-dlq-id='" + second + "']");
    assertThat(browser.driver.findElement(By.id("outcome")).getText()).startsWith("gone");
  }

  @Test
  void aReplayToAnotherQueueLandsThere() {
    String q = unique("refunds");
    String dst = unique("refunds.retry");
    Fixtures.deadLetters(node, q, 2, Map.of());
    String id = Fixtures.dlqId(node, q + "-1");
    browser.page("dlq?queue=" + q);
    WebElement tr = row(id);
    tr.findElement(By.cssSelector("button.replay-to")).click();
    WebElement dest = browser.waitFor("tr[data-dlq-id='" + id + "'] input.dest-queue");
    dest.clear();
    dest.sendKeys(dst);
    browser.driver.findElement(By.cssSelector("tr[data-dlq-id='" + id + "'] button.dest-go")).click();
    browser.waitFor("#outcome .outcome[data-result='moved'][data-dlq-id='" + id + "']");
    assertThat(browser.driver.findElement(By.id("outcome")).getText()).contains(dst);
    var landed = node.get("/api/v1/messages?queue=" + dst).json().getJsonArray("messages");
    assertThat(landed).hasSize(1);
    assertThat(landed.getJsonObject(0).getString("transactionId")).isEqualTo("dlq:" + id);
    assertThat(landed.getJsonObject(0).getJsonObject("payload").getInteger("order")).isEqualTo(1);
  }

  @Test
  void aBulkRedriveShowsItsProgressToCompletion() {
    String q = unique("bulk");
    String dst = unique("bulk.retry");
    Fixtures.deadLetters(node, q, 300, Map.of());
    browser.page("dlq?queue=" + q);
    browser.waitFor("#redrive-dest").sendKeys(dst);
    WebElement rate = browser.waitFor("#redrive-rate");
    rate.clear();
    rate.sendKeys("100");
    browser.driver.findElement(By.id("redrive-start")).click();
    // part-way: running, some rows moved, the bar between empty and full
    browser.until(d -> {
      var s = d.findElements(By.cssSelector("#redrive-status[data-status='running']"));
      if (s.isEmpty()) return false;
      double value = Double.parseDouble(d.findElement(By.id("redrive-progress")).getAttribute("value"));
      return value > 0 && value < 300;
    });
    browser.waitFor("#redrive-status[data-status='completed']");
    String status = browser.driver.findElement(By.id("redrive-status")).getText();
    assertThat(status).contains("moved 300").contains("failed 0");
    WebElement bar = browser.driver.findElement(By.id("redrive-progress"));
    assertThat(bar.getAttribute("value")).isEqualTo(bar.getAttribute("max")).isEqualTo("300");
    assertThat(Fixtures.dlqRows(node, q)).isZero();
  }

  @Test
  void unknownApiPathsStay404JsonAndClientRoutesServeTheApp() {
    var api = node.get("/api/v1/no-such-thing");
    assertThat(api.status()).isEqualTo(404);
    assertThat(api.json().getString("code")).isEqualTo("no_such_route");
    var post = node.post("/some/client/route", "{}");
    assertThat(post.status()).isEqualTo(404);
    assertThat(post.json().getString("code")).isEqualTo("no_such_route");
    var page = node.get("/some/client/route");
    assertThat(page.status()).isEqualTo(200);
    assertThat(page.header("content-type")).startsWith("text/html");
    assertThat(page.body()).contains("/assets/app.js");
    assertThat(node.get("/assets/app.js").header("content-type")).contains("javascript");
    assertThat(node.get("/assets/vendor/uplot/uPlot.esm.js").status()).isEqualTo(200);
    assertThat(node.get("/assets/no-such.js").status()).isEqualTo(404);
    assertThat(node.get("/health").json().getString("status")).isEqualTo("healthy");
    // a path route is the same page as its hash route
    browser.url("/dlq");
    browser.waitText("main h1", "Dead letters");
  }

  static WebElement row(String dlqId) {
    return browser.waitFor("tr[data-dlq-id='" + dlqId + "']");
  }
}
