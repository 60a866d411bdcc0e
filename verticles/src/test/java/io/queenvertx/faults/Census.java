package io.queenvertx.faults;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;

/**
 * Everything a consumer group can pop from one queue: pops (leased, every partition per call) and acks each batch
 * until the queue answers 204 three times in a row, recording per transaction id the message ids delivered.
 * Two message ids for one transaction id are a duplicate stored; one message id delivered twice is a redelivery.
 */
public final class Census {
  static final int BATCH = 500;
  private static final Duration CALL = Duration.ofSeconds(30);

  /** Transaction id to the distinct message ids delivered for it. */
  private final Map<String, Set<String>> delivered = new HashMap<>();
  private long redeliveries;
  private long ackFailures;

  private Census() {}

  /** Pops and acks everything {@code group} can read from {@code queue}, from the start of each partition. */
  public static Census popAll(String baseUrl, String queue, String group, Duration atMost) {
    var census = new Census();
    String pop = baseUrl + "/api/v1/pop/queue/" + queue + "?batch=" + BATCH + "&partitions=0&leaseSeconds=120"
        + "&subscriptionMode=all&consumerGroup=" + group;
    AtomicInteger emptyInARow = new AtomicInteger();
    Awaitility.await("queue " + queue + " popped empty").atMost(atMost).pollInterval(Duration.ofMillis(100))
        .until(() -> {
          if (census.popOnce(pop, baseUrl, group)) emptyInARow.set(0);
          else emptyInARow.incrementAndGet();
          return emptyInARow.get() >= 3;
        });
    return census;
  }

  /** One pop and its ack; false when the queue had nothing for the group (204). */
  private boolean popOnce(String popUrl, String baseUrl, String group) throws Exception {
    var r = FaultBroker.Http.get(popUrl, CALL);
    if (r.statusCode() == 204) return false;
    if (r.statusCode() != 200) return true; // not an empty answer: try again
    JsonObject body = new JsonObject(r.body());
    JsonArray msgs = body.getJsonArray("messages", new JsonArray());
    JsonArray acks = new JsonArray();
    for (int i = 0; i < msgs.size(); i++) {
      JsonObject m = msgs.getJsonObject(i);
      String txn = m.getString("transactionId");
      if (!delivered.computeIfAbsent(txn, k -> new LinkedHashSet<>()).add(m.getString("id"))) redeliveries++;
      acks.add(new JsonObject().put("transactionId", txn).put("partitionId", m.getString("partitionId"))
          .put("leaseId", m.getString("leaseId", body.getString("leaseId"))).put("status", "completed"));
    }
    if (!acks.isEmpty()) ack(baseUrl, group, acks);
    return true;
  }

  /** Acks a batch; an item not acked would hold its partition's lease, so the batch is sent again (up to 3 times). */
  private void ack(String baseUrl, String group, JsonArray acks) throws Exception {
    String body = new JsonObject().put("consumerGroup", group).put("acknowledgments", acks).encode();
    for (int attempt = 0; attempt < 3; attempt++) {
      var r = FaultBroker.Http.post(baseUrl + "/api/v1/ack/batch", body, CALL);
      if (r.statusCode() == 200 && allSucceeded(new JsonArray(r.body()))) return;
      ackFailures++;
    }
  }

  private static boolean allSucceeded(JsonArray answers) {
    for (int i = 0; i < answers.size(); i++) {
      if (!answers.getJsonObject(i).getBoolean("success", false)) return false;
    }
    return true;
  }

  /** Transaction id to the distinct message ids delivered for it. */
  public Map<String, Set<String>> delivered() {
    return delivered;
  }

  public boolean found(String txn) {
    return delivered.containsKey(txn);
  }

  /** Message ids beyond the first per transaction id: copies stored twice. */
  public long duplicatesStored() {
    long n = 0;
    for (Set<String> ids : delivered.values()) n += ids.size() - 1;
    return n;
  }

  public long redeliveries() {
    return redeliveries;
  }

  public long ackFailures() {
    return ackFailures;
  }

  public int distinctTransactions() {
    return delivered.size();
  }
}
