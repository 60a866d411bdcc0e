package io.queenvertx.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import org.junit.jupiter.api.Test;

/**
 * Issue 37: the system page lists the PostgreSQL servers a node watches, with role and use. A node told to follow the
 * writable server ({@code read-write}) watches its one server here; the Patroni cluster's own tests
 * ({@code io.queenvertx.ha}) check the figures behind the table.
 */
class DashboardServersIT {
  @NodeFixture(env = {"PG_TARGET_SESSION_ATTRS=read-write"})
  static TestNode node;

  @BrowserFixture
  static Browser browser;

  @Test
  void theSystemPageShowsEachServerItsRoleAndWhatTheNodeSendsThere() {
    var db = node.node().config().postgres().connection().orElseThrow();
    String server = db.hosts().get(0).toString();
    browser.page("system");
    browser.waitText("main h1", "System");
    String row = "tr[data-server='" + server + "'][data-role='primary']";
    browser.waitFor(row);
    String text = browser.all(row).get(0).getText();
    assertThat(text).contains(server).contains("primary").contains("writes");
  }
}
