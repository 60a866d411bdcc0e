package io.queenvertx.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;

/** The two replay verdicts that keep the row: {@code duplicate} and the 503 of push maintenance, each its own outcome. */
class DashboardVerdictsIT {
  @NodeFixture
  static TestNode node;

  @BrowserFixture
  static Browser browser;

  @Test
  void aDuplicateReplayIsShownAsDuplicateAndTheRowStays() {
    String q = "dup-" + UUID.randomUUID().toString().substring(0, 8);
    Fixtures.deadLetters(node, q, 1, Map.of());
    String id = Fixtures.dlqId(node, q + "-1");
    // the destination's dedup window already holds the replay's transaction id
    Fixtures.push(node, q, "dlq:" + id, new JsonObject().put("already", true), Map.of());
    browser.page("dlq?queue=" + q);
    browser.waitFor("tr[data-dlq-id='" + id + "'] button.replay").click();
    browser.waitFor("#outcome .outcome[data-result='duplicate'][data-dlq-id='" + id + "']");
    assertThat(browser.driver.findElement(By.id("outcome")).getText()).startsWith("duplicate").contains("kept");
    browser.waitFor("tr.kept[data-dlq-id='" + id + "']");
    assertThat(Fixtures.dlqId(node, q + "-1")).isEqualTo(id);
  }

  @Test
  void aReplayDuringPushMaintenanceIsShownAsMaintenanceAndTheRowStays() {
    String q = "maint-" + UUID.randomUUID().toString().substring(0, 8);
    Fixtures.deadLetters(node, q, 1, Map.of());
    String id = Fixtures.dlqId(node, q + "-1");
    browser.page("dlq?queue=" + q);
    browser.waitFor("tr[data-dlq-id='" + id + "'] button.replay");
    assertThat(node.post("/api/v1/system/maintenance", new JsonObject().put("enabled", true)).status()).isEqualTo(200);
    try {
      browser.driver.findElement(By.cssSelector("tr[data-dlq-id='" + id + "'] button.replay")).click();
      browser.waitFor("#outcome .outcome[data-result='maintenance'][data-dlq-id='" + id + "']");
      assertThat(browser.driver.findElement(By.id("outcome")).getText()).contains("503");
      assertThat(browser.all("tr[data-dlq-id='" + id + "']")).hasSize(1);
    } finally {
      assertThat(node.post("/api/v1/system/maintenance", new JsonObject().put("enabled", false)).status())
          .isEqualTo(200);
    }
    assertThat(Fixtures.dlqId(node, q + "-1")).isEqualTo(id);
  }
}
