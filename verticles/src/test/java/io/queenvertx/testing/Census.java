package io.queenvertx.testing;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.awaitility.Awaitility;

/**
 * Everything one consumer pops from one queue of a node (in this JVM or not): pops (leased, every partition per
 * call) and acks each batch, recording the messages in delivery order and per transaction id the message ids
 * delivered. Two message ids for one transaction id are a duplicate stored; one message id delivered twice is a
 * redelivery. The consumer is a consumer group reading from the start of each partition, or the queue mode.
 */
public final class Census {
  static final int BATCH = 500;

  /** Transaction id to the distinct message ids delivered for it. */
  private final Map<String, Set<String>> delivered = new LinkedHashMap<>();
  private final List<JsonObject> messages = new ArrayList<>();
  private long redeliveries;
  private long ackFailures;

  private Census() {}

  /**
   * Pops and acks everything {@code group} (null: the queue mode) can read from {@code queue} until the queue answers
   * 204 three times in a row.
   */
  public static Census popAll(String baseUrl, String queue, String group, Duration atMost) {
    var census = new Census();
    AtomicInteger emptyInARow = new AtomicInteger();
    census.popWhile(baseUrl, queue, group, atMost, "queue " + queue + " popped empty", () -> {
      if (census.popOnce(baseUrl, queue, group)) emptyInARow.set(0);
      else emptyInARow.incrementAndGet();
      return emptyInARow.get() >= 3;
    });
    return census;
  }

  /** Pops and acks as {@link #popAll} until every one of {@code wanted} came back (e.g. a spool replays them). */
  public static Census popUntil(String baseUrl, String queue, String group, Set<String> wanted, Duration atMost) {
    var census = new Census();
    census.popWhile(baseUrl, queue, group, atMost, wanted.size() + " transaction ids popped from " + queue, () -> {
      census.popOnce(baseUrl, queue, group);
      return census.delivered.keySet().containsAll(wanted);
    });
    return census;
  }

  private void popWhile(String baseUrl, String queue, String group, Duration atMost, String what,
                        BooleanSupplier done) {
    Awaitility.await(what).atMost(atMost).pollInterval(Duration.ofMillis(100)).until(done::getAsBoolean);
  }

  /** One pop and its ack; false when the queue had nothing for the consumer (204). */
  private boolean popOnce(String baseUrl, String queue, String group) {
    String url = baseUrl + "/api/v1/pop/queue/" + queue + "?batch=" + BATCH + "&partitions=0&leaseSeconds=120"
        + (group == null ? "" : "&subscriptionMode=all&consumerGroup=" + group);
    var r = TestNode.exchange(HttpRequest.newBuilder(URI.create(url)).GET(), Map.of());
    if (r.status() == 204) return false;
    if (r.status() != 200) return true; // not an empty answer: try again
    JsonObject body = r.json();
    JsonArray msgs = body.getJsonArray("messages", new JsonArray());
    JsonArray acks = new JsonArray();
    for (int i = 0; i < msgs.size(); i++) {
      JsonObject m = msgs.getJsonObject(i);
      messages.add(m);
      String txn = m.getString("transactionId");
      if (!delivered.computeIfAbsent(txn, k -> new LinkedHashSet<>()).add(m.getString("id"))) redeliveries++;
      acks.add(new JsonObject().put("transactionId", txn).put("partitionId", m.getString("partitionId"))
          .put("leaseId", m.getString("leaseId", body.getString("leaseId"))).put("status", "completed"));
    }
    if (!acks.isEmpty()) ack(baseUrl, group, acks);
    return true;
  }

  /** Acks a batch; an item not acked would hold its partition's lease, so the batch is sent again (up to 3 times). */
  private void ack(String baseUrl, String group, JsonArray acks) {
    JsonObject body = new JsonObject().put("acknowledgments", acks);
    if (group != null) body.put("consumerGroup", group);
    for (int attempt = 0; attempt < 3; attempt++) {
      var r = TestNode.exchange(HttpRequest.newBuilder(URI.create(baseUrl + "/api/v1/ack/batch"))
          .header("content-type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body.encode())),
          Map.of());
      if (r.status() == 200 && allSucceeded(r.array())) return;
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
    return Collections.unmodifiableMap(delivered);
  }

  public boolean found(String txn) {
    return delivered.containsKey(txn);
  }

  /** The transaction ids delivered, in the order first delivered. */
  public Set<String> transactionIds() {
    return Collections.unmodifiableSet(delivered.keySet());
  }

  /** Every message delivered, in delivery order (a redelivery appears again). */
  public List<JsonObject> messages() {
    return Collections.unmodifiableList(messages);
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
