package io.queenvertx.db;

import io.vertx.core.Vertx;
import io.vertx.core.shareddata.LocalMap;
import io.vertx.core.shareddata.Shareable;
import io.vertx.sqlclient.Pool;

/**
 * Small pops ({@link PopFusion#SMALL_BATCH}) and acks take turns at the database: a small-pop statement is never in
 * flight while an ack statement is, and the other way round. Each kind then gathers what arrives during the other's
 * turn into its next statement, so a workload that pops and acks one message at a time sends fewer, fuller
 * statements (fewer round trips and commits per message) instead of two half-empty streams side by side. A kind whose
 * calls wait gets the next turn: when the last small-pop statement returns, the waiting acks go; when an ack
 * statement returns, every waiting small pop goes. With nothing of the other kind out or waiting, a call goes at once.
 * Large pops never wait here. One per pool, like the fusions; its lock is taken inside theirs, never the reverse.
 */
final class FusionTurns implements Shareable {
  private int popsOut;
  private int acksOut;
  private int popsWaiting;
  private int acksWaiting;
  private boolean popTurn;
  private boolean ackTurn;
  private Runnable pumpPops = () -> {};
  private Runnable pumpAcks = () -> {};

  static FusionTurns of(Vertx vertx, Pool pool) {
    LocalMap<String, FusionTurns> map = vertx.sharedData().getLocalMap("queen.fusion-turns");
    return map.computeIfAbsent("pool-" + System.identityHashCode(pool), k -> new FusionTurns());
  }

  synchronized void onPopTurn(Runnable pump) {
    this.pumpPops = pump;
  }

  synchronized void onAckTurn(Runnable pump) {
    this.pumpAcks = pump;
  }

  synchronized void popQueued() {
    popsWaiting++;
  }

  synchronized void ackQueued() {
    acksWaiting++;
  }

  /** Whether a small-pop statement may go now; when it may, it is counted out with its {@code calls}. */
  synchronized boolean startPops(int calls) {
    if (acksOut > 0 || (acksWaiting > 0 && !popTurn)) return false;
    popsOut++;
    popsWaiting -= calls;
    return true;
  }

  /** Whether an ack statement may go now; when it may, it is counted out with its {@code calls}. */
  synchronized boolean startAcks(int calls) {
    if (popsOut > 0 || (popsWaiting > 0 && !ackTurn)) return false;
    ackTurn = false;
    acksOut++;
    acksWaiting -= calls;
    return true;
  }

  /** A small-pop statement returned: the last one out hands the turn to the waiting acks. */
  void popsDone() {
    synchronized (this) {
      popsOut--;
      if (popsOut > 0 || acksWaiting == 0) return;
    }
    if (!turn(false)) turn(true); // no ack went after all (none to send): the small pops waiting behind them go
  }

  /** An ack statement returned: the waiting small pops get the turn, all of them at once. */
  void acksDone() {
    synchronized (this) {
      acksOut--;
      if (acksOut > 0 || popsWaiting == 0) return;
    }
    if (!turn(true)) turn(false); // no small pop went after all: the acks waiting behind them go
  }

  /** Gives the turn to small pops or to acks and pumps them; whether a statement of that kind is out after. */
  private boolean turn(boolean pops) {
    Runnable pump;
    synchronized (this) {
      if (pops) popTurn = true;
      else ackTurn = true;
      pump = pops ? pumpPops : pumpAcks;
    }
    try {
      pump.run();
    } finally {
      synchronized (this) {
        popTurn = false;
        ackTurn = false;
      }
    }
    synchronized (this) {
      return pops ? popsOut > 0 : acksOut > 0;
    }
  }
}
