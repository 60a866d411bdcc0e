package io.queenvertx.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;

/**
 * With QUEEN_TENANCY_HEADER on, the Key-value page reads the tenant typed in the top bar: another tenant's entries
 * are not listed, the tenant's own are.
 */
class DashboardStateTenancyIT {
  @NodeFixture(env = {"QUEEN_TENANCY_HEADER=true"})
  static TestNode node;

  @BrowserFixture
  static Browser browser;

  static void useTenant(String tenant) {
    browser.page("");
    WebElement t = browser.waitFor("#tenant");
    t.clear();
    t.sendKeys(tenant);
    browser.waitFor("#token-save").click();
  }

  @Test
  void theKeyValuePageListsTheTypedTenantsEntriesOnly() {
    String owner = UUID.randomUUID().toString();
    String other = UUID.randomUUID().toString();
    String ns = "tenant-" + UUID.randomUUID().toString().substring(0, 8);
    var r = node.post("/api/v1/kv", new JsonObject().put("operations", new JsonArray().add(new JsonObject()
        .put("op", "put").put("ns", ns).put("key", "invoice/1").put("value", 1).put("forever", true))),
        Map.of("x-queen-tenant", owner));
    assertThat(r.status()).as(r.body()).isEqualTo(200);

    useTenant(other);
    browser.page("kv?ns=" + ns);
    browser.waitText("#kv-list", ns + " holds no keys.");
    assertThat(browser.all("tr[data-key='invoice/1']")).isEmpty();

    useTenant(owner);
    browser.page("kv?ns=" + ns);
    browser.waitFor("tr[data-key='invoice/1']");
    browser.until(d -> d.findElement(By.cssSelector("#kv-ns")).getText().contains(ns + " (1 key)"));
  }
}
