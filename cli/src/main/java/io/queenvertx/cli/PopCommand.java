package io.queenvertx.cli;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code qvctl pop QUEUE}: claims a lease over up to {@code --batch} messages (ack them with {@code qvctl ack}, or
 * {@code --auto-ack}); nothing to deliver prints nothing (JSON: {@code {"messages":[]}}) and exits 0.
 */
@Command(name = "pop", description = "Pop messages (a lease; ack them with 'qvctl ack', or --auto-ack).")
final class PopCommand extends Cmd {
  @Parameters(paramLabel = "QUEUE")
  String queue;

  @Option(names = {"-p", "--partition"}, description = "Only this partition")
  String partition;

  @Option(names = {"-g", "--group"}, description = "Consumer group (default: queue mode)")
  String group;

  @Option(names = {"-n", "--batch"}, defaultValue = "1", description = "Messages at most (default ${DEFAULT-VALUE})")
  int batch;

  @Option(names = "--wait", description = "Long poll until a message comes or --timeout passes")
  boolean wait;

  @Option(names = "--timeout", paramLabel = "MS", defaultValue = "30000", description = "Long-poll timeout (ms)")
  long timeout;

  @Option(names = "--auto-ack", description = "Consume at once (at most once)")
  boolean autoAck;

  @Option(names = "--lease-seconds", description = "Lease length (default: the queue's leaseTime)")
  Integer leaseSeconds;

  @Option(names = "--from", paramLabel = "new|all|now|ISO-8601",
      description = "Where a group that never read a partition starts")
  String from;

  @Override
  int run() {
    String path = popPath(queue, partition) + query(group, batch, wait, timeout, autoAck, leaseSeconds, from);
    Broker.Answer a = broker().get(path, Duration.ofMillis(timeout).plus(Broker.REQUEST_TIMEOUT));
    Broker.check("GET", path, a);
    Object body = a.status() == 204 ? Map.of("messages", List.of()) : a.json();
    Out o = out();
    if (o.json()) {
      o.json(body);
      return Exit.OK;
    }
    List<Object> msgs = Json.array(Json.get(body, "messages"));
    if (msgs.isEmpty()) {
      note("no message");
      return Exit.OK;
    }
    o.table(List.of("partition id", "transaction id", "partition", "attempt", "data"), rows(msgs));
    if (!autoAck) {
      note("lease " + Json.string(body, "leaseId") + ": ack with qvctl ack <partition id> <transaction id> --lease "
          + Json.string(body, "leaseId") + (group == null ? "" : " --group " + group));
    }
    return Exit.OK;
  }

  static List<List<Object>> rows(List<Object> msgs) {
    return Out.rows(msgs, m -> List.of(Json.string(m, "partitionId"), Json.string(m, "transactionId"),
        Json.string(m, "partition"), Json.get(m, "deliveryAttempt") == null ? "-" : Json.get(m, "deliveryAttempt"),
        Json.get(m, "data") == null ? "null" : Json.get(m, "data")));
  }

  static String popPath(String queue, String partition) {
    String p = "/api/v1/pop/queue/" + Broker.seg(queue);
    return partition == null ? p : p + "/partition/" + Broker.seg(partition);
  }

  /** The pop's query: the group's start (--from) only when asked. */
  static String query(String group, int batch, boolean wait, long timeout, boolean autoAck, Integer leaseSeconds,
      String from) {
    String mode = null;
    String since = null;
    if (from != null) {
      switch (from) {
        case "new" -> mode = "new";
        case "all", "beginning", "earliest" -> mode = "all";
        case "now" -> since = "now";
        default -> {
          if (!from.matches("\\d{4}-\\d{2}-\\d{2}T.*")) {
            throw new Exit.Failure(Exit.USAGE, "--from must be new, all, now or an ISO-8601 time, not " + from);
          }
          since = from;
        }
      }
    }
    return Broker.query("batch", batch, "wait", wait, "timeout", wait ? timeout : null,
        "autoAck", autoAck ? true : null, "consumerGroup", group, "leaseSeconds", leaseSeconds,
        "subscriptionMode", mode, "subscriptionFrom", since);
  }
}
