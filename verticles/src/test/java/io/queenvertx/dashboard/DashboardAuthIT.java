package io.queenvertx.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;

/** The dashboard with JWT auth on: the app itself is public, the API calls carry the typed token, roles hide actions. */
class DashboardAuthIT {
  static final String SECRET = "dashboard-test-secret-0123456789abcdef";

  @NodeFixture(env = {"JWT_ENABLED=true", "JWT_SECRET=" + SECRET})
  static TestNode node;

  @BrowserFixture
  static Browser browser;

  void useToken(String token) {
    browser.page("");
    WebElement input = browser.waitFor("#token");
    input.clear();
    input.sendKeys(token);
    browser.driver.findElement(By.id("token-save")).click();
  }

  @Test
  void aReadOnlyTokenSeesTheDeadLettersButNoReplayOrDeleteButtons() {
    String admin = Fixtures.token(SECRET, "admin");
    String q = "ro-" + UUID.randomUUID().toString().substring(0, 8);
    Fixtures.deadLetters(node, q, 3, Map.of("Authorization", "Bearer " + admin));
    String id = Fixtures.dlqId(node, q + "-1");

    // without a token the API refuses, and the page says so plainly
    browser.page("dlq?queue=" + q);
    browser.waitText("#banner", "Authentication required (401)");

    // a read-write token sees the actions (so their absence below is the role's doing)
    useToken(Fixtures.token(SECRET, "read-write"));
    browser.page("dlq?queue=" + q);
    browser.waitFor("tr[data-dlq-id='" + id + "'] button.replay");
    assertThat(browser.all("tr[data-dlq-id='" + id + "'] button.delete")).hasSize(1);

    useToken(Fixtures.token(SECRET, "read-only"));
    browser.page("dlq?queue=" + q);
    browser.waitFor("tr[data-dlq-id='" + id + "']");
    assertThat(browser.all("tr[data-dlq-id] td")).isNotEmpty();
    assertThat(browser.all("button.replay")).isEmpty();
    assertThat(browser.all("button.replay-to")).isEmpty();
    assertThat(browser.all("button.delete")).isEmpty();
    assertThat(browser.all("#purge-go")).isEmpty();
    assertThat(browser.all("#redrive-start")).isEmpty();
    assertThat(browser.driver.findElement(By.id("who")).getText()).contains("read-only");
    // the token stays in this browser session only
    assertThat(browser.js("return window.localStorage.length")).isEqualTo(0L);
    assertThat(browser.js("return window.sessionStorage.getItem('queen.token')")).isNotNull();
  }

  @Test
  void theAppAndItsAssetsArePublicWhileTheApiIsNot() {
    assertThat(node.get("/").status()).isEqualTo(200);
    assertThat(node.get("/assets/app.js").status()).isEqualTo(200);
    assertThat(node.get("/assets/vendor/uplot/uPlot.esm.js").status()).isEqualTo(200);
    assertThat(node.get("/api/v1/dlq").status()).isEqualTo(401);
    assertThat(node.get("/api/v1/no-such-route").status()).isEqualTo(401);
  }
}
