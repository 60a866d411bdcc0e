package io.queenvertx.state;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Key-value writes racing over real HTTP (docs/design/queen2-contract.md §2.3): no increment is lost, a compare-and-set
 * loop converges, and of many {@code putIfAbsent} callers exactly one applies.
 */
class KvConcurrencyIT {
  @NodeFixture
  static TestNode node;

  static CompletableFuture<JsonObject> kvAsync(JsonObject op) {
    String body = new JsonObject().put("operations", new JsonArray().add(op)).encode();
    var req = HttpRequest.newBuilder(URI.create(node.baseUrl() + "/api/v1/kv"))
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build();
    return TestNode.HTTP.sendAsync(req, HttpResponse.BodyHandlers.ofString()).thenApply(r -> {
      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      return new JsonObject(r.body()).getJsonArray("results").getJsonObject(0);
    });
  }

  static JsonObject kv(JsonObject op) {
    return kvAsync(op).orTimeout(60, TimeUnit.SECONDS).join();
  }

  @Test
  void concurrentIncrementsAreNeverLost() {
    String ns = "c" + Wire.shortId().toLowerCase();
    int n = 200;
    List<CompletableFuture<JsonObject>> all = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      all.add(kvAsync(new JsonObject().put("op", "incr").put("ns", ns).put("key", "hits").put("delta", 1)
          .put("forever", true)));
    }
    Set<Integer> seen = new TreeSet<>();
    for (var f : all) {
      JsonObject r = f.orTimeout(90, TimeUnit.SECONDS).join();
      assertThat(r.getBoolean("applied")).as(r.encode()).isTrue();
      seen.add(r.getInteger("value"));
    }
    // every increment saw its own count: 1..n, each once
    assertThat(seen).hasSize(n).first().isEqualTo(1);
    assertThat(seen).last().isEqualTo(n);
    assertThat(kv(new JsonObject().put("op", "get").put("ns", ns).put("key", "hits")).getInteger("value")).isEqualTo(n);
  }

  @Test
  void aCompareAndSetLoopConvergesAndOnePutIfAbsentWins() throws Exception {
    String ns = "c" + Wire.shortId().toLowerCase();
    kv(new JsonObject().put("op", "put").put("ns", ns).put("key", "n").put("value", 0).put("forever", true));
    int workers = 8;
    int each = 10;
    ExecutorService pool = Executors.newFixedThreadPool(workers);
    try {
      List<Future<Integer>> lost = new ArrayList<>();
      for (int w = 0; w < workers; w++) {
        lost.add(pool.submit(() -> {
          int conflicts = 0;
          for (int done = 0; done < each; ) {
            JsonObject cur = kv(new JsonObject().put("op", "get").put("ns", ns).put("key", "n"));
            JsonObject put = kv(new JsonObject().put("op", "put").put("ns", ns).put("key", "n").put("forever", true)
                .put("value", cur.getInteger("value") + 1).put("expect", cur.getLong("version")));
            if (put.getBoolean("applied")) done++;
            else conflicts++;
          }
          return conflicts;
        }));
      }
      for (var f : lost) f.get(120, TimeUnit.SECONDS);
      assertThat(kv(new JsonObject().put("op", "get").put("ns", ns).put("key", "n")).getInteger("value"))
          .isEqualTo(workers * each);

      List<CompletableFuture<JsonObject>> racers = new ArrayList<>();
      for (int i = 0; i < 30; i++) {
        racers.add(kvAsync(new JsonObject().put("op", "putIfAbsent").put("ns", ns).put("key", "once").put("value", i)
            .put("forever", true)));
      }
      int applied = 0;
      for (var f : racers) if (f.orTimeout(90, TimeUnit.SECONDS).join().getBoolean("applied")) applied++;
      assertThat(applied).isEqualTo(1);
    } finally {
      pool.shutdownNow();
    }
  }
}
