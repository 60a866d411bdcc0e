package io.queenvertx.kernel;

import java.util.UUID;

/**
 * The two names the wire, the Java code and the SQL share (Queen's, they cannot change): written once on the Java side,
 * here. The SQL functions spell them in their own tier (docs/ARCHITECTURE.md, "One name per concept").
 */
public final class Defaults {
  /** The consumer group of queue mode: a pop or ack that names no {@code consumerGroup}. */
  public static final String QUEUE_MODE_GROUP = "__QUEUE_MODE__";
  /** The tenant of a request that names none (tenancy off, or no {@code x-queen-tenant} header). */
  public static final UUID DEFAULT_TENANT = UUID.fromString("00000000-0000-0000-0000-000000000001");

  private Defaults() {}
}
