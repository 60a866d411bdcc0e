package io.queenvertx.cli;

import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code qvctl peek QUEUE}: the queue's messages as the inspection listing shows them, without a lease. */
@Command(name = "peek", description = "Show a queue's messages without consuming them (no lease).")
final class PeekCommand extends Cmd {
  @Parameters(paramLabel = "QUEUE")
  String queue;

  @Option(names = {"-p", "--partition"}, description = "Only this partition")
  String partition;

  @Option(names = "--status", description = "pending, processing, completed or dead_letter")
  String status;

  @Option(names = {"-n", "--limit"}, defaultValue = "20", description = "Messages at most (default ${DEFAULT-VALUE})")
  int limit;

  @Override
  int run() {
    Object r = broker().getJson("/api/v1/messages" + Broker.query("queue", queue, "partition", partition,
        "status", status, "limit", limit));
    return print(r, o -> o.table(List.of("transaction id", "partition", "status", "created", "data"),
        Out.rows(Json.array(Json.get(r, "messages")), m -> List.of(Json.string(m, "transactionId"),
            Json.string(m, "partition"), Json.string(m, "status"), Json.string(m, "createdAt"),
            Json.get(m, "data") == null ? "null" : Json.get(m, "data")))));
  }
}
