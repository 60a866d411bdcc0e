package io.queenvertx.messages;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.TestNode.Reply;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The server-side filters of GET /api/v1/dlq beyond queue and consumerGroup: partition, from, to (Queen v15's DLQBuilder
 * sends them, API.md §5.10) and error (a case-insensitive substring of the error text; beyond Queen). Malformed or
 * inverted bounds are a 400 naming the field.
 */
class DlqFiltersIT {
  @NodeFixture
  static TestNode node;

  /** Rows of one queue: partition p1 rows a-0..a-3 (failed 2026-01-01T00:0g:00Z), p2 rows b-0..b-1 (00:0g:30Z). */
  static String fixture(String prefix) {
    String q = Wire.queue(prefix);
    Wire.pushOne(node, q, "p1", 1, "x");
    Wire.pushOne(node, q, "p2", 1, "y");
    insert(Wire.partitionId(q, "p1"), "a", 0, 4, "'Handler THREW: timeout after ' || g || ' ms'");
    insert(Wire.partitionId(q, "p2"), "b", 30, 2, "'schema rejected field <b>amount</b>'");
    return q;
  }

  static void insert(String pid, String prefix, int seconds, int n, String errorSql) {
    Wire.execute("INSERT INTO queen.log_dlq (partition_id, consumer_group, \"offset\", message_id, transaction_id, "
        + "payload, error, retry_count, failed_at) SELECT '" + pid + "'::uuid, 'g', g, gen_random_uuid(), '" + prefix
        + "-' || g, jsonb_build_object('g', g), " + errorSql + ", 0, "
        + "timestamptz '2026-01-01T00:00:00Z' + make_interval(mins => g, secs => " + seconds + ") "
        + "FROM generate_series(0, " + (n - 1) + ") g");
  }

  static List<String> txns(String query) {
    Reply r = node.get("/api/v1/dlq?" + query);
    assertThat(r.status()).as("GET /api/v1/dlq?%s answered %s", query, r.body()).isEqualTo(200);
    return Wire.list(r.json().getJsonArray("messages")).stream().map(m -> m.getString("transactionId")).toList();
  }

  static void assertRefused(String query, String field) {
    Reply r = node.get("/api/v1/dlq?" + query);
    assertThat(r.status()).as("GET /api/v1/dlq?%s answered %s", query, r.body()).isEqualTo(400);
    assertThat(r.json().getString("error")).as(query)
        .startsWith(field + " must be an ISO-8601 date-time such as 2026-07-30T11:02:44Z, got ");
  }

  @Test
  void partitionNarrowsTheListingToThatPartition() {
    String q = fixture("dlqf-part");
    assertThat(txns("queue=" + q)).containsExactly("a-3", "a-2", "b-1", "a-1", "b-0", "a-0");
    assertThat(txns("queue=" + q + "&partition=p2")).containsExactly("b-1", "b-0");
    assertThat(txns("queue=" + q + "&partition=p1")).containsExactly("a-3", "a-2", "a-1", "a-0");
    assertThat(txns("queue=" + q + "&partition=p3")).isEmpty();
  }

  @Test
  void fromIsInclusiveAndToIsExclusiveOnFailedAt() {
    String q = fixture("dlqf-time");
    assertThat(txns("queue=" + q + "&partition=p1&from=2026-01-01T00:01:00Z"))
        .containsExactly("a-3", "a-2", "a-1");
    assertThat(txns("queue=" + q + "&partition=p1&to=2026-01-01T00:02:00Z")).containsExactly("a-1", "a-0");
    assertThat(txns("queue=" + q + "&from=2026-01-01T00:01:00Z&to=2026-01-01T00:03:00.000Z"))
        .containsExactly("a-2", "b-1", "a-1");
    assertThat(txns("queue=" + q + "&from=2026-01-01T00:02:00Z&to=2026-01-01T00:02:00Z")).isEmpty();
  }

  @Test
  void errorIsACaseInsensitiveSubstringAndNotAPattern() {
    String q = fixture("dlqf-error");
    assertThat(txns("queue=" + q + "&error=handler%20threw")).containsExactly("a-3", "a-2", "a-1", "a-0");
    assertThat(txns("queue=" + q + "&error=AFTER%202%20MS")).containsExactly("a-2");
    assertThat(txns("queue=" + q + "&error=%3Cb%3Eamount")).containsExactly("b-1", "b-0");
    assertThat(txns("queue=" + q + "&error=%25")).as("% is a literal character, not a wildcard").isEmpty();
    assertThat(txns("queue=" + q + "&error=t_meout")).as("_ is a literal character, not a wildcard").isEmpty();
    assertThat(txns("queue=" + q + "&error=schema&partition=p1")).isEmpty();
  }

  @Test
  void aMalformedBoundIsA400NamingIt() {
    String q = fixture("dlqf-bad");
    assertRefused("queue=" + q + "&from=yesterday", "from"); // PostgreSQL would read this one: ISO only
    assertRefused("queue=" + q + "&from=not-a-time", "from");
    assertRefused("queue=" + q + "&to=2026-13-45T00:00:00Z", "to");
    assertRefused("queue=" + q + "&from=2026-01-01T00:00:00Z&to=soon", "to");
    assertThat(txns("queue=" + q + "&partition=p1&from=2026-01-01T00:03:00%2B00:00&to=2026-01-01T01:00"))
        .as("an explicit offset, and a date-time without one read as UTC").containsExactly("a-3");
  }

  @Test
  void fromAfterToIsA400() {
    String q = fixture("dlqf-order");
    Reply r = node.get("/api/v1/dlq?queue=" + q + "&from=2026-01-01T00:03:00Z&to=2026-01-01T00:01:00Z");
    assertThat(r.status()).as("%s", r.body()).isEqualTo(400);
    assertThat(r.json()).isEqualTo(io.queenvertx.testing.Wire.error(400,
        "from (2026-01-01T00:03:00Z) is after to (2026-01-01T00:01:00Z)"));
  }
}
