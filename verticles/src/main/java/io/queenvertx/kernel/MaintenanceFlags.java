package io.queenvertx.kernel;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The node's view of the two cluster-wide switches (ENGINE.md §9.4): push maintenance (pushes spool, DLQ moves are
 * refused) and pop maintenance (every pop is a 204). The source of truth is {@code queen.system_state}.
 */
public final class MaintenanceFlags {
  private final AtomicBoolean push = new AtomicBoolean();
  private final AtomicBoolean pop = new AtomicBoolean();

  public boolean pushMaintenance() {
    return push.get();
  }

  public boolean popMaintenance() {
    return pop.get();
  }

  public void setPush(boolean on) {
    push.set(on);
  }

  public void setPop(boolean on) {
    pop.set(on);
  }
}
