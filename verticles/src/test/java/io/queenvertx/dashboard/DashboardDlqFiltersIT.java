package io.queenvertx.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The DLQ page's filters are the listing's query parameters (error text, partition, time window), applied by the
 * broker rather than to the loaded page; the signature table groups every matching dead letter through
 * /api/v1/analytics/dlq-signatures and narrows the list on click. The overview's node panel reads
 * /api/v1/system/nodes.
 */
class DashboardDlqFiltersIT {
  @NodeFixture
  static TestNode node;

  @BrowserFixture
  static Browser browser;

  static long rows() {
    return (Long) browser.js("return document.querySelectorAll('#dlq-list tbody tr[data-dlq-id]').length");
  }

  static String lastDlqCall() {
    return (String) browser.js("return window.__queenCalls.filter(c => c.path.startsWith('/api/v1/dlq?')).pop().path");
  }

  @Test
  void errorTextAndWindowAreSentToTheBrokerAndSignaturesCountEveryRow() {
    String q = "dlqf-" + UUID.randomUUID().toString().substring(0, 8);
    // 60 rows, more than one page of 50: errors "handler threw: timeout after <g*10> ms"
    Fixtures.deadLetters(node, q, 60, Map.of());
    browser.page("dlq?queue=" + q);
    browser.until(d -> rows() == 50);
    browser.waitText("#signatures td.sig-count", "60");

    browser.waitFor("#dlq-error").sendKeys("AFTER 20 MS");
    browser.waitFor("#dlq-apply").click();
    browser.until(d -> rows() == 1);
    assertThat(browser.waitFor("#dlq-list tbody tr[data-dlq-id]").getAttribute("data-txn")).isEqualTo(q + "-2");
    assertThat(lastDlqCall()).contains("error=AFTER+20+MS").contains("queue=" + q);

    // a window in the future matches nothing; the bounds are the browser's local time, sent as UTC ISO instants
    browser.js("document.getElementById('dlq-error').value = '';"
        + "document.getElementById('dlq-from').value = '2099-01-01T00:00:00'");
    browser.waitFor("#dlq-apply").click();
    browser.waitText("#dlq-list", "No dead letters match.");
    String from = java.time.LocalDateTime.parse("2099-01-01T00:00:00").atZone(java.time.ZoneId.of(Browser.ZONE))
        .toInstant().toString();
    assertThat(from).isEqualTo("2099-01-01T05:00:00Z");
    assertThat(lastDlqCall()).contains("from=" + from.replace(":", "%3A"));

    // clicking a signature filters by its literal text: every row of the queue again (60, paged by 50)
    browser.js("document.getElementById('dlq-from').value = ''");
    browser.waitFor("#dlq-apply").click();
    browser.until(d -> rows() == 50);
    browser.js("document.getElementById('dlq-error').value = 'no such text'");
    browser.waitFor("#dlq-apply").click();
    browser.waitText("#dlq-list", "No dead letters match.");
    browser.waitFor("#signatures tr[data-signature]").click();
    browser.until(d -> rows() == 50);
    assertThat(lastDlqCall()).contains("error=handler+threw%3A+timeout+after");
  }

  @Test
  void theOverviewsNodePanelListsThisNodeFromTheNodesRoute() {
    browser.page("");
    String id = node.node().config().serverId();
    browser.waitFor("#nodes-section tr[data-node='" + id + "']");
    browser.waitText("#nodes-section tr[data-node='" + id + "'] td.database", "connected");
    browser.waitText("#nodes-section tr[data-node='" + id + "'] td.reachable", "yes");
    var r = node.get("/api/v1/system/nodes");
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.json().getBoolean("clustered")).isFalse();
    assertThat(r.json().getJsonArray("nodes")).hasSize(1);
    assertThat(r.json().getJsonArray("nodes").getJsonObject(0).getString("serverId")).isEqualTo(id);
  }
}
