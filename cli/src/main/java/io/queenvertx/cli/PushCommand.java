package io.queenvertx.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code qvctl push QUEUE [MESSAGE...]}: each argument is a message; without one, the lines of {@code --file} (or of
 * standard input) are, one message per non-empty line. A message that parses as JSON is sent as that JSON value,
 * anything else as a string ({@code --raw}: always a string). Sent in batches of {@code --batch-size} items.
 */
@Command(name = "push", description = "Push messages: from arguments, a file or standard input (one per line).")
final class PushCommand extends Cmd {
  @Parameters(index = "0", paramLabel = "QUEUE")
  String queue;

  @Parameters(index = "1..*", paramLabel = "MESSAGE", description = "Messages (JSON, else text)")
  List<String> messages = new ArrayList<>();

  @Option(names = {"-f", "--file"}, paramLabel = "FILE", description = "Read messages from FILE, one per line ('-': "
      + "standard input)")
  String file;

  @Option(names = {"-p", "--partition"}, description = "Partition (default: the broker's Default)")
  String partition;

  @Option(names = "--transaction-id", paramLabel = "ID", description = "Transaction id (one message only)")
  String transactionId;

  @Option(names = "--raw", description = "Send every message as a string, even when it is JSON")
  boolean raw;

  @Option(names = "--batch-size", defaultValue = "1000", description = "Items per request (default ${DEFAULT-VALUE})")
  int batchSize;

  private final List<Object> results = new ArrayList<>();
  private final Map<String, Integer> counts = new LinkedHashMap<>();

  @Override
  int run() throws IOException {
    if (batchSize < 1) throw new Exit.Failure(Exit.USAGE, "--batch-size must be at least 1");
    if (!messages.isEmpty() && file != null) {
      throw new Exit.Failure(Exit.USAGE, "give messages as arguments or with --file, not both");
    }
    List<Object> batch = new ArrayList<>();
    int sent = 0;
    if (!messages.isEmpty()) {
      for (String m : messages) batch.add(payload(m));
    } else {
      InputStream src = file == null || file.equals("-") ? root().in : Files.newInputStream(Path.of(file));
      try (var r = new BufferedReader(new InputStreamReader(src, StandardCharsets.UTF_8))) {
        for (String line = r.readLine(); line != null; line = r.readLine()) {
          if (line.isBlank()) continue;
          batch.add(payload(line));
          if (transactionId != null && sent + batch.size() > 1) break;
          if (batch.size() == batchSize) {
            sent += send(batch);
            batch.clear();
          }
        }
      }
    }
    if (transactionId != null && sent + batch.size() > 1) {
      throw new Exit.Failure(Exit.USAGE, "--transaction-id names one message, and there are more");
    }
    for (int i = 0; i < batch.size(); i += batchSize) {
      sent += send(batch.subList(i, Math.min(batch.size(), i + batchSize)));
    }
    if (sent == 0) throw new Exit.Failure(Exit.USAGE, "nothing to push: no message given");
    Out o = out();
    if (o.json()) {
      o.json(results);
    } else {
      StringBuilder b = new StringBuilder("pushed " + sent + " to " + queue + ":");
      counts.forEach((status, n) -> b.append(' ').append(status).append(' ').append(n));
      o.text(b.toString());
    }
    return counts.containsKey("failed") ? Exit.PARTIAL : Exit.OK;
  }

  private Object payload(String text) {
    if (raw) return text;
    boolean[] ok = {false};
    Object v = Json.tryParse(text, ok);
    return ok[0] ? v : text;
  }

  /** One push request; every item's result kept for the output. */
  private int send(List<Object> payloads) {
    List<Object> items = new ArrayList<>();
    for (Object p : payloads) {
      Map<String, Object> it = new LinkedHashMap<>();
      it.put("queue", queue);
      if (partition != null) it.put("partition", partition);
      if (transactionId != null) it.put("transactionId", transactionId);
      it.put("payload", p);
      items.add(it);
    }
    Object r = broker().postJson("/api/v1/push", Map.of("items", items));
    for (Object res : Json.array(r)) {
      results.add(res);
      counts.merge(String.valueOf(Json.get(res, "status")), 1, Integer::sum);
    }
    return items.size();
  }
}
