package io.queenvertx.kernel;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The node's view of the two cluster-wide switches (ENGINE.md §9.4): push maintenance (pushes spool, DLQ moves are
 * refused) and pop maintenance (every pop is a 204). The source of truth is {@code queen.system_state}.
 *
 * <p>A change (this node's write, another node's announcement) is applied at once; a read of the table (boot, the
 * periodic reconcile) is applied only if no change was applied while it ran ({@link #applyRead}): a read that started
 * before an operator's switch and answered after it would otherwise put the old value back until the next reconcile.
 */
public final class MaintenanceFlags {
  private final AtomicBoolean push = new AtomicBoolean();
  private final AtomicBoolean pop = new AtomicBoolean();
  private long changes;

  public boolean pushMaintenance() {
    return push.get();
  }

  public boolean popMaintenance() {
    return pop.get();
  }

  public synchronized void setPush(boolean on) {
    push.set(on);
    changes++;
  }

  public synchronized void setPop(boolean on) {
    pop.set(on);
    changes++;
  }

  /** How many changes were applied so far: taken before a read of the table, handed to {@link #applyRead}. */
  public synchronized long changes() {
    return changes;
  }

  /**
   * Applies what a read of the table found (null: that switch was not read), unless a change was applied since
   * {@code seenChanges} (then the read may predate it, and it is dropped); whether it was applied.
   */
  public synchronized boolean applyRead(long seenChanges, Boolean pushOn, Boolean popOn) {
    if (changes != seenChanges) return false;
    if (pushOn != null) push.set(pushOn);
    if (popOn != null) pop.set(popOn);
    return true;
  }
}
