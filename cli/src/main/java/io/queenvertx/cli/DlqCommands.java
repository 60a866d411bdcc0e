package io.queenvertx.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code qvctl dlq list|replay|purge}: the dead letters. Bulk moves are {@code qvctl redrive}. */
@Command(name = "dlq", description = "List, replay and purge dead letters.",
    subcommands = {DlqCommands.ListDlq.class, DlqCommands.Replay.class, DlqCommands.Purge.class})
final class DlqCommands {
  private DlqCommands() {}

  @Command(name = "list", description = "Dead letters, newest first (filters; --all follows every page).")
  static final class ListDlq extends Cmd {
    @Option(names = {"-q", "--queue"})
    String queue;

    @Option(names = {"-g", "--group"}, description = "Consumer group")
    String group;

    @Option(names = {"-p", "--partition"})
    String partition;

    @Option(names = "--error", paramLabel = "TEXT", description = "Error text contains TEXT (any case)")
    String error;

    @Option(names = "--since", paramLabel = "ISO-8601", description = "Failed at or after")
    String since;

    @Option(names = "--until", paramLabel = "ISO-8601", description = "Failed before")
    String until;

    @Option(names = {"-n", "--limit"}, defaultValue = "100", description = "Rows per page (default ${DEFAULT-VALUE})")
    int limit;

    @Option(names = "--all", description = "Every page, not only the first")
    boolean all;

    @Override
    int run() {
      List<Object> rows = new ArrayList<>();
      Object first = null;
      String cursor = null;
      do {
        Object page = broker().getJson("/api/v1/dlq" + Broker.query("queue", queue, "consumerGroup", group,
            "partition", partition, "error", error, "from", since, "to", until, "limit", limit, "cursor", cursor));
        if (first == null) first = page;
        rows.addAll(Json.array(Json.get(page, "messages")));
        cursor = Json.string(page, "nextCursor");
      } while (all && cursor != null && !cursor.isEmpty());
      Out o = out();
      if (o.json()) {
        if (!all) {
          o.json(first);
        } else {
          Map<String, Object> m = new LinkedHashMap<>();
          m.put("messages", rows);
          m.put("total", rows.size());
          o.json(m);
        }
        return Exit.OK;
      }
      o.table(List.of("id", "queue", "partition", "group", "failed at", "retries", "error", "transaction id"),
          Out.rows(rows, r -> List.of(Json.string(r, "id"), Json.string(r, "queue"), Json.string(r, "partition"),
              Json.string(r, "consumerGroup"), Json.string(r, "failedAt"), Json.number(r, "retryCount"),
              QueueCommands.str(Json.get(r, "errorMessage")), Json.string(r, "transactionId"))));
      if (!all && cursor != null && !cursor.isEmpty()) note("more dead letters: add --all");
      return Exit.OK;
    }
  }

  @Command(name = "replay", description = "Move dead letters back into their queue (or --to-queue), by id.")
  static final class Replay extends Cmd {
    @Parameters(paramLabel = "ID", arity = "1..*")
    List<String> ids;

    @Option(names = "--to-queue", paramLabel = "QUEUE", description = "Replay into this queue instead")
    String toQueue;

    @Option(names = "--to-partition", paramLabel = "PARTITION", description = "Replay into this partition instead")
    String toPartition;

    @Override
    int run() {
      Map<String, Object> body = new LinkedHashMap<>();
      if (toQueue != null) body.put("queue", toQueue);
      if (toPartition != null) body.put("partition", toPartition);
      List<Object> results = new ArrayList<>();
      int gone = 0;
      for (String id : ids) {
        String path = "/api/v1/dlq/" + Broker.seg(id) + "/replay";
        Broker.Answer a = broker().post(path, body);
        if (a.status() == 404) {
          gone++;
          Map<String, Object> r = new LinkedHashMap<>();
          r.put("dlqId", id);
          r.put("result", "gone");
          results.add(r);
          continue;
        }
        results.add(Broker.check("POST", path, a).json());
      }
      print(results, o -> o.table(List.of("id", "result", "queue", "partition"), Out.rows(results,
          r -> List.of(Json.string(r, "dlqId"), Json.string(r, "result"), QueueCommands.str(Json.get(r, "queue")),
              QueueCommands.str(Json.get(r, "partition"))))));
      return gone == 0 ? Exit.OK : gone == ids.size() ? Exit.NOT_FOUND : Exit.PARTIAL;
    }
  }

  @Command(name = "purge", description = "Delete every dead letter of a queue (or of one group of it).")
  static final class Purge extends Cmd {
    @Option(names = {"-q", "--queue"}, required = true)
    String queue;

    @Option(names = {"-g", "--group"}, description = "Only this consumer group's")
    String group;

    @Option(names = "--yes", description = "Confirm the purge")
    boolean yes;

    @Override
    int run() {
      if (!yes) throw needsYes("purging the dead letters of " + queue + " cannot be undone");
      Object r = broker().deleteJson("/api/v1/dlq" + Broker.query("queue", queue, "consumerGroup", group));
      return print(r, o -> o.text("purged " + Json.number(r, "deleted") + " dead letters of " + queue));
    }
  }
}
