package io.queenvertx.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/** qvctl's commands against a real node, in this JVM, their JSON output parsed back with Vert.x's parser. */
class QvctlIT {
  @NodeFixture
  static TestNode node;

  static Cli.Result qv(String... args) {
    return Cli.at(node.baseUrl(), args);
  }

  static Cli.Result ok(String... args) {
    Cli.Result r = qv(args);
    assertThat(r.code()).as("qvctl %s: %s", String.join(" ", args), r).isZero();
    return r;
  }

  @Test
  void queuesAreConfiguredListedDescribedPageByPageAndDeleted() {
    String q = Wire.queue("cli-q");
    var conf = ok("queues", "configure", q, "--set", "retryLimit=4", "--set", "leaseTime=90", "-o", "json");
    assertThat(conf.object().getJsonObject("options").getInteger("retryLimit")).isEqualTo(4);
    assertThat(conf.object().getJsonObject("options").getInteger("leaseTime")).isEqualTo(90);
    for (String p : List.of("a", "b", "c")) ok("push", q, "--partition", p, "{\"p\":\"" + p + "\"}");

    var list = ok("queues", "list", "-o", "json").object().getJsonArray("queues");
    JsonObject row = Wire.list(list).stream().filter(o -> q.equals(o.getString("name"))).findFirst().orElseThrow();
    assertThat(row.getInteger("partitions")).isEqualTo(3);
    // one partition per page: every page is followed (X-Next-Cursor)
    var detail = ok("queues", "describe", q, "--page-size", "1", "-o", "json").object();
    assertThat(Wire.list(detail.getJsonArray("partitions")).stream().map(p -> p.getString("name")))
        .containsExactly("a", "b", "c");
    assertThat(ok("queues", "describe", q).out()).contains("retryLimit:", "PARTITION", "a", "b", "c");

    assertThat(ok("queues", "delete", q, "--yes").out()).contains("deleted queue " + q);
    var again = qv("queues", "delete", q, "--yes");
    assertThat(again.code()).as(again.toString()).isEqualTo(3);
  }

  @Test
  void popPeekAndAck() {
    String q = Wire.queue("cli-pop");
    ok("push", q, "one", "two", "three");
    var peek = ok("peek", q, "-o", "json").object();
    assertThat(Wire.list(peek.getJsonArray("messages")).stream().map(m -> m.getString("status")))
        .containsOnly("pending").hasSize(3);

    var pop = ok("pop", q, "-n", "2", "-o", "json").object();
    List<JsonObject> msgs = Wire.messages(pop);
    assertThat(msgs.stream().map(m -> m.getValue("data"))).containsExactly("one", "two");
    String lease = pop.getString("leaseId");
    JsonObject second = msgs.get(1);
    var acked = ok("ack", second.getString("partitionId"), second.getString("transactionId"), "--lease", lease,
        "-o", "json");
    assertThat(acked.array().getJsonObject(0).getBoolean("success")).isTrue();

    var rest = ok("pop", q, "-n", "5", "--auto-ack", "-o", "json").object();
    assertThat(Wire.messages(rest).stream().map(m -> m.getValue("data"))).containsExactly("three");
    var staleLease = qv("ack", rest.getString("partitionId"), "stale", "--lease", Wire.ZERO_UUID);
    assertThat(staleLease.code()).as(staleLease.toString()).isEqualTo(7);
    assertThat(staleLease.err()).contains("not taken");

    var empty = ok("pop", q, "--auto-ack", "-o", "json").object();
    assertThat(empty.getJsonArray("messages")).isEmpty();
  }

  @Test
  void tailFollowsNewMessagesAsAGroupFromWhereItIsTold() throws Exception {
    String q = Wire.queue("cli-tail");
    Wire.pushQueued(node, q, null, "before", "t-before");
    String group = "tail-" + Wire.shortId();
    var tail = Cli.background(node.baseUrl(), "tail", q, "--group", group, "--count", "3", "--idle", "20000",
        "-o", "json");
    // the tail's first long poll is parked: its group starts at the partition's end ("new"), then three come
    Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> node.metric("queen_parked_long_polls") >= 1);
    var pushed = Cli.run("{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n", java.util.Map.of(), "push", q, "--url",
        node.baseUrl());
    assertThat(pushed.code()).as(pushed.toString()).isZero();
    Cli.Result r = tail.get(30, TimeUnit.SECONDS);
    assertThat(r.code()).as(r.toString()).isZero();
    assertThat(r.lines().stream().map(m -> m.getJsonObject("data").getInteger("n"))).containsExactly(1, 2, 3);
    // acknowledged: the group has no lag left
    var lag = ok("lag", "-q", q, "-g", group, "-o", "json").array();
    assertThat(Wire.list(lag).stream().mapToLong(x -> x.getLong("lag")).sum()).isZero();

    var fromStart = ok("tail", q, "--from", "all", "--idle", "3000", "-o", "json");
    assertThat(fromStart.lines().stream().map(m -> m.getValue("data").toString()))
        .containsExactly("before", "{\"n\":1}", "{\"n\":2}", "{\"n\":3}");
    // a tail without --group read as a group of its own, deleted when it ended
    var groups = ok("groups", "list", "-o", "json").array();
    assertThat(Wire.list(groups).stream().map(g -> g.getString("name"))).noneMatch(n -> n.startsWith("qvctl-tail-"))
        .contains(group);
  }

  @Test
  void deadLettersAreListedReplayedAndPurged() {
    String q = Wire.queue("cli-dlq");
    deadLetters(q, 3);
    var list = ok("dlq", "list", "-q", q, "-o", "json").object();
    List<String> ids = Wire.list(list.getJsonArray("messages")).stream().map(m -> m.getString("id")).toList();
    assertThat(ids).hasSize(3);
    var paged = ok("dlq", "list", "-q", q, "--limit", "1", "--all", "-o", "json").object();
    assertThat(paged.getJsonArray("messages")).hasSize(3);

    var replay = ok("dlq", "replay", ids.get(0), "-o", "json").array();
    assertThat(replay.getJsonObject(0).getString("result")).isEqualTo("moved");
    var gone = qv("dlq", "replay", ids.get(0));
    assertThat(gone.code()).as(gone.toString()).isEqualTo(3);
    var mixed = qv("dlq", "replay", ids.get(0), ids.get(1), "-o", "json");
    assertThat(mixed.code()).as(mixed.toString()).isEqualTo(7);
    assertThat(Wire.list(mixed.array()).stream().map(o -> o.getString("result"))).containsExactly("gone", "moved");
    // both replays landed back in the queue
    var back = ok("pop", q, "-n", "10", "--auto-ack", "-o", "json").object();
    assertThat(Wire.messages(back)).hasSize(2);

    assertThat(qv("dlq", "purge", "-q", q).code()).isEqualTo(2);
    var purged = ok("dlq", "purge", "-q", q, "--yes", "-o", "json").object();
    assertThat(purged.getInteger("deleted")).isEqualTo(1);
    assertThat(ok("dlq", "list", "-q", q, "-o", "json").object().getJsonArray("messages")).isEmpty();
  }

  @Test
  void aRedriveIsWatchedWithProgressToTheEnd() {
    String q = Wire.queue("cli-redrive");
    deadLetters(q, 40);
    var r = qv("redrive", "start", "-q", q, "--max-per-second", "20", "--watch", "--progress", "lines",
        "--interval", "200", "-o", "json");
    assertThat(r.code()).as(r.toString()).isZero();
    JsonObject task = r.object();
    assertThat(task.getString("status")).isEqualTo("completed");
    assertThat(task.getLong("moved")).isEqualTo(40L);

    List<Integer> percents = new ArrayList<>();
    Matcher m = Pattern.compile("\\] +(\\d+)%").matcher(r.err());
    while (m.find()) percents.add(Integer.parseInt(m.group(1)));
    assertThat(percents).as(r.err()).isSorted().contains(100).anyMatch(p -> p > 0 && p < 100);
    assertThat(r.err().lines().filter(l -> l.contains("%")).reduce((a, b) -> b).orElseThrow())
        .contains("100%", "40/40", "completed", "moved 40");
    assertThat(ok("dlq", "list", "-q", q, "-o", "json").object().getJsonArray("messages")).isEmpty();
  }

  @Test
  void aSecondRedriveConflictsAndACancelledOneEndsPartial() {
    String q = Wire.queue("cli-redrive-cancel");
    deadLetters(q, 20);
    JsonObject task = ok("redrive", "start", "-q", q, "--max-per-second", "1", "-o", "json").object();
    String id = task.getString("taskId");
    var twice = qv("redrive", "start", "-q", q);
    assertThat(twice.code()).as(twice.toString()).isEqualTo(6);
    assertThat(twice.err()).contains(id);

    assertThat(ok("redrive", "cancel", id, "-o", "json").object().getString("status")).isEqualTo("cancelled");
    var watched = qv("redrive", "watch", id, "--progress", "lines");
    assertThat(watched.code()).as(watched.toString()).isEqualTo(7);
    assertThat(watched.err()).contains("cancelled");
    assertThat(Wire.list(ok("redrive", "list", "-o", "json").object().getJsonArray("tasks")).stream()
        .map(t -> t.getString("taskId"))).contains(id);
  }

  @Test
  void groupsShowLagAndAreSoughtAndDeleted() {
    String q = Wire.queue("cli-groups");
    String g = "cli-g-" + Wire.shortId();
    String other = "cli-g-" + Wire.shortId();
    Wire.pushQueued(node, q, null, 1, null);
    assertThat(node.get(Wire.popPath(q, null, g, "autoAck=true")).status()).isEqualTo(200);
    assertThat(node.get(Wire.popPath(q, null, other, "autoAck=true")).status()).isEqualTo(200);
    ok("push", q, "2", "3");

    // one group per page: the listing follows X-Next-Cursor to the end
    var groups = ok("groups", "list", "--page-size", "1", "-o", "json").array();
    assertThat(Wire.list(groups).stream().map(x -> x.getString("name"))).contains(g, other);
    var lag = ok("lag", "-q", q, "-g", g, "-o", "json").array();
    assertThat(lag.getJsonObject(0).getLong("lag")).isEqualTo(2L);
    assertThat(ok("lag", "-q", q).out()).contains("LAG", g);

    ok("groups", "seek", g, q, "--to-end");
    assertThat(ok("lag", "-q", q, "-g", g, "-o", "json").array().getJsonObject(0).getLong("lag")).isZero();
    assertThat(qv("groups", "seek", g, q).code()).as("seek needs --to-end or --to").isEqualTo(2);

    assertThat(qv("groups", "delete", g).code()).isEqualTo(2);
    var deleted = ok("groups", "delete", g, "--yes", "-o", "json").object();
    assertThat(deleted.getBoolean("success")).isTrue();
    assertThat(Wire.list(ok("groups", "list", "-o", "json").array()).stream().map(x -> x.getString("name")))
        .doesNotContain(g);
  }

  @Test
  void statusShowsHealthAndNodes() {
    var s = ok("status", "-o", "json").object();
    assertThat(s.getJsonObject("health").getString("status")).isEqualTo("healthy");
    JsonArray nodes = s.getJsonArray("nodes");
    assertThat(nodes).hasSize(1);
    assertThat(nodes.getJsonObject(0).getString("httpUrl")).isEqualTo(node.baseUrl());
    assertThat(ok("status").out()).contains("status:", "healthy", "NODE");
  }

  /** {@code n} dead letters on queue {@code q}, through the API: pushed, popped and failed on a retryLimit-0 queue. */
  static void deadLetters(String q, int n) {
    Wire.retryLimitZero(node, Wire.NONE, q);
    List<JsonObject> items = new ArrayList<>();
    for (int i = 0; i < n; i++) items.add(Wire.item(q, null, new JsonObject().put("n", i), "dl-" + i));
    Wire.pushAll(node, Wire.NONE, items);
    JsonObject pop = Wire.popSome(node, q, "batch=" + n + "&wait=false");
    assertThat(Wire.messages(pop)).hasSize(n);
    JsonArray acks = new JsonArray();
    for (JsonObject m : Wire.messages(pop)) {
      acks.add(Wire.ack(m.getString("transactionId"), m.getString("partitionId"), "failed", pop.getString("leaseId"))
          .put("error", "cli test"));
    }
    var r = node.post("/api/v1/ack/batch", new JsonObject().put("acknowledgments", acks));
    assertThat(Wire.list(r.array()).stream().map(a -> a.getBoolean("dlq"))).as(r.body()).containsOnly(true);
  }
}
