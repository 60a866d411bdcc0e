package io.queenvertx.metrics;

import static io.queenvertx.metrics.StatsCounters.*;

import io.queenvertx.bus.AckItem;
import io.queenvertx.bus.DecodedFrames;
import io.queenvertx.bus.PushOutcome;
import io.queenvertx.bus.TransactionCommand;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

/**
 * What the request path tells the statistics, one call per answered operation, where its verdict is known: in the
 * log writer (push, transaction) and the consumer (pop, ack, dead letter), so that HTTP and event-bus callers count
 * alike. One instance per node ({@code BrokerMetrics.stats}); the counting itself is {@link StatsCounters}.
 */
public final class OpStats {
  private final StatsCounters counters;
  private final List<ParkedSource> parked = new CopyOnWriteArrayList<>();

  /** A consumer instance's parked long polls by wake gate, read on its own context. */
  private record ParkedSource(Context context, Supplier<Map<String, Integer>> byGate) {}

  public OpStats() {
    this(new StatsCounters());
  }

  public OpStats(StatsCounters counters) {
    this.counters = counters;
  }

  public StatsCounters counters() {
    return counters;
  }

  /**
   * A push request answered: one request, and per queue named by its items one request, the messages stored or
   * spooled ({@code queued}, {@code buffered}) and the duplicates dropped ({@code conflated}); its latency.
   */
  public void push(UUID tenant, List<PushOutcome> out, long nanos) {
    counters.add(PUSH_REQUESTS, 1);
    counters.latency(PUSH_LATENCY, PUSH_LATENCY_MAX, nanos);
    long stored = 0;
    String lastQueue = null;
    List<String> seen = null;
    for (PushOutcome o : out) {
      if (!o.queue().equals(lastQueue)) {
        if (seen == null) seen = new ArrayList<>(2);
        if (!seen.contains(o.queue())) {
          seen.add(o.queue());
          counters.addQueue(tenant, o.queue(), Q_PUSH_REQUESTS, 1);
        }
        lastQueue = o.queue();
      }
      switch (o.status()) {
        case "queued", "buffered" -> {
          stored++;
          counters.addQueue(tenant, o.queue(), Q_PUSH_MESSAGES, 1);
        }
        case "duplicate" -> counters.addQueue(tenant, o.queue(), Q_CONFLATED, 1);
        default -> { }
      }
    }
    counters.add(PUSH_MESSAGES, stored);
  }

  /**
   * A pop answered: one request (on its queue when it named one), empty or not; the latency of a pop that delivered,
   * measured from its last claim attempt (a long poll's parked wait is left out).
   */
  public void pop(UUID tenant, String queue, boolean empty, long nanos) {
    counters.add(POP_REQUESTS, 1);
    counters.addQueue(tenant, queue, Q_POP_REQUESTS, 1);
    if (empty) {
      counters.add(POP_EMPTY, 1);
      counters.addQueue(tenant, queue, Q_POP_EMPTY, 1);
    } else {
      counters.latency(POP_LATENCY, POP_LATENCY_MAX, nanos);
    }
  }

  /**
   * The messages a pop claimed, slice by slice (a slice row carries {@code created_at}, and {@code queue_name} on a
   * discovery pop): counted per queue with their age when handed out.
   */
  public void popped(UUID tenant, String queue, List<Row> slices, List<DecodedFrames> decoded) {
    long total = 0;
    for (int i = 0; i < slices.size(); i++) {
      int n = decoded.get(i).frames().size();
      total += n;
      Row r = slices.get(i);
      String q = queue != null ? queue : r.getString("queue_name");
      counters.addQueue(tenant, q, Q_POP_MESSAGES, n);
      OffsetDateTime created = r.getOffsetDateTime("created_at");
      if (created != null) counters.popLag(tenant, q, n, created.toInstant().toEpochMilli());
    }
    counters.add(POP_MESSAGES, total);
  }

  /**
   * An ack request answered: one request and its latency; per item that succeeded, {@code ack_success} for status
   * completed and {@code ack_failed} for any other status (failed, retry, dlq). Rejected items count in neither.
   */
  public void ack(List<AckItem> items, JsonArray results, long nanos) {
    counters.add(ACK_REQUESTS, 1);
    counters.latency(ACK_LATENCY, ACK_LATENCY_MAX, nanos);
    for (int i = 0; i < items.size() && i < results.size(); i++) {
      if (!(results.getValue(i) instanceof JsonObject r) || !Boolean.TRUE.equals(r.getBoolean("success"))) continue;
      ackItem(items.get(i));
    }
  }

  private void ackItem(AckItem it) {
    boolean ok = "completed".equals(it.status());
    counters.add(ok ? ACK_SUCCESS : ACK_FAILED, 1);
    counters.addPartition(it.partitionId(), ok ? Q_ACK_SUCCESS : Q_ACK_FAILED, 1);
  }

  /** A message filed in the DLQ (any path: an ack's verdict, a transaction's ack). */
  public void deadLettered(UUID partitionId) {
    counters.add(DLQ, 1);
    counters.addPartition(partitionId.toString(), Q_DLQ, 1);
  }

  /** A failed PostgreSQL call of the request path. */
  public void dbError() {
    counters.dbError();
  }

  /**
   * Counts a transaction when it is answered, and returns the same future: one transaction node-wide and on each
   * queue it pushes to; when it committed, its pushed messages and its acks as well.
   */
  public Future<JsonObject> transaction(TransactionCommand cmd, Future<JsonObject> result) {
    return result.onComplete(ar -> {
      counters.add(TRANSACTIONS, 1);
      boolean committed = ar.succeeded() && Boolean.TRUE.equals(ar.result().getBoolean("success"));
      if (ar.failed()) counters.dbError();
      List<String> queues = new ArrayList<>(2);
      long pushed = 0;
      for (TransactionCommand.Op op : cmd.ops()) {
        if (op.push() != null) {
          String q = op.push().queue();
          if (!queues.contains(q)) {
            queues.add(q);
            counters.addQueue(cmd.tenant(), q, Q_TRANSACTIONS, 1);
          }
          if (committed) {
            pushed++;
            counters.addQueue(cmd.tenant(), q, Q_PUSH_MESSAGES, 1);
          }
        } else if (op.ack() != null && committed) {
          ackItem(op.ack());
        }
      }
      counters.add(PUSH_MESSAGES, pushed);
    });
  }

  /**
   * Registers a consumer instance's parked long polls: {@code byGate} maps its wake gates ({@code tenant U+001F
   * queue}) to the polls parked there and is called on {@code context} only.
   */
  public void parkedSource(Context context, Supplier<Map<String, Integer>> byGate) {
    parked.add(new ParkedSource(context, byGate));
  }

  /**
   * Long polls parked on this node per (tenant, queue), read on each consumer's own context (a consumer that does not
   * answer within two seconds is left out).
   */
  public Future<Map<UUID, Map<String, Integer>>> parkedByQueue() {
    List<Future<Map<String, Integer>>> reads = new ArrayList<>();
    for (ParkedSource s : parked) {
      Promise<Map<String, Integer>> p = Promise.promise();
      s.context().runOnContext(v -> p.complete(new HashMap<>(s.byGate().get())));
      // a consumer that stopped answering never holds a flush up
      reads.add(p.future().timeout(2, java.util.concurrent.TimeUnit.SECONDS));
    }
    return Future.join(reads).transform(x -> {
      Map<UUID, Map<String, Integer>> out = new HashMap<>();
      for (var f : reads) {
        if (f.failed()) continue;
        for (var e : f.result().entrySet()) {
          int cut = e.getKey().indexOf('\u001f');
          if (cut < 0) continue;
          String queue = e.getKey().substring(cut + 1);
          UUID tenant;
          try {
            tenant = UUID.fromString(e.getKey().substring(0, cut));
          } catch (IllegalArgumentException bad) {
            continue;
          }
          if ("*".equals(queue)) continue; // a discovery pop's gate names no queue
          out.computeIfAbsent(tenant, t -> new HashMap<>()).merge(queue, e.getValue(), Integer::sum);
        }
      }
      return Future.succeededFuture(out);
    });
  }
}
