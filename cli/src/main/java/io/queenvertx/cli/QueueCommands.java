package io.queenvertx.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code qvctl queues list|describe|configure|delete}. */
@Command(name = "queues", description = "List, describe, configure and delete queues.",
    subcommands = {QueueCommands.ListQueues.class, QueueCommands.Describe.class, QueueCommands.Configure.class,
        QueueCommands.Delete.class})
final class QueueCommands {
  /** Partitions asked per page of a queue's detail (the broker's maximum). */
  static final int PARTITION_PAGE = 1000;

  @Command(name = "list", description = "Every queue with its partition count and message figures.")
  static final class ListQueues extends Cmd {
    @Override
    int run() {
      Object r = broker().getJson("/api/v1/resources/queues");
      return print(r, o -> o.table(List.of("queue", "namespace", "task", "partitions", "total", "pending",
          "processing"), Out.rows(Json.array(Json.get(r, "queues")), q -> {
            Object m = Json.get(q, "messages");
            return List.of(Json.string(q, "name"), str(Json.get(q, "namespace")), str(Json.get(q, "task")),
                Json.number(q, "partitions"), Json.number(m, "total"), Json.number(m, "pending"),
                Json.number(m, "processing"));
          })));
    }
  }

  @Command(name = "describe", description = "A queue's options, totals and partitions (every page of them).")
  static final class Describe extends Cmd {
    @Parameters(paramLabel = "QUEUE")
    String queue;

    @Option(names = "--page-size", hidden = true, defaultValue = "" + PARTITION_PAGE)
    int pageSize;

    @Override
    int run() {
      String path = "/api/v1/resources/queues/" + Broker.seg(queue);
      Map<String, Object> detail = null;
      List<Object> partitions = new ArrayList<>();
      String cursor = null;
      do {
        String p = path + Broker.query("limit", pageSize, "cursor", cursor);
        Broker.Answer a = Broker.check("GET", p, broker().get(p));
        Map<String, Object> page = Json.object(a.json());
        if (detail == null) detail = new LinkedHashMap<>(page);
        partitions.addAll(Json.array(page.get("partitions")));
        cursor = a.header("X-Next-Cursor");
      } while (cursor != null && !cursor.isEmpty());
      detail.put("partitions", partitions);
      Map<String, Object> d = detail;
      return print(detail, o -> {
        Map<String, Object> head = new LinkedHashMap<>();
        for (String k : List.of("name", "namespace", "task", "createdAt", "totals", "retainedBytes")) {
          if (d.containsKey(k)) head.put(k, d.get(k));
        }
        o.fields(head);
        o.text("");
        o.fields(Json.object(d.get("options")));
        o.text("");
        o.table(List.of("partition", "id", "total", "pending", "processing", "dead letters", "newest"),
            Out.rows(partitions, p -> {
              Object s = Json.get(p, "stats");
              return List.of(Json.string(p, "name"), Json.string(p, "id"), Json.number(s, "total"),
                  Json.number(s, "pending"), Json.number(s, "processing"), Json.number(s, "deadLetter"),
                  str(Json.get(p, "newestMessage")));
            }));
      });
    }
  }

  @Command(name = "configure", description = "Set queue options (creates the queue when missing).")
  static final class Configure extends Cmd {
    @Parameters(paramLabel = "QUEUE")
    String queue;

    @Option(names = "--set", paramLabel = "KEY=VALUE",
        description = "An option, e.g. retryLimit=5 (numbers, true/false and null are typed; repeatable)")
    Map<String, String> options = new LinkedHashMap<>();

    @Option(names = "--replace", description = "Reset every option not given to its default (mode replace)")
    boolean replace;

    @Option(names = "--namespace", description = "Namespace of the queue")
    String namespace;

    @Option(names = "--task", description = "Task of the queue")
    String task;

    @Override
    int run() {
      Map<String, Object> opts = new LinkedHashMap<>();
      options.forEach((k, v) -> opts.put(k, typed(v)));
      if (namespace != null) opts.put("namespace", namespace);
      if (task != null) opts.put("task", task);
      Map<String, Object> body = new LinkedHashMap<>();
      body.put("queue", queue);
      body.put("options", opts);
      if (replace) body.put("mode", "replace");
      Object r = broker().postJson("/api/v1/configure", body);
      return print(r, o -> o.fields(Json.object(Json.get(r, "options"))));
    }

    /** A --set value as JSON when it is a number, a boolean or null; otherwise the text. */
    static Object typed(String v) {
      if (v.equals("true") || v.equals("false") || v.equals("null") || v.matches("-?\\d+(\\.\\d+)?")) {
        return Json.parse(v);
      }
      return v;
    }
  }

  @Command(name = "delete", description = "Delete a queue with its partitions, messages and dead letters.")
  static final class Delete extends Cmd {
    @Parameters(paramLabel = "QUEUE")
    String queue;

    @Option(names = "--yes", description = "Confirm the deletion")
    boolean yes;

    @Override
    int run() {
      if (!yes) throw needsYes("deleting queue " + queue + " deletes its messages and dead letters");
      Object r = broker().deleteJson("/api/v1/resources/queues/" + Broker.seg(queue));
      boolean existed = !Boolean.FALSE.equals(Json.get(r, "existed"));
      print(r, o -> o.text(existed ? "deleted queue " + queue : "queue " + queue + " did not exist"));
      return existed ? Exit.OK : Exit.NOT_FOUND;
    }
  }

  static String str(Object v) {
    return v == null || "".equals(v) ? "-" : v.toString();
  }

  private QueueCommands() {}
}
