package io.queenvertx.consumer;

import static io.queenvertx.testing.Wire.ack;
import static io.queenvertx.testing.Wire.item;
import static io.queenvertx.testing.Wire.push;
import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.bus.Addresses;
import io.queenvertx.bus.PopCommand;
import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.Wire;
import io.vertx.core.Handler;
import io.vertx.core.eventbus.DeliveryContext;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * HTTP pops and acks reach the consumer of their own event loop directly ({@link ConsumerInbox}): over several
 * connections (so over every HTTP event loop) no pop or ack goes over the event bus, and every message is still
 * delivered once and acked; a caller on a thread without a consumer gets no direct path (it uses the bus).
 */
class ConsumerInboxIT {
  @NodeFixture
  static TestNode node;

  private static final int CONNECTIONS = 8;
  private static final int PER_CONNECTION = 6;

  @Test
  void popsAndAcksOverEveryConnectionAreServedWithoutTheEventBus() throws Exception {
    String q = Wire.queue("inbox");
    List<JsonObject> items = new ArrayList<>();
    for (int i = 0; i < CONNECTIONS * PER_CONNECTION; i++) items.add(item(q, "p" + (i % 4), i, q + "-" + i));
    assertThat(push(node, items.toArray(JsonObject[]::new)).status()).isEqualTo(201);

    var bus = node.node().vertx().eventBus();
    AtomicInteger pops = new AtomicInteger();
    AtomicInteger acks = new AtomicInteger();
    Handler<DeliveryContext<Object>> counter = dc -> {
      if (Addresses.POP.equals(dc.message().address())) pops.incrementAndGet();
      if (Addresses.ACK.equals(dc.message().address())) acks.incrementAndGet();
      dc.next();
    };
    bus.addOutboundInterceptor(counter);
    Set<String> seen = new HashSet<>();
    try {
      for (int c = 0; c < CONNECTIONS; c++) {
        // a client of its own: a new connection, accepted by the next HTTP verticle instance
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
        for (int i = 0; i < PER_CONNECTION; i++) {
          JsonObject pop = new JsonObject(send(client, HttpRequest.newBuilder(
              URI.create(node.baseUrl() + "/api/v1/pop/queue/" + q + "?batch=1")).GET(), 200));
          var msgs = Wire.messages(pop);
          assertThat(msgs).hasSize(1);
          String txn = msgs.get(0).getString("transactionId");
          assertThat(seen.add(txn)).as("delivered once: %s", txn).isTrue();
          var verdicts = new io.vertx.core.json.JsonArray(send(client, HttpRequest.newBuilder(
                  URI.create(node.baseUrl() + "/api/v1/ack"))
              .header("Content-Type", "application/json")
              .POST(HttpRequest.BodyPublishers.ofString(
                  ack(txn, pop.getString("partitionId"), "completed", pop.getString("leaseId")).encode())), 200));
          assertThat(verdicts).hasSize(1);
          assertThat(verdicts.getJsonObject(0).getBoolean("success")).as("ack of %s: %s", txn, verdicts).isTrue();
        }
      }
    } finally {
      bus.removeOutboundInterceptor(counter);
    }
    assertThat(seen).hasSize(CONNECTIONS * PER_CONNECTION);
    assertThat(pops.get()).as("pops sent over the event bus").isZero();
    assertThat(acks.get()).as("acks sent over the event bus").isZero();
    assertThat(node.get("/api/v1/pop/queue/" + q + "?batch=10").status()).as("nothing left").isEqualTo(204);
  }

  @Test
  void aThreadWithoutAConsumerHasNoDirectPath() throws Exception {
    var vertx = node.node().vertx();
    var cmd = new PopCommand(UUID.fromString("00000000-0000-0000-0000-000000000001"), Wire.queue("inbox-none"),
        null, null, null, "__QUEUE_MODE__", 1, 1, false, false, 0, 60, "all", null);
    Object onWorker = vertx.executeBlocking(() -> ConsumerInbox.pop(cmd) == null)
        .toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertThat(onWorker).as("no direct path from a worker thread").isEqualTo(Boolean.TRUE);
    assertThat(ConsumerInbox.pop(cmd)).as("no direct path outside Vert.x").isNull();
  }

  private static String send(HttpClient client, HttpRequest.Builder b, int status) throws Exception {
    HttpResponse<String> r = client.send(b.timeout(Duration.ofSeconds(20)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as("%s: %s", r.uri(), r.body()).isEqualTo(status);
    return r.body();
  }
}
