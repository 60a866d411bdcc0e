package io.queenvertx.messages;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonObject;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * GET /api/v1/messages reads only the txns rows near the page (issue 23): a from/to window deep in a partition, a
 * cursor deep in it, a completed page below the newest rows and a dead_letter page must not walk the newer rows (or
 * every row); first, offset, one-partition and pending pages read offset + limit rows, not the partition. The pages are checked over
 * HTTP; the rows read are counted from the transaction's own statistics around the listing procedure the route runs.
 */
class MessageListingScanIT {
  static final int ROWS = 300;
  @NodeFixture
  static TestNode node;
  static String q;
  static String pid;

  @BeforeAll
  static void fill() {
    otherQueues();
    q = Wire.queue("list-scan");
    // one push request per message: ROWS txns rows of one frame each, message m-i at offset i
    for (int i = 0; i < ROWS; i++) Wire.pushOne(node, q, null, new JsonObject().put("i", i), "m-" + i);
    pid = Wire.partitionId(q, "Default");
    assertThat(Wire.txnRows(pid)).as("precondition: one txns row per message").isEqualTo(ROWS);
    Wire.execute("ANALYZE queen.log_segments, queen.log_partitions, queen.queues"); // as autovacuum would
  }

  /**
   * Other tests' rows, as the shared database holds them when the whole suite runs (the bounds below failed there and
   * passed alone): 73 queues of one or two rows and one of 60, pushed before this queue's rows. With the statistics
   * of that small table (this queue's partition about two thirds of it) the planner once joined the page's txns rows
   * to their partition by partition_id alone and read the partition's every row for each message of the page.
   */
  static void otherQueues() {
    for (int i = 0; i < 74; i++) {
      String other = Wire.queue("list-scan-other");
      int rows = i == 0 ? 60 : 1 + i % 2;
      for (int j = 0; j < rows; j++) {
        List<JsonObject> batch = new ArrayList<>();
        for (int f = 0; f <= j % 3; f++) {
          batch.add(Wire.item(other, "Default", new JsonObject().put("f", f), "o-" + j + "-" + f));
        }
        Wire.pushAll(node, Wire.NONE, batch);
      }
    }
  }

  static List<String> txns(String query) {
    TestNode.Reply r = node.get("/api/v1/messages?" + query);
    assertThat(r.status()).as("GET /api/v1/messages?%s answered %s", query, r.body()).isEqualTo(200);
    return Wire.list(r.json().getJsonArray("messages")).stream().map(m -> m.getString("transactionId")).toList();
  }

  /** The created_at of the txns row at {@code offset}, as an ISO timestamp with microseconds. */
  static String createdAt(int offset) {
    return TestDatabase.queryString(Wire.db(), "SELECT to_char(created_at AT TIME ZONE 'UTC', "
        + "'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') FROM queen.log_segments WHERE partition_id = '" + pid
        + "' AND base_offset = " + offset);
  }

  /**
   * Segment rows the listing procedure fetched for {@code filter}, from its transaction's statistics. Sequential and
   * bitmap scans, hash and merge joins are off in that session: on a table this small the planner would read all of
   * it either way, while on a big one it walks the primary key and probes it per row, as here, and the offset bounds
   * decide how far the walk goes.
   */
  static long txnRowsRead(JsonObject filter) {
    String call = "SELECT queen.list_messages(NULL, '" + filter.encode().replace("'", "''") + "'::jsonb)::text";
    List<String> out = TestDatabase.inTransaction(Wire.db(), "SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_hashjoin = off; SET enable_mergejoin = off",
        List.of(call, "SELECT COALESCE(idx_tup_fetch, 0) + COALESCE(seq_tup_read, 0) FROM pg_stat_xact_user_tables "
            + "WHERE relid = 'queen.log_segments'::regclass"),
        "SELECT 1");
    assertThat(new JsonObject(out.get(0)).containsKey("messages")).as("listing %s", out.get(0)).isTrue();
    return Long.parseLong(out.get(1));
  }

  static List<String> keys(TestNode.Reply r) {
    return Wire.list(r.json().getJsonArray("messages")).stream()
        .map(m -> m.getString("partition") + "/" + m.getString("transactionId")).toList();
  }

  @Test
  void offsetPagesOverMultiFrameRowsOfSeveralPartitionsMatchTheCursorPages() {
    String mq = Wire.queue("list-offset");
    // three partitions, pushes of 1..5 frames each: rows of several frames, interleaved in time
    int n = 0;
    for (int round = 0; round < 6; round++) {
      for (int part = 0; part < 3; part++) {
        List<JsonObject> batch = new ArrayList<>();
        for (int f = 0; f <= (round + part) % 5; f++) {
          batch.add(Wire.item(mq, "p" + part, new JsonObject().put("n", n), "t-" + n++));
        }
        Wire.pushAll(node, Wire.NONE, batch);
      }
    }
    List<String> byCursor = new ArrayList<>();
    String cursor = null;
    do {
      TestNode.Reply r = node.get("/api/v1/messages?queue=" + mq + "&limit=7" + (cursor == null ? "" : "&cursor="
          + enc(cursor)));
      assertThat(r.status()).isEqualTo(200);
      byCursor.addAll(keys(r));
      cursor = r.json().getString("nextCursor");
    } while (cursor != null);
    assertThat(byCursor).as("every message once").hasSize(n).doesNotHaveDuplicates();
    List<String> byOffset = new ArrayList<>();
    for (int off = 0; off <= n; off += 7) {
      TestNode.Reply r = node.get("/api/v1/messages?queue=" + mq + "&limit=7&offset=" + off);
      assertThat(r.status()).isEqualTo(200);
      byOffset.addAll(keys(r));
    }
    assertThat(byOffset).as("offset pages, concatenated").containsExactlyElementsOf(byCursor);
    assertThat(keys(node.get("/api/v1/messages?queue=" + mq + "&limit=3&offset=10&partition=p1")))
        .as("offset page of one partition").containsExactlyElementsOf(
            byCursor.stream().filter(k -> k.startsWith("p1/")).skip(10).limit(3).toList());
  }

  static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }

  @Test
  void aWindowDeepInThePartitionStartsAtItsEnd() {
    String from = createdAt(100);
    String to = createdAt(110);
    assertThat(txns("queue=" + q + "&limit=5&from=" + enc(from) + "&to=" + enc(to)))
        .containsExactly("m-109", "m-108", "m-107", "m-106", "m-105");
    assertThat(txns("queue=" + q + "&limit=50&from=" + enc(from) + "&to=" + enc(to))).hasSize(10)
        .startsWith("m-109").endsWith("m-100");
    // without the offset bounds the scan walks the 190 newer rows (and, for the short page, the 100 older ones)
    long read = txnRowsRead(new JsonObject().put("queue", q).put("limit", "50").put("from", from).put("to", to));
    assertThat(read).as("txns rows read for a 10-row window").isLessThan(80);
  }

  @Test
  void aCursorDeepInThePartitionStartsAtTheCursor() {
    String to = createdAt(60);
    TestNode.Reply first = node.get("/api/v1/messages?queue=" + q + "&limit=5&to=" + enc(to));
    assertThat(Wire.list(first.json().getJsonArray("messages")).stream().map(m -> m.getString("transactionId")))
        .containsExactly("m-59", "m-58", "m-57", "m-56", "m-55");
    String cursor = first.json().getString("nextCursor");
    assertThat(cursor).isNotNull();
    assertThat(txns("queue=" + q + "&limit=3&cursor=" + enc(cursor))).containsExactly("m-54", "m-53", "m-52");
    long read = txnRowsRead(new JsonObject().put("queue", q).put("limit", "3").put("cursor", cursor));
    assertThat(read).as("txns rows read for a cursor page 245 rows below the newest").isLessThan(60);
  }

  /**
   * Every page kind runs its own statement (issue 23), so each carries its own bound: a page without a status filter
   * (first page, offset page, one partition) walks offset + limit rows of each partition, a status page scans at most
   * offset + limit + dead letters + 1 rows, each plus one probe per row of the page to render it.
   */
  @Test
  void pagesWithoutAStatusWalkOffsetPlusLimitRows() {
    assertThat(txns("queue=" + q + "&limit=5")).containsExactly("m-299", "m-298", "m-297", "m-296", "m-295");
    assertThat(txns("queue=" + q + "&limit=5&offset=20")).containsExactly("m-279", "m-278", "m-277", "m-276", "m-275");
    assertThat(txns("queue=" + q + "&limit=5&partition=Default")).startsWith("m-299").hasSize(5);
    assertThat(txnRowsRead(new JsonObject().put("queue", q).put("limit", "5")))
        .as("txns rows read for a first page of 5 among %s rows", ROWS).isLessThan(20);
    assertThat(txnRowsRead(new JsonObject().put("queue", q).put("limit", "5").put("offset", "20")))
        .as("txns rows read for a page of 5 at offset 20 among %s rows", ROWS).isLessThan(45);
    assertThat(txnRowsRead(new JsonObject().put("queue", q).put("limit", "5").put("partition", "Default")))
        .as("txns rows read for a page of 5 of one partition among %s rows", ROWS).isLessThan(20);
  }

  @Test
  void statusPagesScanOnlyNearThePage() {
    assertThat(txns("queue=" + q + "&limit=5&status=pending"))
        .containsExactly("m-299", "m-298", "m-297", "m-296", "m-295");
    assertThat(txnRowsRead(new JsonObject().put("queue", q).put("limit", "5").put("status", "pending")))
        .as("txns rows read for a pending page of 5 among %s rows", ROWS).isLessThan(25);
    // the queue-mode cursor has passed offset 150: a completed page starts there, not at the newest row
    Wire.execute("INSERT INTO queen.log_consumers (partition_id, consumer_group, committed) VALUES ('" + pid
        + "', '__QUEUE_MODE__', 150) ON CONFLICT (partition_id, consumer_group) DO UPDATE SET committed = 150");
    assertThat(txns("queue=" + q + "&limit=5&status=completed"))
        .containsExactly("m-150", "m-149", "m-148", "m-147", "m-146");
    assertThat(txnRowsRead(new JsonObject().put("queue", q).put("limit", "5").put("status", "completed")))
        .as("txns rows read for a completed page of 5, 150 rows below the newest").isLessThan(30);
    assertThat(txns("queue=" + q + "&limit=5&status=pending"))
        .containsExactly("m-299", "m-298", "m-297", "m-296", "m-295");
  }

  /**
   * The statements whose LIMITs are parameters are planned with their values; the others (index probes whatever the
   * values) keep one generic plan per session instead of being planned on every page.
   */
  @Test
  void eachPageStatementHasItsPlanMode() {
    Map<String, String> modes = Map.of("list_messages", "force_custom_plan", "_msg_page_cand", "force_generic_plan",
        "_msg_page_rows", "force_generic_plan", "_msg_page_frames", "force_custom_plan", "_msg_page_dead",
        "force_custom_plan", "_msg_page_render", "force_generic_plan");
    modes.forEach((fn, mode) -> assertThat(TestDatabase.queryString(Wire.db(),
        "SELECT array_to_string(p.proconfig, ',') FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
            + "WHERE n.nspname = 'queen' AND p.proname = '" + fn + "'")).as(fn).isEqualTo("plan_cache_mode=" + mode));
  }

  @Test
  void aDeadLetterPageReadsTheDeadLettersOnly() {
    Wire.execute("INSERT INTO queen.log_dlq (partition_id, consumer_group, \"offset\", error) VALUES ('" + pid
        + "', '__QUEUE_MODE__', 7, 'x'), ('" + pid + "', 'g1', 7, 'x'), ('" + pid + "', '__QUEUE_MODE__', 3, 'x')");
    assertThat(txns("queue=" + q + "&status=dead_letter")).containsExactly("m-7", "m-3");
    assertThat(txns("queue=" + q + "&status=dead_letter&limit=1&offset=1")).containsExactly("m-3");
    long read = txnRowsRead(new JsonObject().put("queue", q).put("status", "dead_letter"));
    assertThat(read).as("txns rows read for a page of 2 dead letters among %s rows", ROWS).isLessThan(10);
  }
}
