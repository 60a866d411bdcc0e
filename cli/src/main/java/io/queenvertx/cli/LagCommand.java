package io.queenvertx.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code qvctl lag}: each consumer group's lag per queue and partition, most lagging first. */
@Command(name = "lag", description = "Consumer-group lag per queue and partition (messages and seconds).")
final class LagCommand extends Cmd {
  @Option(names = {"-q", "--queue"}, description = "Only this queue")
  String queue;

  @Option(names = {"-g", "--group"}, description = "Only this group")
  String group;

  @Option(names = "--min", paramLabel = "N", defaultValue = "0", description = "Rows with at least N messages of lag")
  long min;

  @Option(names = "--page-size", hidden = true, defaultValue = "" + GroupCommands.PAGE)
  int pageSize;

  @Override
  int run() {
    List<Map<String, Object>> rows = new ArrayList<>();
    for (Object g : GroupCommands.all(broker(), pageSize)) {
      String name = Json.string(g, "name");
      if (group != null && !group.equals(name)) continue;
      for (var q : Json.object(Json.get(g, "queues")).entrySet()) {
        if (queue != null && !queue.equals(q.getKey())) continue;
        for (Object p : Json.array(Json.get(q.getValue(), "partitions"))) {
          if (Json.number(p, "lag") < min) continue;
          Map<String, Object> row = new LinkedHashMap<>();
          row.put("group", name);
          row.put("queue", q.getKey());
          row.put("partition", Json.get(p, "partition"));
          row.put("lag", Json.number(p, "lag"));
          row.put("timeLag", Json.number(p, "timeLag"));
          row.put("leaseExpiresAt", Json.get(p, "leaseExpiresAt"));
          rows.add(row);
        }
      }
    }
    rows.sort((a, b) -> Long.compare((long) b.get("lag"), (long) a.get("lag")));
    return print(rows, o -> o.table(List.of("group", "queue", "partition", "lag", "time lag (s)", "lease until"),
        Out.rows(rows, r -> List.of(r.get("group"), r.get("queue"), QueueCommands.str(r.get("partition")),
            r.get("lag"), r.get("timeLag"), QueueCommands.str(r.get("leaseExpiresAt"))))));
  }
}
