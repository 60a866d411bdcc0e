package io.queenvertx.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;

/**
 * The consumer-group page's "Seek to end" moves the group's cursor (checked through the API). It needs
 * {@code POST /api/v1/consumer-groups/:group/queues/:queue/seek} (API.md §5.11).
 */
class DashboardSeekIT {
  @NodeFixture
  static TestNode node;

  @BrowserFixture
  static Browser browser;

  static long lag(String group, String queue) {
    var g = node.get("/api/v1/consumer-groups/" + group).json();
    return g.getJsonObject("queues").getJsonObject(queue).getJsonArray("partitions").getJsonObject(0).getLong("lag");
  }

  @Test
  void seekToEndFromTheGroupPageMovesTheCursor() {
    String q = "seek-" + UUID.randomUUID().toString().substring(0, 8);
    String group = "reporting-" + UUID.randomUUID().toString().substring(0, 8);
    for (int i = 0; i < 5; i++) Fixtures.push(node, q, q + "-" + i, new JsonObject().put("i", i), Map.of());
    // one pop of one message registers the group on the partition and leaves four behind
    var popped = node.get("/api/v1/pop/queue/" + q + "?consumerGroup=" + group + "&subscriptionMode=all&batch=1&autoAck=true");
    assertThat(popped.status()).isEqualTo(200);
    assertThat(lag(group, q)).isEqualTo(4);

    browser.page("groups?name=" + group);
    browser.waitFor("section[data-queue='" + q + "'] button.seek-end").click();
    browser.waitText("#group-outcome", "Seek done");
    assertThat(lag(group, q)).isZero();
    browser.waitText("section[data-queue='" + q + "'] td.lag", "0");
    // exactly "0" (not "10" or "40"), read again if the page re-renders the row meanwhile
    Boolean exactlyZero = browser.until(d -> "0".equals(
        d.findElement(By.cssSelector("section[data-queue='" + q + "'] td.lag")).getText()));
    assertThat(exactlyZero).isTrue();
  }
}
