package io.queenvertx.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.WebElement;

/**
 * Every page renders against a real node: its heading appears, each section settles, and none shows a script failure
 * (a section whose code threw shows "Request failed: ..."; a route this branch lacks shows "not available").
 */
class DashboardPagesIT {
  @NodeFixture
  static TestNode node;

  @BrowserFixture
  static Browser browser;

  void settles(String route, String heading) {
    browser.page(route);
    browser.waitText("main h1", heading);
    // every section has replaced its "Loading…" placeholder or been filled
    browser.until(d -> d.findElements(org.openqa.selenium.By.xpath("//main//*[text()='Loading…']")).isEmpty());
    for (WebElement e : browser.all("main .outcome[data-kind='error']")) {
      assertThat(e.getText()).as(route).doesNotContain("Request failed");
    }
  }

  @Test
  void eachPageRendersWithoutScriptFailures() {
    String q = "pages-" + UUID.randomUUID().toString().substring(0, 8);
    String group = "g-" + UUID.randomUUID().toString().substring(0, 8);
    Fixtures.push(node, q, q + "-1", new JsonObject().put("x", 1), Map.of());
    Fixtures.push(node, q, q + "-2", new JsonObject().put("x", 2), Map.of());
    node.get("/api/v1/pop/queue/" + q + "?consumerGroup=" + group + "&subscriptionMode=all&batch=1&autoAck=true");
    settles("queue?name=" + q, "Queue");
    browser.waitFor("tr[data-partition='Default']");
    browser.waitFor("#config-form #config-leaseTime");
    settles("groups", "Consumer groups");
    // 25 groups a page: other tests' groups may come first
    browser.until(d -> {
      if (!d.findElements(org.openqa.selenium.By.cssSelector("tr[data-group='" + group + "']")).isEmpty()) return true;
      d.findElements(org.openqa.selenium.By.cssSelector("#groups-more")).forEach(WebElement::click);
      return null;
    });
    settles("groups?name=" + group, "Consumer group");
    browser.waitText("section[data-queue='" + q + "'] td.lag", "1");
    settles("traces", "Traces");
    settles("consumers", "Consumers");
    settles("kv", "Key-value");
    settles("timers?queue=" + q, "Timers");
    settles("locks", "Locks");
    settles("system", "System");
    browser.waitText("#switches", "Push maintenance is off");
    browser.waitFor("#spool tr[data-spool-node='" + node.node().config().serverId() + "']");
    browser.waitFor("#pg-stats tr[data-table]");
    browser.waitText("#pg-stats", "connections: ");
  }
}
