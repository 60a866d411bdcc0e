package io.queenvertx.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.TestNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The dashboard at scale (issue 21): with 1,000 queues, 100,000 dead letters and 50,000 consumer groups (issue 34),
 * the overview, the DLQ page and the groups page load with paged API calls only. Every call the page made is counted
 * (rows in its answer) and must be bounded by the page size. The load times are printed for BENCHMARKS.md; they are
 * a measurement, not an assertion.
 */
class DashboardScaleIT {
  static final int QUEUES = 1_000;
  static final int DEAD_LETTERS = 100_000;
  static final int GROUPS = 50_000;

  @NodeFixture(freshDatabase = true)
  static TestNode node;

  @BrowserFixture
  static Browser browser;

  @BeforeAll
  static void fixture() {
    var db = Fixtures.db(node);
    TestDatabase.execute(db, "WITH q AS (INSERT INTO queen.queues(name) SELECT 'scale-' || lpad(g::text, 4, '0') "
        + "FROM generate_series(1, " + QUEUES + ") g RETURNING id) INSERT INTO queen.log_partitions(queue_id) "
        + "SELECT id FROM q");
    TestDatabase.execute(db, "INSERT INTO queen.log_dlq(partition_id, consumer_group, \"offset\", message_id, "
        + "transaction_id, payload, error, retry_count, failed_at) SELECT p.ids[1 + g % " + QUEUES + "], "
        + "'__QUEUE_MODE__', g, gen_random_uuid(), 'scale-' || g, jsonb_build_object('n', g), "
        + "'handler failed: code ' || (g % 5), 3, now() - g * interval '10 ms' FROM generate_series(1, "
        + DEAD_LETTERS + ") g, (SELECT array_agg(id ORDER BY id) AS ids FROM queen.log_partitions) p");
    TestDatabase.execute(db, "ANALYZE queen.log_dlq");
    assertThat(TestDatabase.queryLong(db, "SELECT count(*) FROM queen.log_dlq")).isEqualTo(DEAD_LETTERS);
    // GROUPS consumer groups on the first queue, each registered with a cursor, as their first pops leave them
    String groups = "SELECT q.tenant_id, q.id AS qid, p.id AS pid, 'scale-g-' || lpad(g::text, 5, '0') AS grp "
        + "FROM queen.queues q JOIN queen.log_partitions p ON p.queue_id = q.id, generate_series(1, " + GROUPS
        + ") g WHERE q.name = 'scale-0001'";
    TestDatabase.execute(db, "INSERT INTO queen.consumer_groups_metadata (tenant_id, consumer_group, queue_id, "
        + "partition_name, namespace, task, subscription_mode) SELECT tenant_id, grp, qid, '', '', '', 'all' FROM ("
        + groups + ") x");
    TestDatabase.execute(db, "INSERT INTO queen.log_consumers (partition_id, consumer_group, committed) "
        + "SELECT pid, grp, -1 FROM (" + groups + ") x");
    TestDatabase.execute(db, "ANALYZE queen.log_consumers");
  }

  /** The API calls the current page made: method, path, status, rows in the answer (null: not a list). */
  @SuppressWarnings("unchecked")
  static List<Map<String, Object>> calls() {
    return new ArrayList<>((List<Map<String, Object>>) browser.js("return window.__queenCalls"));
  }

  static void assertPaged(List<Map<String, Object>> calls, int pageSize) {
    assertThat(calls).isNotEmpty();
    for (var c : calls) {
      assertThat(((Number) c.get("status")).intValue()).as(c.toString()).isLessThan(500);
      if (c.get("rows") != null) {
        assertThat(((Number) c.get("rows")).longValue()).as("rows of " + c.get("path")).isLessThanOrEqualTo(pageSize);
      }
    }
  }

  /** Loads a page and waits for its condition; returns the elapsed milliseconds. */
  static long load(String route, String readyCss) {
    long t0 = System.nanoTime();
    browser.page(route);
    browser.waitFor(readyCss);
    return (System.nanoTime() - t0) / 1_000_000;
  }

  @Test
  void theOverviewAndTheDlqPageLoadWithPagedCallsOnly() {
    List<Long> overview = new ArrayList<>();
    List<Long> dlq = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      overview.add(load("", "tr[data-queue='scale-0025'] td.depth"));
      browser.waitText("#stat-queues", "1,000");
      var calls = calls();
      assertPaged(calls, 25);
      assertThat(calls).anySatisfy(c -> {
        assertThat((String) c.get("path")).startsWith("/api/v1/status/queues?limit=25&offset=0");
        assertThat(((Number) c.get("rows")).intValue()).isEqualTo(25);
      });
      System.out.println("dashboard scale: calls of the overview " + calls);

      dlq.add(load("dlq", "#dlq-list tbody tr:nth-child(50)[data-dlq-id]"));
      calls = calls();
      assertPaged(calls, 50);
      assertThat(calls).anySatisfy(c -> {
        assertThat((String) c.get("path")).isEqualTo("/api/v1/dlq?limit=50&offset=0");
        assertThat(((Number) c.get("rows")).intValue()).isEqualTo(50);
      });
      System.out.println("dashboard scale: calls of the DLQ page " + calls);
    }
    browser.all("#dlq-list button.next").get(0).click();
    browser.until(d -> calls().stream().anyMatch(c -> "/api/v1/dlq?limit=50&offset=50".equals(c.get("path"))));
    System.out.printf("dashboard scale (%d queues, %d dead letters): overview ready in %s ms, DLQ page in %s ms%n",
        QUEUES, DEAD_LETTERS, overview, dlq);
  }

  @Test
  void theGroupsPageListsFiftyThousandGroupsAPageAtATime() {
    long ms = load("groups", "tr[data-group='scale-g-00025']");
    assertThat(browser.all("#group-list tbody tr")).hasSize(25);
    var calls = calls();
    assertPaged(calls, 25);
    assertThat(calls).anySatisfy(c -> {
      assertThat((String) c.get("path")).isEqualTo("/api/v1/consumer-groups?limit=25");
      assertThat(((Number) c.get("rows")).intValue()).isEqualTo(25);
    });
    browser.waitFor("#groups-more").click();
    browser.waitFor("tr[data-group='scale-g-00050']");
    assertThat(browser.all("#group-list tbody tr")).hasSize(50);
    assertPaged(calls(), 25);
    assertThat(calls()).anySatisfy(c -> assertThat((String) c.get("path"))
        .startsWith("/api/v1/consumer-groups?limit=25&cursor="));
    System.out.printf("dashboard scale (%d consumer groups): groups page ready in %d ms%n", GROUPS, ms);
  }
}
