package io.queenvertx.groups;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.kernel.Config;
import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.TestNode.Reply;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code GET /api/v1/consumer-groups} pages by group name (issue 34 item 10: after pops by 50,000 groups the listing,
 * also with {@code limit=25}, was a 500 statement timeout after 30 s, and the dashboard's groups page calls it). The
 * body stays Queen's array; {@code limit} (default 100, at most 1000) sizes the page and the next page's cursor comes
 * in {@code X-Next-Cursor}. The database holds 50,000 groups of the default tenant; the paging tests speak as fresh
 * tenants whose group names sort after all of them (the walk is by the tenant's registrations, so it never meets
 * them).
 */
class ConsumerGroupListingIT {
  static final int GROUPS = 50_000;
  static final String NEXT = "X-Next-Cursor";

  @NodeFixture(freshDatabase = true, env = {"QUEEN_TENANCY_HEADER=true"})
  static TestNode node;

  static Config.Database db() {
    return node.node().config().postgres().connection().orElseThrow();
  }

  /**
   * 50,000 groups of the default tenant, inserted as their first pops leave them: a registration on the queue and a
   * cursor on its partition each.
   */
  @BeforeAll
  static void fiftyThousandGroups() {
    String q = Wire.queue("groups-scale");
    assertThat(Wire.push(node, Wire.item(q, null, 1, "seed")).status()).isEqualTo(201);
    String groups = "SELECT p.id AS pid, q.id AS qid, q.tenant_id, 'g-' || lpad(g::text, 5, '0') AS grp "
        + "FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id, generate_series(1, " + GROUPS
        + ") g WHERE q.name = '" + q + "'";
    TestDatabase.execute(db(), "INSERT INTO queen.consumer_groups_metadata (tenant_id, consumer_group, queue_id, "
        + "partition_name, namespace, task, subscription_mode) SELECT tenant_id, grp, qid, '', '', '', 'all' FROM ("
        + groups + ") x");
    TestDatabase.execute(db(), "INSERT INTO queen.log_consumers (partition_id, consumer_group, committed) "
        + "SELECT pid, grp, -1 FROM (" + groups + ") x");
    TestDatabase.execute(db(), "ANALYZE queen.log_consumers");
    TestDatabase.execute(db(), "ANALYZE queen.consumer_groups_metadata");
  }

  static Map<String, String> tenant() {
    return Map.of("x-queen-tenant", UUID.randomUUID().toString());
  }

  /** Registers {@code groups} on a fresh queue of the tenant by one pop each. */
  static void popsBy(Map<String, String> h, List<String> groups) {
    String q = Wire.queue("groups-page");
    assertThat(Wire.push(node, h, List.of(Wire.item(q, null, 1, "m"))).status()).isEqualTo(201);
    for (String g : groups) {
      assertThat(node.get(Wire.popPath(q, null, g, "autoAck=true"), h).status()).isEqualTo(200);
    }
  }

  static List<String> names(JsonArray a) {
    List<String> out = new ArrayList<>();
    for (Object o : a) out.add(((JsonObject) o).getString("name"));
    return out;
  }

  @Test
  void aPageAndItsCursorWalkTheGroupsInNameOrderAndTheLastPageHasNoCursor() {
    var h = tenant();
    List<String> groups = List.of("x-a", "x-b", "x-c", "x-d", "x-e");
    popsBy(h, groups);

    long t0 = System.nanoTime();
    Reply whole = node.get("/api/v1/consumer-groups", h);
    System.out.printf("consumer-groups of a tenant whose 5 names sort after %d other names: %d ms%n", GROUPS,
        (System.nanoTime() - t0) / 1_000_000);
    assertThat(whole.status()).as(whole.body()).isEqualTo(200);
    assertThat(names(whole.array())).as("the default page holds them all").isEqualTo(groups);
    assertThat(whole.header(NEXT)).as("one page only").isNull();

    List<String> walked = new ArrayList<>();
    String path = "/api/v1/consumer-groups?limit=2";
    List<Integer> sizes = new ArrayList<>();
    while (path != null) {
      Reply r = node.get(path, h);
      assertThat(r.status()).as(r.body()).isEqualTo(200);
      JsonArray page = r.array();
      sizes.add(page.size());
      walked.addAll(names(page));
      String next = r.header(NEXT);
      path = next == null ? null
          : "/api/v1/consumer-groups?limit=2&cursor=" + URLEncoder.encode(next, StandardCharsets.UTF_8);
    }
    assertThat(sizes).isEqualTo(List.of(2, 2, 1));
    assertThat(walked).isEqualTo(groups);
    JsonObject entry = node.get("/api/v1/consumer-groups?limit=1", h).array().getJsonObject(0);
    assertThat(entry.fieldNames()).as("Queen's entry, unchanged")
        .containsExactlyInAnyOrder("name", "topics", "members", "totalLag", "maxTimeLag", "state", "queues");
  }

  @Test
  void aGroupThatOnlySoughtIsListedAndOneWithoutCursorsIsNot() {
    var h = tenant();
    String q = Wire.queue("groups-seek");
    assertThat(Wire.push(node, h, List.of(Wire.item(q, null, 1, "m"))).status()).isEqualTo(201);
    Reply seek = node.post("/api/v1/consumer-groups/sought/queues/" + q + "/seek",
        new JsonObject().put("toEnd", true), h);
    assertThat(seek.status()).as(seek.body()).isEqualTo(200);
    assertThat(node.get(Wire.popPath(q, null, "popped", "autoAck=true"), h).status()).isEqualTo(200);
    assertThat(names(node.get("/api/v1/consumer-groups", h).array())).containsExactly("popped", "sought");

    Reply gone = node.delete("/api/v1/consumer-groups/popped?deleteMetadata=false", h);
    assertThat(gone.status()).as(gone.body()).isEqualTo(200);
    assertThat(names(node.get("/api/v1/consumer-groups", h).array())).as("its registration stays, its cursors went")
        .containsExactly("sought");
  }

  @Test
  void aBadLimitOrCursorIsA400NamingIt() {
    var h = tenant();
    for (String bad : new String[] {"0", "-1", "ten", "1.5"}) {
      Reply r = node.get("/api/v1/consumer-groups?limit=" + bad, h);
      assertThat(r.status()).as(bad).isEqualTo(400);
      assertThat(r.json().getString("error")).startsWith("limit must be");
    }
    Reply over = node.get("/api/v1/consumer-groups?limit=5000", h);
    assertThat(over.status()).as("above the maximum: clamped to it").isEqualTo(200);
    for (String bad : new String[] {"not*base64", "AA", "eA=="}) {
      Reply r = node.get("/api/v1/consumer-groups?cursor=" + URLEncoder.encode(bad, StandardCharsets.UTF_8), h);
      assertThat(r.status()).as(bad).isEqualTo(400);
      assertThat(r.json().getString("error")).startsWith("cursor is not one");
    }
  }

  @Test
  void aPageOfFiftyThousandGroupsReadsTheIndexNotEveryCursor() throws Exception {
    long t0 = System.nanoTime();
    Reply first = node.get("/api/v1/consumer-groups?limit=25", Map.of());
    long firstMs = (System.nanoTime() - t0) / 1_000_000;
    assertThat(first.status()).as(first.body()).isEqualTo(200);
    assertThat(names(first.array())).hasSize(25).first().isEqualTo("g-00001");
    assertThat(first.header(NEXT)).isNotNull();
    t0 = System.nanoTime();
    String middle = java.util.Base64.getUrlEncoder().withoutPadding()
        .encodeToString("g-25000".getBytes(StandardCharsets.UTF_8));
    Reply deep = node.get("/api/v1/consumer-groups?limit=25&cursor=" + middle, Map.of());
    long deepMs = (System.nanoTime() - t0) / 1_000_000;
    assertThat(deep.status()).as(deep.body()).isEqualTo(200);
    assertThat(names(deep.array())).hasSize(25).first().isEqualTo("g-25001");
    t0 = System.nanoTime();
    Reply whole = node.get("/api/v1/consumer-groups", Map.of());
    long defaultMs = (System.nanoTime() - t0) / 1_000_000;
    assertThat(whole.array()).hasSize(100);
    t0 = System.nanoTime();
    Reply lagging = node.get("/api/v1/consumer-groups/lagging?minLagSeconds=60", Map.of());
    long laggingMs = (System.nanoTime() - t0) / 1_000_000;
    System.out.printf("consumer-groups at %d groups: limit=25 %d ms, limit=25 from g-25000 %d ms, default page %d ms, "
        + "lagging %d ms (%d)%n", GROUPS, firstMs, deepMs, defaultMs, laggingMs, lagging.status());

    // What a page reads, by PostgreSQL's per-transaction counters: no sequential scan of log_consumers, and a few
    // blocks per listed group instead of the table's every block.
    try (Connection c = DriverManager.getConnection("jdbc:postgresql://" + db().host() + ":" + db().port() + "/"
        + db().database(), db().user(), db().password()); Statement st = c.createStatement()) {
      long tableBlocks = count(st, "SELECT pg_relation_size('queen.log_consumers') / 8192");
      c.setAutoCommit(false);
      for (String after : new String[] {"NULL", "'g-25000'"}) {
        long seqBefore = seqScans(st);
        long blocksBefore = blocks(st);
        assertThat(count(st, "SELECT jsonb_array_length(body::jsonb) FROM queen.consumer_groups(NULL, " + after
            + ", 25)")).isEqualTo(25);
        assertThat(seqScans(st) - seqBefore).as("sequential scans of log_consumers and consumer_groups_metadata")
            .isZero();
        assertThat(blocks(st) - blocksBefore).as("log_consumers blocks read by a page of 25 (table: %d)", tableBlocks)
            .isLessThan(tableBlocks / 2);
        System.out.printf("a page of 25 after %s read %d blocks of log_consumers (table %d)%n", after,
            blocks(st) - blocksBefore, tableBlocks);
      }
      c.rollback();
    }
  }

  static long count(Statement st, String sql) throws java.sql.SQLException {
    try (var rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** Sequential scans of log_consumers and consumer_groups_metadata this transaction has started so far. */
  static long seqScans(Statement st) throws java.sql.SQLException {
    return count(st, "SELECT pg_stat_get_xact_numscans('queen.log_consumers'::regclass) "
        + "+ pg_stat_get_xact_numscans('queen.consumer_groups_metadata'::regclass)");
  }

  /** Heap and index blocks of log_consumers this transaction has touched so far. */
  static long blocks(Statement st) throws java.sql.SQLException {
    return count(st, "SELECT sum(pg_stat_get_xact_blocks_fetched(c.oid)) FROM pg_class c "
        + "WHERE c.oid = 'queen.log_consumers'::regclass OR c.oid IN (SELECT i.indexrelid FROM pg_index i "
        + "WHERE i.indrelid = 'queen.log_consumers'::regclass)");
  }
}
