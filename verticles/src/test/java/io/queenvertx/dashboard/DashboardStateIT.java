package io.queenvertx.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.TestNode;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;

/**
 * Issue 36, item 8: the Consumers page shows the supervision records 2.x consumers write into the key-value namespace
 * {@code queen-supervisor} (stale ones marked, by the record's own heartbeat time), and the Key-value, Timers and
 * Locks pages browse by prefix, page, and delete or cancel after a confirmation, through the public API only.
 */
class DashboardStateIT {
  /** No retention cycle during the tests: it would sweep the expired entry the Key-value page must show greyed. */
  @NodeFixture(env = {"RETENTION_INTERVAL=3600000"})
  static TestNode node;

  @BrowserFixture
  static Browser browser;

  static String hex32() {
    return Fixtures.hex32();
  }

  static JsonArray kv(JsonObject... ops) {
    return Fixtures.kv(node, ops);
  }

  static JsonObject put(String ns, String key, Object value) {
    return new JsonObject().put("op", "put").put("ns", ns).put("key", key).put("value", value).put("forever", true);
  }

  static void supervise(String group, String instance, long updatedAt, String state, int busy) {
    Fixtures.supervise(node, group, instance, "host-" + instance.substring(0, 6), updatedAt, state, busy);
  }

  /** The text of the element, read again if the page's refresh redrew it in between. */
  static String row(String css) {
    return browser.until(d -> {
      String t = d.findElement(By.cssSelector(css)).getText();
      return t.isEmpty() ? null : t;
    });
  }

  static String attr(String css, String name) {
    return browser.until(d -> d.findElement(By.cssSelector(css)).getAttribute(name));
  }

  static void type(String css, String value) {
    WebElement e = browser.waitFor(css);
    e.clear();
    e.sendKeys(value);
  }

  /** Clicks the row's danger button, then "Yes" in the question it turns into. */
  static void confirm(String rowCss, String buttonClass) {
    browser.waitFor(rowCss + " button." + buttonClass).click();
    browser.waitText(rowCss + " .confirm", "?");
    browser.waitFor(rowCss + " .confirm-yes").click();
  }

  @Test
  void aSupervisionRecordAppearsOnTheConsumersPageAndTurnsStaleWhenItsHeartbeatIsOld() {
    String group = "billing-app-" + hex32().substring(0, 6);
    String live = hex32();
    String old = hex32();
    String stopped = hex32();
    long now = System.currentTimeMillis() / 1000;
    supervise(group, live, now, "running", 3);
    supervise(group, old, now - 45, "running", 0);
    supervise(group, stopped, now - 45, "stopped", 0);

    browser.page("consumers");
    String liveRow = "tr[data-instance='" + live + "']";
    browser.waitFor(liveRow);
    assertThat(row(liveRow)).contains(group, "host-" + live.substring(0, 6), "4242", "orders-" + group, "billing",
        "8 / 8", "1,234");
    assertThat(row(liveRow + " td.busy")).isEqualTo("3");
    assertThat(attr(liveRow, "data-stale")).isEqualTo("false");
    assertThat(browser.all(liveRow + " .stale-mark")).isEmpty();
    // 45 s without a heartbeat, over the record's own 30 s timeout: stale; a consumer that said it stopped is not
    assertThat(attr("tr[data-instance='" + old + "']", "data-stale")).isEqualTo("true");
    assertThat(row("tr[data-instance='" + old + "'] td.heartbeat")).contains("STALE");
    assertThat(attr("tr[data-instance='" + stopped + "']", "data-stale")).isEqualTo("false");
    assertThat(row("tr[data-instance='" + stopped + "']")).contains("stopped");
    browser.screenshot("consumers");

    // the live consumer's next write carries a heartbeat 31 s old: the page marks it on its next refresh, no reload
    supervise(group, live, now - 31, "running", 1);
    browser.until(d -> "true".equals(d.findElement(By.cssSelector(liveRow)).getAttribute("data-stale")));
    assertThat(row(liveRow + " td.heartbeat")).contains("STALE");
    assertThat(row(liveRow + " td.busy")).isEqualTo("1");
  }

  @Test
  void keyValueEntriesAreFoundByPrefixPagedAndDeletedAfterAConfirmationAtTheVersionShown() {
    String ns = "dash-" + hex32().substring(0, 8);
    JsonObject[] ops = new JsonObject[64];
    for (int i = 0; i < 60; i++) ops[i] = put(ns, String.format("order/%03d", i), new JsonObject().put("n", i));
    ops[60] = put(ns, "user/1", "ada");
    ops[61] = put(ns, "user/2", "bob");
    ops[62] = put(ns, "cart/1", new JsonArray().add(1));
    ops[63] = put(ns, "cart/2", "gone soon");
    kv(ops);
    // an entry past its deadline that no sweep has deleted yet: shown greyed as expired
    TestDatabase.execute(Fixtures.db(node), "UPDATE queen.kv_entries SET expires_at = now() - interval '1 second' "
        + "WHERE namespace = '" + ns + "' AND key = 'cart/2'");

    browser.page("kv?ns=" + ns);
    browser.waitFor("tr[data-key='cart/1']");
    assertThat(browser.waitFor("tr[data-key='cart/2']").getAttribute("data-expired")).isEqualTo("true");
    assertThat(browser.waitFor("tr[data-key='cart/1']").getAttribute("data-expired")).isEqualTo("false");
    assertThat(browser.waitFor("#kv-ns").getText()).contains(ns + " (64 keys)");

    type("#kv-prefix", "user/");
    browser.waitFor("#kv-apply").click();
    browser.until(d -> d.findElements(By.cssSelector("tr[data-key='cart/1']")).isEmpty());
    assertThat(browser.all("#kv-list tr[data-key]")).extracting(e -> e.getAttribute("data-key"))
        .containsExactly("user/1", "user/2");

    // 60 keys under order/: 50 on the first page, the other 10 on the next, and back
    type("#kv-prefix", "order/");
    browser.waitFor("#kv-apply").click();
    browser.waitFor("tr[data-key='order/049']");
    assertThat(browser.all("#kv-list tr[data-key]")).hasSize(50);
    assertThat(browser.all("tr[data-key='order/050']")).isEmpty();
    browser.waitFor("#kv-list button.next").click();
    browser.waitFor("tr[data-key='order/059']");
    assertThat(browser.all("#kv-list tr[data-key]")).hasSize(10);
    assertThat(browser.waitFor("#kv-list button.next").isEnabled()).isFalse();
    browser.waitFor("#kv-list button.prev").click();
    browser.waitFor("tr[data-key='order/000']");

    // delete with a confirmation: the first click only asks
    String target = "tr[data-key='order/007']";
    browser.waitFor(target + " button.kv-delete").click();
    browser.waitText(target + " .confirm", "Delete order/007?");
    assertThat(getKey(ns, "order/007").getBoolean("found")).isTrue();
    browser.waitFor(target + " .confirm-yes").click();
    browser.waitFor("#kv-outcome [data-result='deleted']");
    browser.waitGone(target);
    assertThat(getKey(ns, "order/007").getBoolean("found")).isFalse();

    // a value written since the page showed it is not deleted: the delete names the version shown
    String changed = "tr[data-key='order/008']";
    browser.waitFor(changed);
    kv(put(ns, "order/008", "rewritten"));
    confirm(changed, "kv-delete");
    browser.waitFor("#kv-outcome [data-result='changed']");
    assertThat(getKey(ns, "order/008").getString("value")).isEqualTo("rewritten");
  }

  static JsonObject getKey(String ns, String key) {
    return kv(new JsonObject().put("op", "get").put("ns", ns).put("key", key)).getJsonObject(0);
  }

  @Test
  void aTimerIsListedPeekedAndCancelledAfterAConfirmation() {
    String q = "dash-timers-" + hex32().substring(0, 8);
    String payload = Base64.getEncoder().encodeToString(new JsonObject().put("remind", "invoice 42").encode()
        .getBytes(StandardCharsets.UTF_8));
    JsonArray ops = new JsonArray();
    for (String key : new String[] {"other/1", "reminder", "reminder/1", "reminder/2", "sms/1"}) {
      ops.add(new JsonObject().put("op", "schedule").put("queue", q).put("timerKey", key).put("delayMs", 3_600_000)
          .put("txn", "txn-" + key).put("payload", payload));
    }
    var r = node.post("/api/v1/timers", new JsonObject().put("operations", ops));
    assertThat(r.status()).as(r.body()).isEqualTo(200);

    browser.page("timers?queue=" + q);
    browser.waitFor("tr[data-timer='other/1']");
    assertThat(browser.all("#timers-list tr[data-timer]")).hasSize(5);
    // by key prefix: the key equal to the prefix, then those after it that start with it, none before or past them
    type("#timers-prefix", "reminder");
    browser.waitFor("#timers-apply").click();
    browser.until(d -> d.findElements(By.cssSelector("tr[data-timer='other/1']")).isEmpty());
    assertThat(browser.all("#timers-list tr[data-timer]")).extracting(e -> e.getAttribute("data-timer"))
        .containsExactly("reminder", "reminder/1", "reminder/2");
    assertThat(row("tr[data-timer='reminder/1']")).contains("txn-reminder/1");

    // the peek drawer decodes the base64 payload
    browser.waitFor("tr[data-timer='reminder/1'] td").click();
    browser.waitText("#drawer", "invoice 42");
    browser.waitFor("#drawer .close").click();

    confirm("tr[data-timer='reminder/1']", "timer-cancel");
    browser.waitFor("#timers-outcome [data-result='cancelled']");
    browser.waitGone("tr[data-timer='reminder/1']");
    assertThat(node.get("/api/v1/timers/" + q + "/reminder%2F1").json().getBoolean("found")).isFalse();
    assertThat(node.get("/api/v1/timers/" + q + "/reminder%2F2").json().getBoolean("found")).isTrue();
  }

  @Test
  void anAcquiredLockShowsItsHolder() {
    String name = "dash-lock-" + hex32().substring(0, 8);
    var r = node.post("/api/v1/locks", new JsonObject().put("operations", new JsonArray().add(new JsonObject()
        .put("op", "acquire").put("name", name).put("ttlSeconds", 600).put("owner", "worker-7").put("limit", 2))));
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    JsonObject granted = r.json().getJsonArray("results").getJsonObject(0);
    assertThat(granted.getBoolean("acquired")).isTrue();

    browser.page("locks?prefix=" + name);
    String permit = "tr[data-lock='" + name + "'][data-slot='0']";
    assertThat(row(permit + " td.holder")).isEqualTo("worker-7");
    assertThat(row(permit)).contains(String.valueOf(granted.getLong("token")));
    assertThat(browser.all("#locks-list tr[data-lock]")).hasSize(1);

    // a stuck permit can be deleted after a confirmation; the lock is then free
    confirm(permit, "lock-delete");
    browser.waitFor("#locks-outcome [data-result='deleted']");
    browser.waitGone(permit);
    var get = node.post("/api/v1/locks", new JsonObject().put("operations", new JsonArray().add(new JsonObject()
        .put("op", "get").put("name", name))));
    assertThat(get.json().getJsonArray("results").getJsonObject(0).getBoolean("held")).isFalse();
  }
}
