package io.queenvertx.dashboard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.TestNode;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;

/**
 * Issue 38, an operator's day in the dashboard: create a queue and push a test message from the UI and find both
 * listed; cards and tables that follow the broker without a reload (and hold still while a form is being edited);
 * one empty state for a queue that does not exist; times shown with their zone; cursors, lag charts and group states
 * that read as the figures beside them. On a database of its own, so the overview's first page is this class's.
 */
class DashboardOperatorIT {
  @NodeFixture(freshDatabase = true)
  static TestNode node;

  @BrowserFixture
  static Browser browser;

  static String text(String css) {
    return (String) browser.js("const e = document.querySelector(arguments[0]); return e ? e.textContent : ''", css);
  }

  /** When the page's figures were last loaded (epoch ms), from the stamp in the top bar. */
  static String stampAt() {
    return (String) browser.js("return document.getElementById('last-updated').dataset.at");
  }

  static void type(String css, String value) {
    WebElement e = browser.waitFor(css);
    e.clear();
    e.sendKeys(value);
  }

  static void pushN(String queue, int n, String prefix) {
    pushN(queue, "Default", n, prefix);
  }

  static void pushN(String queue, String partition, int n, String prefix) {
    JsonArray items = new JsonArray();
    for (int i = 0; i < n; i++) {
      items.add(new JsonObject().put("queue", queue).put("partition", partition).put("transactionId", prefix + "-" + i)
          .put("payload", i));
    }
    assertThat(node.post("/api/v1/push", new JsonObject().put("items", items)).status()).isEqualTo(201);
  }

  /** Opens the overview's "Create queue" drawer and names a new queue there; returns the name. */
  static String createQueueDrawer(String prefix) {
    String q = DashboardIT.unique(prefix);
    browser.page("");
    browser.waitFor("#open-create-queue").click();
    type("#cq-name", q);
    return q;
  }

  @Test
  void aQueueCreatedAndAMessagePushedFromTheUiAreListed() {
    String q = createQueueDrawer("ui-orders");
    type("#cq-leaseTime", "45");
    type("#cq-retryLimit", "2");
    new org.openqa.selenium.support.ui.Select(browser.waitFor("#cq-deadLetterQueue")).selectByValue("false");
    browser.waitFor("#cq-go").click();
    browser.waitFor("#cq-outcome .outcome[data-kind='ok']");
    JsonObject options = node.get("/api/v1/resources/queues/" + q).json().getJsonObject("options");
    assertThat(options.getInteger("leaseTime")).isEqualTo(45);
    assertThat(options.getInteger("retryLimit")).isEqualTo(2);
    assertThat(options.getBoolean("deadLetterQueue")).isFalse();
    assertThat(options.getInteger("retryDelay")).as("untouched fields keep their default").isEqualTo(1000);

    // from the drawer straight to a test push: partition, transaction id and payload typed in
    browser.waitFor("#cq-push").click();
    type("#push-partition", "eu-west");
    type("#push-txn", "ui-push-1");
    type("#push-payload", "{\"order\": 7, \"note\": \"from the dashboard\"}");
    browser.waitText("#push-payload-check", "valid JSON");
    browser.waitFor("#push-go").click();
    browser.waitFor("#push-outcome .outcome[data-status='queued']");
    var listed = node.get("/api/v1/messages?queue=" + q).json().getJsonArray("messages");
    assertThat(listed).hasSize(1);
    JsonObject m = listed.getJsonObject(0);
    assertThat(m.getString("transactionId")).isEqualTo("ui-push-1");
    assertThat(m.getString("partition")).isEqualTo("eu-west");
    assertThat(m.getJsonObject("payload")).isEqualTo(new JsonObject().put("order", 7).put("note", "from the dashboard"));

    // the overview lists the queue with its message, without a reload
    browser.driver.findElement(By.cssSelector("#drawer button.close")).click();
    browser.waitText("tr[data-queue='" + q + "'] td.depth", "1");
    // and the message browser shows it
    browser.page("messages?queue=" + q + "&search=1");
    browser.waitFor("#f-apply").click();
    browser.waitFor("tr[data-txn='ui-push-1']");
  }

  @Test
  void badInputIsRefusedInlineAndNothingIsCreated() {
    String q = createQueueDrawer("ui-bad");
    // the form's own check: the field says what is wrong, nothing is sent
    type("#cq-leaseTime", "soon");
    browser.waitFor("#cq-go").click();
    browser.waitText("#cq-leaseTime-error", "a whole number");
    assertThat(node.get("/api/v1/resources/queues/" + q).status()).isEqualTo(404);
    // raw JSON goes to the broker as typed; its 400 names the option and is shown in the form, not as a banner
    type("#cq-leaseTime", "");
    browser.waitFor("#cq-raw-toggle").click();
    type("#cq-raw", "{\"retryLimit\": 1.5}");
    browser.waitFor("#cq-go").click();
    browser.waitText("#cq-outcome .outcome[data-kind='error']", "retryLimit must be an integer");
    assertThat(browser.driver.findElement(By.id("banner")).isDisplayed()).isFalse();
    assertThat(node.get("/api/v1/resources/queues/" + q).status()).isEqualTo(404);
    // the payload editor refuses what is not JSON before sending
    browser.page("");
    browser.waitFor("#open-push").click();
    type("#push-queue", q);
    type("#push-payload", "{\"order\": ");
    browser.waitText("#push-payload-check", "not JSON");
    browser.waitFor("#push-go").click();
    browser.waitText("#push-outcome", "not JSON");
    assertThat(node.get("/api/v1/resources/queues/" + q).status()).isEqualTo(404);
  }

  @Test
  void cardsAndTablesFollowTheBrokerWithoutAReloadAndHoldStillWhileAFieldIsEdited() {
    browser.page("");
    browser.waitFor("#stat-queues");
    browser.js("window.__sameDocument = true");
    String q = DashboardIT.unique("ui-refresh");
    pushN(q, 1160, "first");
    // the default period is 5 s: the new queue shows within a few of them
    browser.waitText("tr[data-queue='" + q + "'] td.depth", "1,160");
    assertThat(browser.js("return window.__sameDocument")).as("no reload").isEqualTo(true);
    String stamp = text("#last-updated");
    assertThat(stamp).matches("Updated \\d\\d:\\d\\d:\\d\\d (EST|EDT)");

    // while the filter field has focus nothing reloads, and the bar says so; once it is left, the figures move on
    browser.waitFor("#q-filter").click();
    // a refresh begun before the click may still land: take the stamp once it holds still
    var last = new java.util.concurrent.atomic.AtomicReference<String>("");
    await().during(Duration.ofMillis(1500)).atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100))
        .until(() -> { String now = stampAt(); return now.equals(last.getAndSet(now)); });
    String at = last.get();
    pushN(q, 40, "more");
    await().during(Duration.ofSeconds(7)).atMost(Duration.ofSeconds(9)).pollInterval(Duration.ofMillis(250))
        .until(() -> text("tr[data-queue='" + q + "'] td.depth").equals("1,160") && at.equals(stampAt()));
    assertThat(browser.driver.findElement(By.id("refresh-paused")).isDisplayed()).isTrue();
    browser.waitFor("#totals").click();
    browser.waitText("tr[data-queue='" + q + "'] td.depth", "1,200");
    browser.waitGone("#refresh-paused:not([hidden])");
  }

  @Test
  void anUnknownQueueIsOneEmptyStateFromWhichItCanBeMade() {
    String q = DashboardIT.unique("ui-nowhere");
    browser.page("queue?name=" + q);
    browser.waitFor("#queue-empty");
    assertThat(text("#queue-empty")).contains("There is no queue named “" + q + "”");
    assertThat(browser.all("main .outcome[data-kind='error']")).isEmpty();
    assertThat(text("main")).doesNotContainPattern("\\b404\\b").doesNotContainIgnoringCase("not found");
    // pushing to it from the empty state makes the queue, and the page becomes its detail
    browser.waitFor("#empty-push").click();
    browser.waitFor("#push-go").click();
    browser.waitFor("tr[data-partition='Default']");
    assertThat(browser.all("#queue-empty")).isEmpty();
    assertThat(node.get("/api/v1/resources/queues/" + q).status()).isEqualTo(200);
  }

  @Test
  void timesCarryTheirZoneAndTheUtcInstantInTheTooltip() {
    String q = DashboardIT.unique("ui-times");
    Fixtures.push(node, q, "t-1", new JsonObject().put("x", 1), Map.of());
    String created = node.get("/api/v1/messages?queue=" + q).json().getJsonArray("messages").getJsonObject(0)
        .getString("createdAt");
    Instant instant = Instant.parse(created);
    var zone = ZoneId.of(Browser.ZONE);
    String local = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss zzz", Locale.US).format(instant.atZone(zone));
    String utc = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(java.time.ZoneOffset.UTC)
        .format(instant);
    browser.page("messages?queue=" + q);
    WebElement t = browser.waitFor("tr[data-txn='t-1'] time");
    assertThat(t.getText()).isEqualTo(local);
    assertThat(t.getAttribute("title")).isEqualTo(utc + " (UTC)");
    assertThat(t.getAttribute("datetime")).isEqualTo(utc);
    // the stamp of the last load, and the queue page's partition times, name the zone too
    String abbreviation = DateTimeFormatter.ofPattern("zzz", Locale.US).format(Instant.now().atZone(zone));
    assertThat(text("#last-updated")).endsWith(" " + abbreviation);
    browser.page("queue?name=" + q);
    assertThat(browser.waitFor("tr[data-partition='Default'] time").getText()).endsWith(" " + abbreviation);
  }

  @Test
  void cursorsLagChartsAndGroupStatesReadAsTheirFigures() {
    String q = DashboardIT.unique("ui-lag");
    pushN(q, 40, "lag");
    // two groups 40 messages behind, their oldest waiting two minutes: the same figures, the same state
    for (String g : new String[] {"alpha", "beta"}) {
      var r = node.get("/api/v1/pop/queue/" + q + "?consumerGroup=" + g + "-" + q
          + "&subscriptionMode=all&batch=1&wait=false");
      assertThat(r.status()).isEqualTo(200);
    }
    TestDatabase.execute(Fixtures.db(node), "UPDATE queen.log_segments s SET created_at = s.created_at - interval "
        + "'2 minutes' FROM queen.log_partitions p JOIN queen.queues qq ON qq.id = p.queue_id WHERE p.id = s.partition_id "
        + "AND qq.name = '" + q + "'");
    browser.page("");
    browser.waitFor("#lagging-section tr[data-group='alpha-" + q + "'] td.state");
    browser.waitFor("#lagging-section tr[data-group='beta-" + q + "'] td.state");
    assertThat(text("#lagging-section tr[data-group='alpha-" + q + "'] td.state")).isEqualTo("Lagging");
    assertThat(text("#lagging-section tr[data-group='beta-" + q + "'] td.state")).isEqualTo("Lagging");

    // queue mode has consumed nothing: its cursor reads "none yet"; lags of 40 and 42 draw from 0, not from 40
    pushN(q, "eu", 42, "eu");
    browser.page("queue?name=" + q);
    browser.waitText("tr[data-partition='Default'] td.committed", "none yet");
    browser.waitText("tr[data-partition='eu'] td.pending", "42");
    browser.waitFor("#lag-chart .uplot");
    @SuppressWarnings("unchecked")
    var y = (Map<String, Object>) browser.js("const u = document.getElementById('lag-chart').__uplot;"
        + "return {min: u.scales.y.min, max: u.scales.y.max, label: u.series[1].label}");
    assertThat(((Number) y.get("min")).doubleValue()).isZero();
    assertThat(((Number) y.get("max")).doubleValue()).isGreaterThan(42.0);
    assertThat((String) y.get("label")).isEqualTo("messages not yet consumed in queue mode");

    // a group that consumed everything (both partitions, 82 messages) is "Caught up": not the word of a group 40
    // messages behind
    var all = node.get("/api/v1/pop/queue/" + q + "?consumerGroup=gamma-" + q
        + "&subscriptionMode=all&batch=100&partitions=0&wait=false&autoAck=true");
    assertThat(all.status()).isEqualTo(200);
    assertThat(node.get("/api/v1/consumer-groups/gamma-" + q).json().getLong("totalLag")).isZero();
    browser.page("groups?name=gamma-" + q);
    browser.waitText("#group-summary .state", "Caught up");
    browser.page("groups?name=alpha-" + q);
    browser.waitText("#group-summary .state", "Lagging");
    assertThat(text("section[data-queue='" + q + "'] td.lag")).isEqualTo("40");
  }
}
