package io.queenvertx.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import org.junit.jupiter.api.Test;

/**
 * Issue 38: Swagger UI at {@code /docs}, rendered in Chromium, shows the document's description whole (it was cut at
 * {@code {"error":"}, the rest read as an HTML tag), no internal notes, and a push example on a real queue name.
 */
class DashboardDocsIT {
  @NodeFixture
  static TestNode node;

  @BrowserFixture
  static Browser browser;

  @Test
  void swaggerUiShowsTheWholeDescriptionAndARealPushExample() {
    browser.url("/docs");
    browser.waitText(".information-container .description", "Browsers and proxies");
    String info = browser.waitFor(".information-container .description").getText();
    assertThat(info).contains("{\"error\":\"<text>\"}", "{\"error\":\"Not Found\",\"code\":\"no_such_route\"}",
        "An ack status other than the known ones counts as failed",
        "QUEEN_ALLOWED_ORIGINS").doesNotContainIgnoringCase("redocly");

    // deep link to the push: it opens with its request body's example
    browser.driver.get("about:blank");
    browser.url("/docs#/Messages/pushMessages");
    browser.waitText("#operations-Messages-pushMessages", "\"queue\": \"orders\"");
    assertThat(browser.waitFor("#operations-Messages-pushMessages").getText()).doesNotContain("\"queue\": \"string\"");
  }
}
