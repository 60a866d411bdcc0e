package io.queenvertx.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code qvctl groups list|describe|seek|delete}: consumer groups. */
@Command(name = "groups", description = "List, describe, seek and delete consumer groups.",
    subcommands = {GroupCommands.ListGroups.class, GroupCommands.Describe.class, GroupCommands.Seek.class,
        GroupCommands.Delete.class})
final class GroupCommands {
  /** Groups asked per page (the broker's maximum). */
  static final int PAGE = 1000;

  private GroupCommands() {}

  /** Every group, page after page ({@code X-Next-Cursor}); a broker that does not page answers them all at once. */
  static List<Object> all(Broker b, int pageSize) {
    List<Object> groups = new ArrayList<>();
    String cursor = null;
    do {
      String p = "/api/v1/consumer-groups" + Broker.query("limit", pageSize, "cursor", cursor);
      Broker.Answer a = Broker.check("GET", p, b.get(p));
      groups.addAll(Json.array(a.json()));
      cursor = a.header("X-Next-Cursor");
    } while (cursor != null && !cursor.isEmpty());
    return groups;
  }

  @Command(name = "list", description = "Every consumer group with its queues, lag and state.")
  static final class ListGroups extends Cmd {
    @Option(names = "--page-size", hidden = true, defaultValue = "" + PAGE)
    int pageSize;

    @Override
    int run() {
      List<Object> groups = all(broker(), pageSize);
      return print(groups, o -> o.table(List.of("group", "queues", "members", "lag", "max time lag (s)", "state"),
          Out.rows(groups, g -> List.of(Json.string(g, "name"), String.join(",", Json.array(Json.get(g, "topics"))
                  .stream().map(String::valueOf).toList()), Json.number(g, "members"), Json.number(g, "totalLag"),
              Json.number(g, "maxTimeLag"), QueueCommands.str(Json.get(g, "state"))))));
    }
  }

  @Command(name = "describe", description = "A group's queues and partitions.")
  static final class Describe extends Cmd {
    @Parameters(paramLabel = "GROUP")
    String group;

    @Override
    int run() {
      Object r = broker().getJson("/api/v1/consumer-groups/" + Broker.seg(group));
      return print(r, o -> o.text(Json.pretty(r)));
    }
  }

  /** Where a seek goes: the end, or a time. */
  static final class Target {
    @Option(names = "--to-end", required = true, description = "Skip everything pushed so far")
    boolean toEnd;

    @Option(names = "--to", required = true, paramLabel = "ISO-8601",
        description = "Redeliver every message pushed at or after this time")
    String timestamp;
  }

  @Command(name = "seek", description = "Move a group's cursor on a queue (or one partition of it).")
  static final class Seek extends Cmd {
    @Parameters(index = "0", paramLabel = "GROUP")
    String group;

    @Parameters(index = "1", paramLabel = "QUEUE")
    String queue;

    @Option(names = {"-p", "--partition"}, description = "Only this partition")
    String partition;

    @ArgGroup(exclusive = true, multiplicity = "1")
    Target target;

    @Override
    int run() {
      String path = "/api/v1/consumer-groups/" + Broker.seg(group) + "/queues/" + Broker.seg(queue)
          + (partition == null ? "" : "/partitions/" + Broker.seg(partition)) + "/seek";
      Map<String, Object> body = new LinkedHashMap<>();
      if (target.toEnd) body.put("toEnd", true);
      else body.put("timestamp", target.timestamp);
      Object r = broker().postJson(path, body);
      return print(r, o -> o.fields(Json.object(r)));
    }
  }

  @Command(name = "delete", description = "Delete a group's cursors and leases (on every queue, or one).")
  static final class Delete extends Cmd {
    @Parameters(paramLabel = "GROUP")
    String group;

    @Option(names = {"-q", "--queue"}, description = "Only on this queue")
    String queue;

    @Option(names = "--keep-metadata", description = "Keep the group's subscription metadata")
    boolean keepMetadata;

    @Option(names = "--yes", description = "Confirm the deletion")
    boolean yes;

    @Override
    int run() {
      if (!yes) throw needsYes("deleting consumer group " + group + " makes it start over");
      String path = "/api/v1/consumer-groups/" + Broker.seg(group)
          + (queue == null ? "" : "/queues/" + Broker.seg(queue)) + Broker.query("deleteMetadata", !keepMetadata);
      Object r = broker().deleteJson(path);
      return print(r, o -> o.text("deleted consumer group " + group + (queue == null ? "" : " on " + queue) + ": "
          + Json.number(r, "deletedPartitions") + " partitions"));
    }
  }
}
