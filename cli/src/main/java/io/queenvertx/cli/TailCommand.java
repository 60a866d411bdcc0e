package io.queenvertx.cli;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code qvctl tail QUEUE}: follows a queue as a consumer group does, with long polls, printing each message as it
 * comes and acknowledging it, until {@code --count} messages or an interrupt. Without {@code --group} it reads as a
 * group of its own ({@code qvctl-tail-<random>}, deleted when the tail ends), so it takes nothing from the queue's
 * consumers. {@code --from} says where a group that never read a partition starts: {@code new} (the default: only
 * messages pushed from now on), {@code all} (the oldest retained), {@code now} or an ISO-8601 time. {@code --idle}
 * ends it once no message came for that long (a script's "read what is there").
 */
@Command(name = "tail", description = "Follow a queue's new messages as a consumer group would.")
final class TailCommand extends Cmd {
  @Parameters(paramLabel = "QUEUE")
  String queue;

  @Option(names = {"-g", "--group"}, description = "Consumer group (default: a group of its own, deleted at exit)")
  String group;

  @Option(names = "--from", defaultValue = "new", paramLabel = "new|all|now|ISO-8601",
      description = "Where the group starts on a partition it never read (default ${DEFAULT-VALUE})")
  String from;

  @Option(names = {"-p", "--partition"}, description = "Only this partition")
  String partition;

  @Option(names = {"-n", "--batch"}, defaultValue = "100", description = "Messages per pop at most")
  int batch;

  @Option(names = "--partitions", defaultValue = "16", description = "Partitions one pop may claim")
  int partitions;

  @Option(names = {"-c", "--count"}, description = "Stop after this many messages")
  Long count;

  @Option(names = "--poll", paramLabel = "MS", defaultValue = "20000",
      description = "Long-poll timeout of each pop (at most --idle)")
  long poll;

  @Option(names = "--no-ack", description = "Do not acknowledge (the messages redeliver when their lease ends)")
  boolean noAck;

  @Option(names = "--idle", paramLabel = "MS", description = "Stop once no message came for this long")
  Long idle;

  @Override
  int run() {
    if (batch < 1) throw new Exit.Failure(Exit.USAGE, "--batch must be at least 1");
    boolean own = group == null;
    String g = own ? "qvctl-tail-" + UUID.randomUUID().toString().substring(0, 8) : group;
    Thread cleanup = new Thread(() -> forget(g));
    if (own) Runtime.getRuntime().addShutdownHook(cleanup);
    Out o = out();
    long seen = 0;
    long wait = idle == null ? poll : Math.max(1, Math.min(poll, idle));
    long lastMessage = System.nanoTime();
    try {
      while (count == null || seen < count) {
        int want = count == null ? batch : (int) Math.min(batch, count - seen);
        String path = PopCommand.popPath(queue, partition)
            + PopCommand.query(g, want, true, wait, false, null, from) + "&partitions=" + partitions;
        Broker.Answer a = Broker.check("GET", path, broker().get(path, Duration.ofMillis(wait).plusSeconds(30)));
        if (a.status() == 204) {
          if (idle != null && System.nanoTime() - lastMessage >= idle * 1_000_000) break;
          continue;
        }
        lastMessage = System.nanoTime();
        List<Object> msgs = Json.array(Json.get(a.json(), "messages"));
        for (Object m : msgs) {
          if (o.json()) o.line(m);
          else o.text(Json.string(m, "createdAt") + "  " + Json.string(m, "partition") + "  "
              + Json.string(m, "transactionId") + "  " + Json.write(Json.get(m, "data")));
        }
        seen += msgs.size();
        if (!noAck && !msgs.isEmpty()) ack(g, msgs);
      }
    } finally {
      if (own) {
        forget(g);
        try {
          Runtime.getRuntime().removeShutdownHook(cleanup);
        } catch (IllegalStateException shuttingDown) {
          // the hook runs (or ran) anyway
        }
      }
    }
    return Exit.OK;
  }

  private void ack(String g, List<Object> msgs) {
    List<Object> acks = new ArrayList<>();
    for (Object m : msgs) {
      Map<String, Object> a = new LinkedHashMap<>();
      a.put("transactionId", Json.get(m, "transactionId"));
      a.put("partitionId", Json.get(m, "partitionId"));
      a.put("leaseId", Json.get(m, "leaseId"));
      a.put("status", "completed");
      acks.add(a);
    }
    Object r = broker().postJson("/api/v1/ack/batch", Map.of("consumerGroup", g, "acknowledgments", acks));
    for (Object res : Json.array(r)) {
      if (!Boolean.TRUE.equals(Json.get(res, "success"))) {
        note("qvctl: ack of " + Json.string(res, "transactionId") + " not taken: " + Json.string(res, "error"));
      }
    }
  }

  /** Deletes the tail's own group (best effort: a token without admin rights leaves it, and says so). */
  private void forget(String g) {
    try {
      Broker.Answer a = broker().delete("/api/v1/consumer-groups/" + Broker.seg(g));
      if (!a.ok()) note("qvctl: could not delete consumer group " + g + ": " + Broker.errorText(a));
    } catch (Exit.Failure e) {
      note("qvctl: could not delete consumer group " + g + ": " + e.getMessage());
    }
  }
}
