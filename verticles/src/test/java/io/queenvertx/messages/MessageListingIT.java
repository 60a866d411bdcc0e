package io.queenvertx.messages;

import static io.queenvertx.testing.Wire.NONE;
import static io.queenvertx.testing.Wire.item;
import static io.queenvertx.testing.Wire.list;
import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.TestNode.Reply;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * GET /api/v1/messages (seeds/messages-and-dlq.txt "GET /api/v1/messages", API.md §5.9, ENGINE.md §8.1): the listing's
 * shape, payload fill-in from segments (one decode per segment per page), status and mode derivation, filters, paging.
 */
class MessageListingIT {
  /** Every key of the seed's example message. */
  static final Set<String> MESSAGE_KEYS = Set.of("id", "transactionId", "txnHash", "partitionId", "queuePath", "queue",
      "partition", "namespace", "task", "status", "queueStatus", "busStatus", "traceId", "producerSub",
      "payloadAvailable", "segment", "createdAt", "leaseExpiresAt", "data", "payload");
  /** Keys API.md allows beside them. */
  static final Set<String> OPTIONAL_MESSAGE_KEYS = Set.of("isEncrypted", "queuePriority");

  @NodeFixture
  static TestNode node;

  static Reply listing(String query) {
    return node.get("/api/v1/messages?" + query);
  }

  static JsonObject listingOk(String query) {
    Reply r = listing(query);
    assertThat(r.status()).as("GET /api/v1/messages?%s answered %s", query, r.body()).isEqualTo(200);
    assertThat(r.header("content-type")).startsWith("application/json");
    return r.json();
  }

  static List<JsonObject> messagesOf(String query) {
    return list(listingOk(query).getJsonArray("messages"));
  }

  static JsonObject byTxn(List<JsonObject> msgs, String txn) {
    return msgs.stream().filter(m -> txn.equals(m.getString("transactionId"))).findFirst()
        .orElseThrow(() -> new AssertionError("no listed message " + txn + " in " + msgs));
  }

  // ---- shape ------------------------------------------------------------------------------------------------------

  @Test
  void eachListedMessageCarriesExactlyTheSeedsKeysAndTheAnswerIsMessagesModeTotal() {
    String ns = "ns" + Wire.shortId();
    String q = ns + ".invoice.shape";
    Wire.pushOne(node, q, "eu-1", new JsonObject().put("amount", 41), "order-4471");
    JsonObject body = listingOk("queue=" + q);
    assertThat(body.fieldNames()).as("top-level keys of %s", body.encode())
        .containsAll(Set.of("messages", "mode", "total"));
    assertThat(new HashSet<>(body.fieldNames())).as("no top-level key beyond messages/mode/total (nextCursor aside)")
        .isSubsetOf(Set.of("messages", "mode", "total", "nextCursor"));
    assertThat(body.getJsonObject("mode").fieldNames()).containsExactlyInAnyOrder("hasQueueMode", "busGroupsCount",
        "type");
    List<JsonObject> msgs = list(body.getJsonArray("messages"));
    assertThat(msgs).hasSize(1);
    JsonObject m = msgs.get(0);
    assertThat(m.fieldNames()).as("keys of %s", m.encode()).containsAll(MESSAGE_KEYS);
    Set<String> allowed = new HashSet<>(MESSAGE_KEYS);
    allowed.addAll(OPTIONAL_MESSAGE_KEYS);
    assertThat(new HashSet<>(m.fieldNames())).as("keys of %s", m.encode()).isSubsetOf(allowed);
    assertThat(m.getJsonObject("busStatus").fieldNames()).containsExactlyInAnyOrder("consumedBy", "totalGroups");
    assertThat(m.getJsonObject("segment").fieldNames()).containsExactlyInAnyOrder("seq", "frameIdx");
    String pid = Wire.partitionId(q, "eu-1");
    assertThat(m.getString("partitionId")).isEqualTo(pid);
    assertThat(m.getString("queuePath")).isEqualTo(q + "/eu-1");
    assertThat(m.getString("queue")).isEqualTo(q);
    assertThat(m.getString("partition")).isEqualTo("eu-1");
    assertThat(m.getString("namespace")).isEqualTo(ns);
    assertThat(m.getString("task")).isEqualTo("invoice");
    assertThat(m.getString("status")).isEqualTo("pending");
    assertThat(m.getString("queueStatus")).isEqualTo("pending");
    assertThat(m.getValue("traceId")).isNull();
    assertThat(m.getValue("producerSub")).isNull();
    assertThat(m.getValue("leaseExpiresAt")).isNull();
    assertThat(m.getString("createdAt")).matches(Wire.ISO_MS);
    String storedHash = (String) Wire.rows("SELECT encode(substring(hashes from 1 for 16), 'hex') AS h "
        + "FROM queen.log_segments WHERE partition_id = '" + pid + "'").get(0).get("h");
    assertThat(m.getString("txnHash")).as("txnHash is the 32-hex sidecar hash").isEqualTo(storedHash).hasSize(32);
  }

  @Test
  void theBrokerFillsEachPayloadFromItsSegment() {
    String q = Wire.queue("list-fill");
    JsonObject payload = new JsonObject().put("amount", 41).put("tags", new JsonArray().add("a").add("b"));
    JsonArray res = Wire.pushAll(node, NONE, List.of(item(q, null, payload, "fill-1"),
        item(q, null, new JsonObject().put("n", 2), "fill-2")));
    List<JsonObject> msgs = messagesOf("queue=" + q);
    assertThat(msgs).hasSize(2);
    JsonObject m = byTxn(msgs, "fill-1");
    assertThat(m.getBoolean("payloadAvailable")).isTrue();
    assertThat(m.getValue("data")).isEqualTo(payload);
    assertThat(m.getValue("payload")).isEqualTo(payload);
    assertThat(m.getString("id")).isEqualTo(res.getJsonObject(0).getString("message_id"));
    assertThat(m.getValue("traceId")).isNull();
    assertThat(m.getValue("producerSub")).isNull();
    if (m.containsKey("isEncrypted")) assertThat(m.getBoolean("isEncrypted")).isFalse();
    JsonObject m2 = byTxn(msgs, "fill-2");
    assertThat(m2.getValue("data")).isEqualTo(new JsonObject().put("n", 2));
    assertThat(m2.getString("id")).isEqualTo(res.getJsonObject(1).getString("message_id"));
  }

  @Test
  void totalIsTheLengthOfThePageNotOfTheResultSet() {
    String q = Wire.queue("list-total");
    List<JsonObject> items = new ArrayList<>();
    for (int i = 0; i < 5; i++) items.add(item(q, null, new JsonObject().put("i", i), "tot-" + i));
    Wire.pushAll(node, NONE, items);
    JsonObject page = listingOk("queue=" + q + "&limit=3");
    assertThat(page.getJsonArray("messages")).hasSize(3);
    assertThat(page.getInteger("total")).isEqualTo(3);
    JsonObject all = listingOk("queue=" + q);
    assertThat(all.getInteger("total")).isEqualTo(5).isEqualTo(all.getJsonArray("messages").size());
  }

  // ---- status and mode ---------------------------------------------------------------------------------------------

  @Test
  void statusIsPendingThenProcessingUnderALeaseThenCompletedAfterTheAckAndDeadLetterWhenFiled() {
    String q = Wire.queue("list-status");
    Wire.retryLimitZero(node, NONE, q);
    Wire.pushOne(node, q, null, new JsonObject().put("k", "a"), "st-a");
    assertThat(byTxn(messagesOf("queue=" + q), "st-a").getString("status")).isEqualTo("pending");

    JsonObject p = Wire.popSome(node, NONE, q, null, null);
    JsonObject leased = byTxn(messagesOf("queue=" + q), "st-a");
    assertThat(leased.getString("status")).as("a pop holding a lease").isEqualTo("processing");
    assertThat(leased.getString("leaseExpiresAt")).as("the queue-mode lease").matches(Wire.ISO_MS);

    JsonObject ackR = Wire.ack(node, NONE, new JsonObject().put("transactionId", "st-a")
        .put("partitionId", p.getString("partitionId")).put("leaseId", p.getString("leaseId"))
        .put("status", "completed"));
    assertThat(ackR.getBoolean("success")).isTrue();
    assertThat(byTxn(messagesOf("queue=" + q), "st-a").getString("status")).isEqualTo("completed");

    Wire.deadLetter(node, q, null, new JsonObject().put("k", "b"), "st-b", null, "boom");
    List<JsonObject> after = messagesOf("queue=" + q);
    assertThat(byTxn(after, "st-b").getString("status")).isEqualTo("dead_letter");
    assertThat(byTxn(after, "st-a").getString("status")).isEqualTo("completed");
  }

  @Test
  void modeTypeIsNoneWithoutCursorsQueueForQueueModeBusForGroupsOnlyAndHybridForBoth() {
    String none = Wire.queue("list-mode-none");
    Wire.pushOne(node, none, null, 1, "mn");
    assertThat(listingOk("queue=" + none).getJsonObject("mode")).isEqualTo(new JsonObject()
        .put("hasQueueMode", false).put("busGroupsCount", 0).put("type", "none"));

    String queueMode = Wire.queue("list-mode-queue");
    Wire.pushOne(node, queueMode, null, 1, "mq");
    Wire.popSome(node, NONE, queueMode, null, null);
    assertThat(listingOk("queue=" + queueMode).getJsonObject("mode")).isEqualTo(new JsonObject()
        .put("hasQueueMode", true).put("busGroupsCount", 0).put("type", "queue"));

    String bus = Wire.queue("list-mode-bus");
    Wire.pushOne(node, bus, null, 1, "mb");
    Wire.popSome(node, NONE, bus, null, "g1");
    Wire.popSome(node, NONE, bus, null, "g2");
    JsonObject busBody = listingOk("queue=" + bus);
    assertThat(busBody.getJsonObject("mode")).isEqualTo(new JsonObject()
        .put("hasQueueMode", false).put("busGroupsCount", 2).put("type", "bus"));
    assertThat(byTxn(list(busBody.getJsonArray("messages")), "mb").getJsonObject("busStatus").getInteger("totalGroups"))
        .isEqualTo(2);

    String hybrid = Wire.queue("list-mode-hybrid");
    Wire.pushOne(node, hybrid, null, 1, "mh");
    Wire.popSome(node, NONE, hybrid, null, null);
    Wire.popSome(node, NONE, hybrid, null, "g1");
    assertThat(listingOk("queue=" + hybrid).getJsonObject("mode")).isEqualTo(new JsonObject()
        .put("hasQueueMode", true).put("busGroupsCount", 1).put("type", "hybrid"));
  }

  @Test
  void busStatusCountsTheGroupsThatConsumedTheFrame() {
    String q = Wire.queue("list-bus-status");
    Wire.pushOne(node, q, null, 1, "bs");
    JsonObject p1 = Wire.popSome(node, NONE, q, null, "g1");
    Wire.popSome(node, NONE, q, null, "g2");
    Wire.ack(node, NONE, new JsonObject().put("transactionId", "bs").put("partitionId", p1.getString("partitionId"))
        .put("leaseId", p1.getString("leaseId")).put("status", "completed").put("consumerGroup", "g1"));
    JsonObject m = byTxn(messagesOf("queue=" + q), "bs");
    assertThat(m.getJsonObject("busStatus")).isEqualTo(new JsonObject().put("consumedBy", 1).put("totalGroups", 2));
    assertThat(m.getString("status")).as("not every named group has passed it, and g2 holds a lease")
        .isEqualTo("processing");
  }

  // ---- names, segment coordinates -------------------------------------------------------------------------------

  @Test
  void namespaceAndTaskComeFromTheDottedQueueNameAndFilterTheListing() {
    String ns = "ns" + Wire.shortId();
    String task = "tk" + Wire.shortId();
    String q = ns + "." + task + ".jobs";
    String other = ns + ".other" + Wire.shortId();
    Wire.pushOne(node, q, null, 1, "nt-1");
    Wire.pushOne(node, other, null, 2, "nt-2");
    JsonObject m = byTxn(messagesOf("queue=" + q), "nt-1");
    assertThat(m.getString("namespace")).isEqualTo(ns);
    assertThat(m.getString("task")).isEqualTo(task);

    assertThat(messagesOf("namespace=" + ns)).extracting(x -> x.getString("transactionId"))
        .containsExactlyInAnyOrder("nt-1", "nt-2");
    assertThat(messagesOf("ns=" + ns)).as("ns is an alias of namespace").extracting(x -> x.getString("transactionId"))
        .containsExactlyInAnyOrder("nt-1", "nt-2");
    assertThat(messagesOf("namespace=" + ns + "&task=" + task)).extracting(x -> x.getString("transactionId"))
        .containsExactly("nt-1");
    assertThat(messagesOf("task=" + task)).extracting(x -> x.getString("transactionId")).containsExactly("nt-1");
  }

  @Test
  void segmentSeqIsTheCoveringBaseOffsetAndFrameIdxIsOffsetMinusSeq() {
    String q = Wire.queue("list-segment");
    Wire.pushAll(node, NONE, List.of(item(q, null, 0, "sg-0"), item(q, null, 1, "sg-1"), item(q, null, 2, "sg-2")));
    Wire.pushAll(node, NONE, List.of(item(q, null, 3, "sg-3"), item(q, null, 4, "sg-4")));
    String pid = Wire.partitionId(q, "Default");
    assertThat(Wire.rows("SELECT base_offset, end_offset FROM queen.log_segments WHERE partition_id = '" + pid
        + "' ORDER BY base_offset")).as("precondition: two segments [0,2] and [3,4]")
        .extracting(r -> r.get("base_offset") + ".." + r.get("end_offset")).containsExactly("0..2", "3..4");
    List<JsonObject> msgs = messagesOf("queue=" + q);
    Map<String, Long> offsets = Map.of("sg-0", 0L, "sg-1", 1L, "sg-2", 2L, "sg-3", 3L, "sg-4", 4L);
    for (var e : offsets.entrySet()) {
      JsonObject seg = byTxn(msgs, e.getKey()).getJsonObject("segment");
      long base = e.getValue() < 3 ? 0 : 3;
      assertThat(seg.getLong("seq")).as("seq of %s", e.getKey()).isEqualTo(base);
      assertThat(seg.getLong("frameIdx")).as("frameIdx of %s", e.getKey()).isEqualTo(e.getValue() - base);
      assertThat(byTxn(msgs, e.getKey()).getValue("data")).isEqualTo(e.getValue().intValue());
    }
  }

  // ---- filters and paging ----------------------------------------------------------------------------------------

  @Test
  void queuePartitionAndStatusFiltersNarrowTheListing() {
    String q = Wire.queue("list-filter");
    String other = Wire.queue("list-filter-other");
    Wire.pushOne(node, q, "p1", 1, "f-p1");
    Wire.pushOne(node, q, "p2", 2, "f-p2");
    Wire.pushOne(node, other, "p1", 3, "f-other");
    assertThat(messagesOf("queue=" + q)).extracting(m -> m.getString("transactionId"))
        .containsExactlyInAnyOrder("f-p1", "f-p2");
    assertThat(messagesOf("queue=" + q + "&partition=p1")).extracting(m -> m.getString("transactionId"))
        .containsExactly("f-p1");
    // complete p2's message in queue mode
    JsonObject p = Wire.popSome(node, NONE, q, "p2", null);
    Wire.ack(node, NONE, new JsonObject().put("transactionId", "f-p2").put("partitionId", p.getString("partitionId"))
        .put("leaseId", p.getString("leaseId")).put("status", "completed"));
    assertThat(messagesOf("queue=" + q + "&status=completed")).extracting(m -> m.getString("transactionId"))
        .containsExactly("f-p2");
    assertThat(messagesOf("queue=" + q + "&status=pending")).extracting(m -> m.getString("transactionId"))
        .containsExactly("f-p1");
  }

  @Test
  void limitAndOffsetPageTheNewestFirstListing() {
    String q = Wire.queue("list-paging");
    List<JsonObject> items = new ArrayList<>();
    for (int i = 0; i < 5; i++) items.add(item(q, null, i, "pg-" + i));
    Wire.pushAll(node, NONE, items);
    assertThat(messagesOf("queue=" + q)).extracting(m -> m.getString("transactionId"))
        .as("created_at DESC, offset DESC").containsExactly("pg-4", "pg-3", "pg-2", "pg-1", "pg-0");
    assertThat(messagesOf("queue=" + q + "&limit=2")).extracting(m -> m.getString("transactionId"))
        .containsExactly("pg-4", "pg-3");
    assertThat(messagesOf("queue=" + q + "&limit=2&offset=2")).extracting(m -> m.getString("transactionId"))
        .containsExactly("pg-2", "pg-1");
    assertThat(messagesOf("queue=" + q + "&limit=2&offset=4")).as("a short page ends the listing")
        .extracting(m -> m.getString("transactionId")).containsExactly("pg-0");
    assertThat(messagesOf("queue=" + q + "&limit=2&offset=6")).isEmpty();
  }

  @Test
  void theDefaultLimitIs200() {
    String q = Wire.queue("list-default-limit");
    List<JsonObject> items = new ArrayList<>();
    for (int i = 0; i < 205; i++) items.add(item(q, null, i, "dl-" + i));
    Wire.pushAll(node, NONE, items);
    JsonObject body = listingOk("queue=" + q);
    assertThat(body.getJsonArray("messages")).hasSize(200);
    assertThat(body.getInteger("total")).isEqualTo(200);
  }

  @Test
  void cursorPagingReturnsEveryRowExactlyOnceWhileNewMessagesArrive() {
    String q = Wire.queue("list-cursor");
    List<String> originals = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      Wire.pushOne(node, q, null, i, "cu-" + i);
      originals.add("cu-" + i);
    }
    List<String> seen = new ArrayList<>();
    String cursor = null;
    int pages = 0;
    while (pages++ < 20) {
      JsonObject body = listingOk("queue=" + q + "&limit=5" + (cursor == null ? "" : "&cursor=" + enc(cursor)));
      List<JsonObject> page = list(body.getJsonArray("messages"));
      page.forEach(m -> seen.add(m.getString("transactionId")));
      if (pages == 1) {
        assertThat(body.containsKey("nextCursor")).as("a full page announces nextCursor: %s", body.encode()).isTrue();
      }
      // new messages land between pages: with offset paging they would shift rows onto the next page
      for (int k = 0; k < 3; k++) Wire.pushOne(node, q, null, 100 + k, "cu-new-" + pages + "-" + k);
      Object next = body.getValue("nextCursor");
      if (page.isEmpty() || next == null) break;
      cursor = next.toString();
    }
    Map<String, Integer> counts = new HashMap<>();
    seen.forEach(t -> counts.merge(t, 1, Integer::sum));
    assertThat(counts.entrySet()).as("no row is returned twice: %s", seen).allMatch(e -> e.getValue() == 1);
    assertThat(seen).as("every original row is returned: %s", seen).containsAll(originals);
    List<String> orderedOriginals = seen.stream().filter(originals::contains).toList();
    List<String> newestFirst = new ArrayList<>(originals);
    java.util.Collections.reverse(newestFirst);
    assertThat(orderedOriginals).as("newest first across pages").isEqualTo(newestFirst);
  }

  private static String enc(String s) {
    return java.net.URLEncoder.encode(s, java.nio.charset.StandardCharsets.UTF_8);
  }

  // ---- segments gone, decode count --------------------------------------------------------------------------------

  @Test
  void aMessageWhosePayloadRetentionTookStaysListedWithoutItsPayload() {
    String q = Wire.queue("list-seg-gone");
    Wire.pushAll(node, NONE, List.of(item(q, null, new JsonObject().put("x", 1), "gone-1"),
        item(q, null, new JsonObject().put("x", 2), "gone-2")));
    String pid = Wire.partitionId(q, "Default");
    Wire.slimBelow(pid, Long.MAX_VALUE);
    List<JsonObject> msgs = messagesOf("queue=" + q);
    assertThat(msgs).as("the hashes survive on the slim rows, so the frames stay listed").hasSize(2);
    for (JsonObject m : msgs) {
      assertThat(m.getBoolean("payloadAvailable")).as("%s", m.encode()).isFalse();
      assertThat(m.getValue("id")).as("%s", m.encode()).isNull();
      assertThat(m.getValue("transactionId")).as("%s", m.encode()).isNull();
      assertThat(m.getValue("data")).as("%s", m.encode()).isNull();
      assertThat(m.getValue("payload")).as("%s", m.encode()).isNull();
      assertThat(m.getString("partitionId")).isEqualTo(pid);
      assertThat(m.getString("txnHash")).hasSize(32);
    }
  }

  @Test
  void aFrameWhoseTxnsRowWasPurgedLeavesTheListingButIsStillConsumable() {
    String q = Wire.queue("list-txns-purged");
    Wire.pushOne(node, q, null, 0, "tp-old");
    String pid = Wire.pushToDefault(node, q, 1, "tp-new");
    Wire.purgeHashesBelow(pid, 1);
    assertThat(messagesOf("queue=" + q)).extracting(m -> m.getString("transactionId")).containsExactly("tp-new");
    assertThat(Wire.list(Wire.popSome(node, NONE, q, null, null).getJsonArray("messages")))
        .extracting(m -> m.getString("transactionId")).containsExactly("tp-old", "tp-new");
  }

  @Test
  void aPageOfAHundredMessagesInsideOneSegmentDecodesThatSegmentExactlyOnce() {
    String q = Wire.queue("list-one-decode");
    List<JsonObject> items = new ArrayList<>();
    for (int i = 0; i < 100; i++) items.add(item(q, null, new JsonObject().put("i", i), "od-" + i));
    Wire.pushAll(node, NONE, items);
    String pid = Wire.partitionId(q, "Default");
    assertThat(Wire.segments(pid)).as("precondition: one push request, one segment").isEqualTo(1);
    long before = node.node().segmentCache().decodes();
    List<JsonObject> msgs = messagesOf("queue=" + q + "&limit=100");
    long after = node.node().segmentCache().decodes();
    assertThat(msgs).hasSize(100);
    assertThat(msgs).allMatch(m -> m.getBoolean("payloadAvailable"));
    for (int i = 0; i < 100; i++) {
      assertThat(byTxn(msgs, "od-" + i).getValue("data")).isEqualTo(new JsonObject().put("i", i));
    }
    assertThat(after - before).as("segment decodes for one page inside one segment").isEqualTo(1);
  }
}
