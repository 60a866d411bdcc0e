package io.queenvertx.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;

/**
 * {@code qvctl status}: the node's {@code /health} and, where the broker has it ({@code /api/v1/system/nodes}, Admin on
 * queen-vertx), every cluster node. Exit 1 when the node answers unhealthy (its database is unreachable).
 */
@Command(name = "status", description = "Node health and the cluster's nodes (exit 1 when unhealthy).")
final class StatusCommand extends Cmd {
  @Override
  int run() {
    Broker.Answer h = broker().get("/health");
    if (h.status() != 200 && h.status() != 503) Broker.check("GET", "/health", h);
    Object health = h.json();
    Broker.Answer n = broker().get("/api/v1/system/nodes");
    Object nodes = n.ok() ? Json.get(n.json(), "nodes") : null;
    Out o = out();
    if (o.json()) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("health", health);
      m.put("nodes", nodes);
      o.json(m);
    } else {
      o.fields(Json.object(health));
      if (nodes != null) {
        o.text("");
        List<List<Object>> rows = new ArrayList<>();
        for (Object x : Json.array(nodes)) {
          boolean reachable = !Boolean.FALSE.equals(Json.get(x, "reachable"));
          rows.add(List.of(QueueCommands.str(Json.get(x, "serverId")), reachable ? "yes" : "no",
              QueueCommands.str(Json.get(x, "version")), QueueCommands.str(Json.get(x, "httpUrl")),
              QueueCommands.str(Json.get(x, "database")), QueueCommands.str(Json.get(x, "uptimeSeconds")),
              Boolean.TRUE.equals(Json.get(x, "maintenanceMode")) ? "push" : "-"));
        }
        o.table(List.of("node", "reachable", "version", "url", "database", "uptime (s)", "maintenance"), rows);
      } else {
        note("no node list: GET /api/v1/system/nodes answered " + n.status() + " (" + Broker.errorText(n) + ")");
      }
    }
    return h.status() == 200 ? Exit.OK : Exit.ERROR;
  }
}
