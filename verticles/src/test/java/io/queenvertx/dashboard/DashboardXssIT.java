package io.queenvertx.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.TestNode;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Payloads, error texts, queue names and trace data are written by clients, so the dashboard must show them as text:
 * a message, a dead letter and a trace carrying markup are opened in the message browser, its drawer, the DLQ page and
 * the traces page; the markup must appear literally, no element may be made from it, and its script never runs.
 * The HTML also carries a Content-Security-Policy that refuses inline script.
 */
class DashboardXssIT {
  static final String XSS = "<img src=x onerror=\"window.__xss=1\">";

  @NodeFixture
  static TestNode node;

  @BrowserFixture
  static Browser browser;

  /** Nothing ran, and nothing of the attacker's markup became an element (CSP alone would only stop the script). */
  static void assertInert(String where) {
    assertThat(browser.js("return window.__xss")).as("window.__xss after %s", where).isNull();
    assertThat(browser.js("return document.querySelectorAll('img').length")).as("img elements on %s", where)
        .isEqualTo(0L);
    assertThat(browser.js("return [...document.querySelectorAll('b')].filter(e => e.textContent === 'bold').length"))
        .as("<b> from a queue name on %s", where).isEqualTo(0L);
  }

  /** The text of the first match, or "" while there is none. */
  static String text(String css) {
    return (String) browser.js("const e = document.querySelector(arguments[0]); return e ? e.textContent : ''", css);
  }

  @Test
  void attackerControlledTextIsShownLiterallyOnEveryPage() {
    String suffix = UUID.randomUUID().toString().substring(0, 8);
    String q = "xss-<b>bold</b>-" + suffix;
    String txn = "xss-msg-" + suffix;
    String traceName = "xss-trace-" + suffix + XSS;
    JsonObject payload = new JsonObject().put("html", XSS);
    String pid = Fixtures.push(node, q, txn, payload, Map.of());
    var traced = node.post("/api/v1/traces", new JsonObject().put("partitionId", pid).put("transactionId", txn)
        .put("eventType", "info").put("data", new JsonObject().put("note", XSS))
        .put("traceNames", new JsonArray().add(traceName)));
    assertThat(traced.status()).as("%s", traced.body()).isEqualTo(201);
    TestDatabase.execute(Fixtures.db(node), "INSERT INTO queen.log_dlq(partition_id, consumer_group, \"offset\", "
        + "message_id, transaction_id, payload, error, retry_count, failed_at) VALUES ('" + pid + "', 'xss-group', 0, "
        + "gen_random_uuid(), '" + txn + "-dead', jsonb_build_object('html', '" + XSS + "'), 'handler said " + XSS
        + "', 1, now())");

    // message browser: the row, then the drawer with payload and trace timeline
    browser.page("messages?queue=" + java.net.URLEncoder.encode(q, java.nio.charset.StandardCharsets.UTF_8));
    browser.waitFor("tr[data-txn='" + txn + "']");
    assertThat(text("tr[data-txn='" + txn + "']")).contains(q).contains("<img src=x onerror=");
    assertInert("the message browser");
    browser.waitFor("tr[data-txn='" + txn + "']").click();
    browser.waitFor("#drawer pre.payload");
    assertThat(new JsonObject(text("#drawer pre.payload"))).isEqualTo(payload);
    browser.waitText("#drawer .timeline", "window.__xss=1");
    assertThat(text("#drawer .timeline")).contains(XSS.replace("\"", "\\\"")).contains(traceName);
    assertThat(text("#drawer")).contains(q);
    assertInert("the message drawer");

    // dead letters: the row's error cell, the signature table, the drawer
    browser.page("dlq?queue=" + java.net.URLEncoder.encode(q, java.nio.charset.StandardCharsets.UTF_8));
    browser.waitFor("tr[data-txn='" + txn + "-dead']");
    assertThat(text("tr[data-txn='" + txn + "-dead']")).contains("handler said " + XSS).contains(q);
    browser.waitText("#signatures", "handler said <img src=x onerror=");
    assertInert("the DLQ page");
    browser.waitFor("tr[data-txn='" + txn + "-dead']").click();
    browser.waitFor("#drawer pre.payload");
    assertThat(text("#drawer")).contains("handler said " + XSS).contains(q);
    assertInert("the dead-letter drawer");

    // traces: the names list and the timeline of that name
    browser.page("traces");
    browser.waitFor("tr[data-trace-name]");
    browser.until(d -> text("#trace-names").contains(traceName));
    assertInert("the trace names");
    browser.page("traces?name=" + java.net.URLEncoder.encode(traceName, java.nio.charset.StandardCharsets.UTF_8));
    browser.waitText("#trace-by-name .timeline", "window.__xss=1");
    assertThat(text("#trace-by-name")).contains(traceName).contains(q);
    assertInert("the traces by name");

    // overview: the queue row
    browser.page("?queue=" + java.net.URLEncoder.encode(q, java.nio.charset.StandardCharsets.UTF_8));
    browser.until(d -> text("#queues-section").contains(q));
    assertInert("the overview");
  }

  @Test
  void keysValuesConsumerRecordsAndLockOwnersAreShownLiterally() {
    String ns = "xss-" + UUID.randomUUID().toString().substring(0, 8);
    String key = "k-<b>bold</b>-" + XSS;
    Fixtures.kv(node, new JsonObject().put("op", "put").put("ns", ns).put("key", key).put("value", XSS)
        .put("forever", true));
    String instance = Fixtures.hex32();
    Fixtures.supervise(node, "xss-app", instance, XSS + "<b>bold</b>", System.currentTimeMillis() / 1000, "running", 1);
    String lock = "xss-lock-" + instance.substring(0, 8) + "<b>bold</b>";
    var r = node.post("/api/v1/locks", new JsonObject().put("operations", new JsonArray().add(new JsonObject()
        .put("op", "acquire").put("name", lock).put("ttlSeconds", 600).put("owner", XSS))));
    assertThat(r.status()).as("%s", r.body()).isEqualTo(200);

    browser.page("kv?ns=" + ns);
    browser.waitText("#kv-list", "k-<b>bold</b>-<img src=x onerror=");
    assertInert("the key-value page");
    browser.waitFor("#kv-list tr[data-key] td").click();
    browser.waitText("#drawer pre.payload", "onerror");
    assertInert("the key-value drawer");
    browser.page("consumers");
    browser.until(d -> text("tr[data-instance='" + instance + "']").contains(XSS + "<b>bold</b>"));
    assertInert("the consumers page");
    browser.page("locks?prefix=" + java.net.URLEncoder.encode(lock, java.nio.charset.StandardCharsets.UTF_8));
    browser.until(d -> text("#locks-list").contains(lock) && text("#locks-list").contains(XSS));
    assertInert("the locks page");
  }

  @Test
  void theAppIsServedUnderAPolicyWithoutInlineScript() {
    for (String path : new String[] {"/", "/dlq"}) {
      var r = node.get(path);
      assertThat(r.status()).isEqualTo(200);
      String csp = r.header("content-security-policy");
      assertThat(csp).as(path).isNotNull().contains("script-src 'self';").contains("object-src 'none'")
          .contains("base-uri 'none'").contains("frame-ancestors 'none'");
      String scriptSrc = csp.substring(csp.indexOf("script-src"), csp.indexOf(';', csp.indexOf("script-src")));
      assertThat(scriptSrc).doesNotContain("unsafe-inline").doesNotContain("unsafe-eval");
      assertThat(r.body()).doesNotContain("<script>").contains("<script type=\"module\" src=\"/assets/app.js\">");
    }
  }
}
