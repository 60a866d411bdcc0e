package io.queenvertx.cli;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code qvctl redrive start|watch|cancel|list|show}: bulk redrive tasks (queen-vertx's {@code /api/v1/dlq/redrive},
 * Admin). {@code start --watch} and {@code watch} poll the task until it ends, with a progress bar; their exit code is
 * 0 when it completed with no failed row, 7 when it was cancelled or some rows failed, 1 when it failed.
 */
@Command(name = "redrive", description = "Bulk redrive of dead letters: start, watch (progress bar), cancel, list.",
    subcommands = {RedriveCommands.Start.class, RedriveCommands.Watch.class, RedriveCommands.Cancel.class,
        RedriveCommands.ListTasks.class, RedriveCommands.Show.class})
final class RedriveCommands {
  static final String BASE = "/api/v1/dlq/redrive";

  private RedriveCommands() {}

  /** How a watch shows progress. */
  abstract static class Watching extends Cmd {
    @Option(names = "--progress", defaultValue = "auto", paramLabel = "auto|bar|lines|none",
        description = "Progress on standard error: a bar on a terminal, lines otherwise (auto)")
    String progress;

    @Option(names = "--interval", paramLabel = "MS", defaultValue = "500", description = "Poll period (ms)")
    long interval;

    /** Polls the task until it is no longer running; the exit code of how it ended. */
    int watch(String taskId, long expected) throws InterruptedException {
      String mode = progress.equals("auto") ? (root().errIsTerminal ? "bar" : "lines") : progress;
      if (!List.of("bar", "lines", "none").contains(mode)) {
        throw new Exit.Failure(Exit.USAGE, "--progress must be auto, bar, lines or none");
      }
      Progress bar = new Progress(root().err, mode, expected);
      Object task;
      while (true) {
        task = broker().getJson(BASE + "/" + Broker.seg(taskId));
        bar.update(task, System.currentTimeMillis());
        if (!"running".equals(Json.string(task, "status"))) break;
        Thread.sleep(Math.max(50, interval));
      }
      show(this, task);
      return ended(task);
    }
  }

  /** A task's fields, or its JSON. */
  static int show(Cmd c, Object task) {
    return c.print(task, o -> o.fields(Json.object(task)));
  }

  static int ended(Object task) {
    String s = Json.string(task, "status");
    if ("completed".equals(s)) return Json.number(task, "failed") == 0 ? Exit.OK : Exit.PARTIAL;
    if ("cancelled".equals(s)) return Exit.PARTIAL;
    return "running".equals(s) ? Exit.OK : Exit.ERROR;
  }

  /** The queue's dead-letter count (one status row), or 0 when the broker does not say. */
  static long deadLetters(Broker b, String queue) {
    Broker.Answer a = b.get("/api/v1/status/queues" + Broker.query("queue", queue, "limit", 1));
    if (!a.ok()) return 0;
    for (Object q : Json.array(Json.get(a.json(), "queues"))) {
      if (queue.equals(Json.string(q, "name"))) return Json.number(Json.get(q, "messages"), "deadLetter");
    }
    return 0;
  }

  @Command(name = "start", description = "Start moving a queue's dead letters back (or elsewhere).")
  static final class Start extends Watching {
    @Option(names = {"-q", "--queue"}, required = true)
    String queue;

    @Option(names = {"-g", "--group"}, description = "Only this consumer group's dead letters")
    String group;

    @Option(names = {"-p", "--partition"}, description = "Only this partition's dead letters")
    String partition;

    @Option(names = "--to-queue", paramLabel = "QUEUE", description = "Move into this queue")
    String toQueue;

    @Option(names = "--to-partition", paramLabel = "PARTITION", description = "Move into this partition")
    String toPartition;

    @Option(names = "--max-per-second", paramLabel = "N", description = "Pace (1..10000; default: no limit)")
    Integer maxPerSecond;

    @Option(names = "--limit", paramLabel = "N", description = "Move at most N dead letters")
    Long limit;

    @Option(names = {"-w", "--watch"}, description = "Watch the task until it ends")
    boolean watch;

    @Override
    int run() throws Exception {
      Map<String, Object> body = new LinkedHashMap<>();
      body.put("queue", queue);
      if (group != null) body.put("consumerGroup", group);
      if (partition != null) body.put("partition", partition);
      if (toQueue != null || toPartition != null) {
        Map<String, Object> d = new LinkedHashMap<>();
        if (toQueue != null) d.put("queue", toQueue);
        if (toPartition != null) d.put("partition", toPartition);
        body.put("destination", d);
      }
      if (maxPerSecond != null) body.put("maxPerSecond", maxPerSecond);
      if (limit != null) body.put("limit", limit);
      long expected = watch ? deadLetters(broker(), queue) : 0;
      if (limit != null && expected > limit) expected = limit;
      Broker.Answer a = broker().post(BASE, body);
      if (a.status() == 409) {
        throw new Exit.Failure(Exit.CONFLICT, "a redrive task is already running for " + queue + ": "
            + Json.string(a.json(), "taskId") + " (qvctl redrive watch " + Json.string(a.json(), "taskId") + ")");
      }
      Object task = Broker.check("POST", BASE, a).json();
      if (!watch) return show(this, task);
      note("redrive task " + Json.string(task, "taskId"));
      return watch(Json.string(task, "taskId"), expected);
    }
  }

  @Command(name = "watch", description = "Follow a redrive task until it ends, with a progress bar.")
  static final class Watch extends Watching {
    @Parameters(paramLabel = "TASK_ID")
    String taskId;

    @Override
    int run() throws Exception {
      Object task = broker().getJson(BASE + "/" + Broker.seg(taskId));
      long expected = 0;
      if ("running".equals(Json.string(task, "status"))) {
        expected = Progress.done(task) + deadLetters(broker(), Json.string(task, "queue"));
        long limit = Json.number(task, "limit");
        if (limit > 0 && expected > limit) expected = limit;
      }
      return watch(taskId, expected);
    }
  }

  @Command(name = "cancel", description = "Cancel a running redrive task (what it moved stays moved).")
  static final class Cancel extends Cmd {
    @Parameters(paramLabel = "TASK_ID")
    String taskId;

    @Override
    int run() {
      return show(this, broker().postJson(BASE + "/" + Broker.seg(taskId) + "/cancel", Map.of()));
    }
  }

  @Command(name = "show", description = "One redrive task.")
  static final class Show extends Cmd {
    @Parameters(paramLabel = "TASK_ID")
    String taskId;

    @Override
    int run() {
      return show(this, broker().getJson(BASE + "/" + Broker.seg(taskId)));
    }
  }

  @Command(name = "list", description = "Recent redrive tasks.")
  static final class ListTasks extends Cmd {
    @Override
    int run() {
      Object r = broker().getJson(BASE);
      return print(r, o -> o.table(List.of("task", "status", "queue", "moved", "duplicate", "gone", "failed",
          "created"), Out.rows(Json.array(Json.get(r, "tasks")), t -> List.of(Json.string(t, "taskId"),
              Json.string(t, "status"), Json.string(t, "queue"), Json.number(t, "moved"), Json.number(t, "duplicate"),
              Json.number(t, "gone"), Json.number(t, "failed"), QueueCommands.str(Json.get(t, "createdAt"))))));
    }
  }
}
