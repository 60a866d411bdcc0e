package io.queenvertx.cli;

import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code qvctl ack PARTITION_ID TRANSACTION_ID}: completes (or fails, retries, dead-letters) a popped message. */
@Command(name = "ack", description = "Acknowledge a popped message (exit 7 when the broker did not take the ack).")
final class AckCommand extends Cmd {
  @Parameters(index = "0", paramLabel = "PARTITION_ID")
  String partitionId;

  @Parameters(index = "1", paramLabel = "TRANSACTION_ID")
  String transactionId;

  @Option(names = {"-l", "--lease"}, paramLabel = "LEASE_ID", description = "The pop's leaseId (checked when given)")
  String lease;

  @Option(names = {"-g", "--group"}, description = "Consumer group (default: queue mode)")
  String group;

  @Option(names = "--status", defaultValue = "completed",
      description = "completed, failed, retry or dlq (default ${DEFAULT-VALUE})")
  String status;

  @Option(names = "--error", description = "Error text (stored with a dead letter)")
  String error;

  @Override
  int run() {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("transactionId", transactionId);
    body.put("partitionId", partitionId);
    body.put("status", status);
    if (lease != null) body.put("leaseId", lease);
    if (group != null) body.put("consumerGroup", group);
    if (error != null) body.put("error", error);
    Object r = broker().postJson("/api/v1/ack", body);
    Object item = Json.array(r).isEmpty() ? null : Json.array(r).get(0);
    boolean ok = Boolean.TRUE.equals(Json.get(item, "success"));
    Out o = out();
    boolean dlq = Boolean.TRUE.equals(Json.get(item, "dlq"));
    if (o.json()) o.json(r);
    else if (ok) o.text(status + " " + transactionId + (dlq ? " (dead-lettered)" : ""));
    if (!ok) note("qvctl: ack of " + transactionId + " not taken: " + Json.string(item, "error"));
    return ok ? Exit.OK : Exit.PARTIAL;
  }
}
