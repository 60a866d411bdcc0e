package io.queenvertx.messages;

import static io.queenvertx.testing.Wire.NONE;
import static io.queenvertx.testing.Wire.item;
import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * GET /api/v1/messages with a status filter reads a bounded number of txns rows per partition (issue 23): the bound
 * must still hold every qualifying frame of the page when dead letters sit among the newest offsets and when the
 * committed cursor falls inside a multi-frame segment.
 */
class MessageListingBoundsIT {
  @NodeFixture
  static TestNode node;

  static List<String> txns(String query) {
    TestNode.Reply r = node.get("/api/v1/messages?" + query);
    assertThat(r.status()).as("GET /api/v1/messages?%s answered %s", query, r.body()).isEqualTo(200);
    return Wire.list(r.json().getJsonArray("messages")).stream().map(m -> m.getString("transactionId")).toList();
  }

  @Test
  void statusPagesSkipDeadLettersAmongTheNewestAndStartInsideTheSegmentHoldingTheCursor() {
    String q = Wire.queue("list-bounds");
    // offsets 0..4: one push request, one segment (and one txns row); offsets 5..9: one push each
    List<JsonObject> batch = new ArrayList<>();
    for (int i = 0; i < 5; i++) batch.add(item(q, null, new JsonObject().put("i", i), "a-" + i));
    Wire.pushAll(node, NONE, batch);
    for (int i = 0; i < 5; i++) Wire.pushOne(node, q, null, new JsonObject().put("j", i), "b-" + i);
    String pid = Wire.partitionId(q, "Default");
    assertThat(Wire.txnRows(pid)).as("precondition: six txns rows").isEqualTo(6);
    // the queue-mode cursor inside the first segment: offsets 0..2 completed
    Wire.execute("INSERT INTO queen.log_consumers (partition_id, consumer_group, committed) VALUES ('" + pid
        + "', '__QUEUE_MODE__', 2) ON CONFLICT (partition_id, consumer_group) DO UPDATE SET committed = 2");
    // the two newest offsets are dead letters
    Wire.execute("INSERT INTO queen.log_dlq (partition_id, consumer_group, \"offset\", error) VALUES ('" + pid
        + "', '__QUEUE_MODE__', 9, 'x'), ('" + pid + "', '__QUEUE_MODE__', 8, 'x')");

    assertThat(txns("queue=" + q + "&status=pending&limit=2")).as("the two newest pending frames, past 2 dead letters")
        .containsExactly("b-2", "b-1");
    assertThat(txns("queue=" + q + "&status=pending&limit=20"))
        .as("every pending frame, down to the one right after the committed cursor")
        .containsExactly("b-2", "b-1", "b-0", "a-4", "a-3");
    assertThat(txns("queue=" + q + "&status=pending&limit=2&offset=2")).containsExactly("b-0", "a-4");
    assertThat(txns("queue=" + q + "&status=completed&limit=2")).containsExactly("a-2", "a-1");
    assertThat(txns("queue=" + q + "&status=dead_letter")).containsExactly("b-4", "b-3");
    assertThat(txns("queue=" + q + "&status=bogus")).isEmpty();
  }
}
