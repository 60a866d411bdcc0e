package io.queenvertx.bus;

/**
 * Every event-bus address of a node, in one place. Requests are served by {@code localConsumer}s on the node that
 * received them; only the announcements ({@link #LANDED}, {@link #QUEUE_CHANGED}, {@link #MAINTENANCE_CHANGED},
 * {@link #WEBHOOK_CHANGED}) are published cluster-wide, and the per-node spool status ({@link #NODE_BUFFERS_PREFIX}) is
 * the one request a peer sends across the cluster.
 */
public final class Addresses {
  private Addresses() {}

  /** log writer: a {@code PushCommand}, replied with a {@code List<PushOutcome>}. */
  public static final String PUSH = "queen.log.push";
  /** log writer: a {@code TransactionCommand}, replied with the transaction's JSON result. */
  public static final String TRANSACTION = "queen.log.transaction";
  /** log writer: spool statistics, replied with {@code {"bufferedMessages","bufferHealthy"}}. */
  public static final String SPOOL_STATS = "queen.log.spool.stats";
  /**
   * Published cluster-wide when a maintenance switch changes, one switch per message, keyed by its
   * {@code queen.system_state} key: {@code {"maintenance_mode":bool}} (push) or {@code {"pop_maintenance_mode":bool}}
   * (pop). Every node sets the flag named by the key it finds; the database row stays the source of truth, re-read
   * every {@code QUEEN_CACHE_REFRESH_INTERVAL_MS}.
   */
  public static final String MAINTENANCE_CHANGED = "queen.maintenance.changed";
  /** consumer: a {@code PopCommand}, replied with a {@code PopResult}. */
  public static final String POP = "queen.consumer.pop";
  /** consumer: an {@code AckCommand}, replied with the per-item JSON array. */
  public static final String ACK = "queen.consumer.ack";
  /** consumer: a {@code LeaseCommand}, replied with the renewal JSON. */
  public static final String LEASE = "queen.consumer.lease";
  /** Published cluster-wide when a webhook endpoint is created, updated or deleted: {@code {"id"}}. */
  public static final String WEBHOOK_CHANGED = "queen.webhook.changed";
  /** redrive runner: claim a waiting task now (sent after a task is created). */
  public static final String REDRIVE_NUDGE = "queen.dlq.redrive.nudge";
  /** segment decoder (worker): a {@code DecodeRequest}, replied with {@code DecodedFrames} (or
   * {@code DecodedFrames.GONE} when the segment no longer exists). */
  public static final String DECODE = "queen.decoder.decode";
  /** DLQ mover: a {@code DlqMoveCommand}, replied with the verdict. */
  public static final String DLQ_MOVE = "queen.dlq.move";
  /**
   * Prefix of the clustered per-node spool status address: {@code queen.node.<Vert.x cluster node id>.buffers}, answered
   * by every HTTP verticle of that node with its {@code status/buffers} entry. The only request address a peer node calls.
   */
  public static final String NODE_BUFFERS_PREFIX = "queen.node.";
  /** stats flusher: flush this node's counters now, replied with {@code {"flushedNodeRows":n,"flushedQueueRows":m}}. */
  public static final String STATS_FLUSH = "queen.stats.flush";

  /**
   * Published cluster-wide when a (tenant, queue) may have something new to deliver. After every commit that adds
   * frames: {@code {"tenant","queue","partition","partitionId","lastOffset"}} (transaction, DLQ move), plus
   * {@code "partitions"} from the log writer (push and spool replay: one message per queue of a bundle, naming its
   * first partition and counting the queue's partitions the bundle wrote). After a consumer-group seek, which moves
   * cursors back: {@code {"tenant","queue","cursorMoved":true}}. Every node's consumer reads only {@code tenant} and
   * {@code queue} and wakes the long polls parked on that (tenant, queue) and the tenant's discovery polls.
   */
  public static final String LANDED = "queen.landed";
  /** Published cluster-wide when a queue is configured or deleted: {@code {"tenant","queue","partitionIds"?}}. */
  public static final String QUEUE_CHANGED = "queen.queue.changed";
}
