package io.queenvertx.engine;

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
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * A queue's partitions ({@code GET /api/v1/resources/queues/:queue}) and a message's trace timeline
 * ({@code GET /api/v1/traces/:partitionId/:transactionId}) come a page at a time (issue 34 item 12: a queue of 100,000
 * partitions answered 35 MB, a timeline of 46,000 traces 40 MB). Both keep Queen's document; {@code limit} (1000 by
 * default and at most) sizes the page and {@code X-Next-Cursor} carries the next page's cursor, absent on the last.
 */
class LargeListingsIT {
  static final String NEXT = "X-Next-Cursor";

  @NodeFixture(freshDatabase = true)
  static TestNode node;

  static Config.Database db() {
    return node.node().config().postgres().connection().orElseThrow();
  }

  /** Follows X-Next-Cursor from {@code path} to the last page; the list each page holds, page by page. */
  static List<JsonArray> pages(String path, Function<JsonObject, JsonArray> list) {
    List<JsonArray> out = new ArrayList<>();
    String next = null;
    do {
      String sep = path.contains("?") ? "&" : "?";
      Reply r = node.get(next == null ? path
          : path + sep + "cursor=" + URLEncoder.encode(next, StandardCharsets.UTF_8));
      assertThat(r.status()).as(r.body()).isEqualTo(200);
      out.add(list.apply(r.json()));
      next = r.header(NEXT);
    } while (next != null);
    return out;
  }

  static List<String> field(List<JsonArray> pages, String key) {
    List<String> out = new ArrayList<>();
    for (JsonArray page : pages) for (Object o : page) out.add(((JsonObject) o).getString(key));
    return out;
  }

  @Test
  void aQueuesPartitionsComeAPageAtATimeWithTheQueuesTotals() {
    String q = Wire.queue("many-parts");
    for (String p : new String[] {"p-c", "p-a", "p-e", "p-b", "p-d"}) Wire.pushQueued(node, q, p, 1, "m-" + p);
    JsonObject whole = node.get("/api/v1/resources/queues/" + q).json();
    assertThat(whole.getJsonArray("partitions")).hasSize(5);

    List<JsonArray> pages = pages("/api/v1/resources/queues/" + q + "?limit=2", j -> {
      assertThat(j.getJsonObject("totals")).as("every page carries the queue's totals")
          .isEqualTo(whole.getJsonObject("totals"));
      return j.getJsonArray("partitions");
    });
    assertThat(pages).extracting(JsonArray::size).containsExactly(2, 2, 1);
    assertThat(field(pages, "name")).containsExactly("p-a", "p-b", "p-c", "p-d", "p-e");
    assertThat(node.get("/api/v1/resources/queues/" + q + "?limit=none").status()).isEqualTo(400);
  }

  @Test
  void aQueueOfOneHundredThousandPartitionsAnswersAThousand() {
    String q = Wire.queue("parts-100k");
    Wire.pushQueued(node, q, "p-000000", 1, "seed");
    TestDatabase.execute(db(), "INSERT INTO queen.log_partitions (queue_id, name) SELECT q.id, 'p-' || lpad(g::text, "
        + "6, '0') FROM queen.queues q, generate_series(1, 99999) g WHERE q.name = '" + q + "'");
    long t0 = System.nanoTime();
    Reply first = node.get("/api/v1/resources/queues/" + q);
    long ms = (System.nanoTime() - t0) / 1_000_000;
    assertThat(first.status()).as(first.body()).isEqualTo(200);
    JsonArray parts = first.json().getJsonArray("partitions");
    assertThat(parts).hasSize(1000);
    assertThat(parts.getJsonObject(999).getString("name")).isEqualTo("p-000999");
    assertThat(first.json().getJsonObject("totals").getLong("total")).isEqualTo(1);
    Reply second = node.get("/api/v1/resources/queues/" + q + "?cursor="
        + URLEncoder.encode(first.header(NEXT), StandardCharsets.UTF_8));
    assertThat(second.json().getJsonArray("partitions").getJsonObject(0).getString("name")).isEqualTo("p-001000");
    System.out.printf("queue of 100,000 partitions: first page %d bytes in %d ms%n", first.body().length(), ms);
  }

  @Test
  void aMessagesTimelineComesAPageAtATimeOldestFirst() {
    String q = Wire.queue("timeline");
    JsonObject pushed = Wire.pushOne(node, q, null, 1, "t-1");
    String pid = pushed.getString("partitionId");
    for (int i = 0; i < 5; i++) {
      Reply r = node.post("/api/v1/traces", new JsonObject().put("transactionId", "t-1").put("partitionId", pid)
          .put("data", new JsonObject().put("step", i)));
      assertThat(r.status()).as(r.body()).isEqualTo(201);
    }
    String path = "/api/v1/traces/" + pid + "/t-1";
    assertThat(node.get(path).json().getJsonArray("traces")).hasSize(5);
    assertThat(node.get(path).header(NEXT)).isNull();
    List<JsonArray> pages = pages(path + "?limit=2", j -> j.getJsonArray("traces"));
    assertThat(pages).extracting(JsonArray::size).containsExactly(2, 2, 1);
    List<Integer> steps = new ArrayList<>();
    for (JsonArray page : pages) {
      for (Object o : page) steps.add(((JsonObject) o).getJsonObject("data").getInteger("step"));
    }
    assertThat(steps).containsExactly(0, 1, 2, 3, 4);
    for (String bad : new String[] {"eA", "MSwy", "not*ours"}) {
      Reply r = node.get(path + "?cursor=" + URLEncoder.encode(bad, StandardCharsets.UTF_8));
      assertThat(r.status()).as(bad).isEqualTo(400);
      assertThat(r.json().getString("error")).startsWith("cursor is not one");
    }
  }

  @Test
  void aTimelineOfFortySixThousandTracesAnswersAThousand() {
    String q = Wire.queue("timeline-46k");
    String pid = Wire.pushOne(node, q, null, 1, "busy").getString("partitionId");
    TestDatabase.execute(db(), "INSERT INTO queen.message_traces (tenant_id, partition_id, transaction_id, data, "
        + "created_at) SELECT '" + Wire.DEFAULT_TENANT + "', '" + pid + "', 'busy', jsonb_build_object('i', g), "
        + "now() - (46000 - g) * interval '1 ms' FROM generate_series(1, 46000) g");
    long t0 = System.nanoTime();
    Reply first = node.get("/api/v1/traces/" + pid + "/busy");
    long ms = (System.nanoTime() - t0) / 1_000_000;
    JsonArray traces = first.json().getJsonArray("traces");
    assertThat(traces).hasSize(1000);
    assertThat(traces.getJsonObject(0).getJsonObject("data").getInteger("i")).isEqualTo(1);
    Reply second = node.get("/api/v1/traces/" + pid + "/busy?cursor="
        + URLEncoder.encode(first.header(NEXT), StandardCharsets.UTF_8));
    assertThat(second.json().getJsonArray("traces").getJsonObject(0).getJsonObject("data").getInteger("i"))
        .isEqualTo(1001);
    System.out.printf("timeline of 46,000 traces: first page %d bytes in %d ms%n", first.body().length(), ms);
  }
}
