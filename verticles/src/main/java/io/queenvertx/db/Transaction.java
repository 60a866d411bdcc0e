package io.queenvertx.db;

import io.vertx.sqlclient.SqlConnection;

/**
 * The procedure facades bound to one open transaction ({@link Database#transaction}): what they call commits or rolls
 * back together.
 */
public final class Transaction {
  private final PushProcedures pushes;
  private final AckProcedures acks;
  private final DlqProcedures dlq;
  private final SegmentProcedures segments;
  private final KvProcedures kv;
  private final TimerProcedures timers;

  Transaction(SqlConnection conn) {
    this.pushes = new PushProcedures(conn);
    this.acks = new AckProcedures(conn);
    this.dlq = new DlqProcedures(conn, conn);
    this.segments = new SegmentProcedures(conn);
    this.kv = new KvProcedures(conn);
    this.timers = new TimerProcedures(conn);
  }

  public PushProcedures pushes() {
    return pushes;
  }

  public AckProcedures acks() {
    return acks;
  }

  public DlqProcedures dlq() {
    return dlq;
  }

  /** The key-value rider: {@code kv_apply} inside the bundle's transaction. */
  public KvProcedures kv() {
    return kv;
  }

  public SegmentProcedures segments() {
    return segments;
  }

  /** The timer procedures on this transaction (the {@code timers} rider, the fire's claim, push and delete). */
  public TimerProcedures timers() {
    return timers;
  }
}
