package io.queenvertx.log;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.TestDatabase;
import io.queenvertx.testing.TestNode;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * A spool file holding an event the database refuses, among good events of two clients: every good event lands and
 * only the refused one is set aside into {@code failed/}, with its reason. A whole file an older version moved to
 * {@code failed/} is replayed too.
 */
class SpoolReplayIT {
  static final String TENANT = "00000000-0000-0000-0000-000000000001";

  static Spool.Event event(String queue, String partition, String txn, String client) {
    return new Spool.Event(TENANT, queue, partition, txn, client, false,
        new JsonObject().put("txn", txn).encode().getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void aRefusedEventIsSetAsideAloneAndEveryGoodEventOfItsFileLands() throws Exception {
    String id = UUID.randomUUID().toString().substring(0, 8);
    String qa = "spool-a-" + id;
    String qb = "spool-b-" + id;
    String qc = "spool-c-" + id;
    Path spool = Files.createTempDirectory("queen-spool-reject");
    List<Spool.Event> file = new ArrayList<>();
    Set<String> good = new HashSet<>();
    for (int i = 0; i < 6; i++) {
      // two clients, two queues, interleaved, with the bad event in the middle of them
      file.add(event(qa, "Default", "a-" + i, "client-a"));
      good.add(qa + "/a-" + i);
      if (i == 3) file.add(event("x".repeat(300) + id, "Default", "bad-long-queue", "client-a"));
      file.add(event(qb, "p-" + (i % 2), "b-" + i, "client-b"));
      good.add(qb + "/b-" + i);
    }
    Spool.write(spool.resolve("queen-0000000000001-00000000.buf"), file);
    // what an older version left in failed/: a whole file, a refused event (NUL in a partition name) among good ones
    Files.createDirectories(spool.resolve("failed"));
    List<Spool.Event> old = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      old.add(event(qc, "Default", "c-" + i, i % 2 == 0 ? "client-a" : "client-b"));
      good.add(qc + "/c-" + i);
    }
    old.add(2, event(qc, "nul\u0000part", "bad-nul-partition", "client-b"));
    Spool.write(spool.resolve("failed").resolve("queen-0000000000000-00000007.buf"), old);

    try (var node = TestNode.start(Map.of("FILE_BUFFER_DIR", spool.toString(), "FILE_BUFFER_FLUSH_MS", "50"),
        TestDatabase.get().shared())) {
      Set<String> popped = new HashSet<>();
      Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() -> {
        for (String q : List.of(qa, qb, qc)) {
          var r = node.get("/api/v1/pop/queue/" + q + "?batch=100&partitions=10&autoAck=true");
          if (r.status() != 200) continue;
          for (Object m : r.json().getJsonArray("messages")) {
            popped.add(q + "/" + ((JsonObject) m).getString("transactionId"));
          }
        }
        return popped.containsAll(good);
      });
      assertThat(popped).isEqualTo(good);
      Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> spoolFiles(spool).isEmpty());

      List<Path> rejected = rejected(spool);
      assertThat(rejected).hasSize(2);
      List<JsonObject> records = new ArrayList<>();
      for (Path p : rejected) records.add(new JsonObject(Files.readString(p)));
      assertThat(records).extracting(r -> r.getString("transactionId"))
          .containsExactlyInAnyOrder("bad-long-queue", "bad-nul-partition");
      for (JsonObject r : records) assertThat(r.getString("reason")).startsWith("SQLSTATE 22");
      try (Stream<Path> s = Files.list(spool.resolve("failed"))) {
        assertThat(s.filter(p -> p.toString().endsWith(".buf")).toList()).isEmpty();
      }
      String metrics = node.get("/metrics/prometheus").body();
      assertThat(metrics).contains("queen_file_buffer_failed 2.0").contains("queen_file_buffer_pending 0.0")
          .contains("queen_file_buffer_db_healthy 1.0");
    }
  }

  /** Spool files (sealed or active) left in the spool folder. */
  static List<Path> spoolFiles(Path spool) throws Exception {
    try (Stream<Path> s = Files.list(spool)) {
      return s.filter(p -> p.toString().endsWith(".buf") || p.toString().endsWith(".tmp")).toList();
    }
  }

  static List<Path> rejected(Path spool) throws Exception {
    if (!Files.isDirectory(spool.resolve("failed"))) return List.of();
    try (Stream<Path> s = Files.list(spool.resolve("failed"))) {
      return s.filter(p -> p.toString().endsWith(".rejected.json")).toList();
    }
  }
}
