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
 *
 * <p>A wait for the other kind is bounded: calls of one kind held for {@link #BOUND_MS} or more by the other kind's
 * statement (one stuck on a row lock, say, until {@code statement_timeout}) go anyway, alongside it, as they would
 * without turns. One timer at a time checks for that, armed only while a kind is held.
 */
final class FusionTurns implements Shareable {
  /** The longest a small pop or an ack waits for the other kind's turn before it goes anyway. */
  static final long BOUND_MS = 20;

  private final Vertx vertx;
  private final long boundMs;
  private long popsHeldSince;
  private long acksHeldSince;
  private boolean popsRescued;
  private boolean acksRescued;
  private boolean timerArmed;
  private int popsOut;
  private int acksOut;
  private int popsWaiting;
  private int acksWaiting;
  private boolean popTurn;
  private boolean ackTurn;
  private long popsRefused;
  private Runnable pumpPops = () -> {};
  private Runnable pumpAcks = () -> {};

  static FusionTurns of(Vertx vertx, Pool pool) {
    LocalMap<String, FusionTurns> map = vertx.sharedData().getLocalMap("queen.fusion-turns");
    return map.computeIfAbsent("pool-" + System.identityHashCode(pool), k -> new FusionTurns(vertx, BOUND_MS));
  }

  /** {@code vertx} null: no bound (the unit test drives the turns by hand). */
  FusionTurns(Vertx vertx, long boundMs) {
    this.vertx = vertx;
    this.boundMs = boundMs;
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
    if (!popsRescued && (acksOut > 0 || (acksWaiting > 0 && !popTurn))) {
      popsRefused++;
      if (popsHeldSince == 0) popsHeldSince = System.nanoTime();
      arm();
      return false;
    }
    popsOut++;
    popsWaiting -= calls;
    if (popsWaiting == 0) popsHeldSince = 0;
    return true;
  }

  /** Whether an ack statement may go now; when it may, it is counted out with its {@code calls}. */
  synchronized boolean startAcks(int calls) {
    if (!acksRescued && (popsOut > 0 || (popsWaiting > 0 && !ackTurn))) {
      if (acksHeldSince == 0) acksHeldSince = System.nanoTime();
      arm();
      return false;
    }
    ackTurn = false;
    acksOut++;
    acksWaiting -= calls;
    if (acksWaiting == 0) acksHeldSince = 0;
    return true;
  }

  /** How many times a small-pop statement was held back for the acks' turn (a running total). */
  synchronized long popsRefused() {
    return popsRefused;
  }

  /** Arms the check of held calls, unless one is armed. */
  private void arm() {
    if (vertx == null || timerArmed) return;
    timerArmed = true;
    vertx.setTimer(boundMs, t -> check());
  }

  /** Lets go the calls of a kind held for the bound or more, alongside the other kind's statement. */
  void check() {
    boolean pops;
    boolean acks;
    synchronized (this) {
      timerArmed = false;
      long now = System.nanoTime();
      long bound = boundMs * 1_000_000L;
      pops = popsHeldSince != 0 && now - popsHeldSince >= bound;
      acks = acksHeldSince != 0 && now - acksHeldSince >= bound;
      popsRescued = pops;
      acksRescued = acks;
    }
    try {
      if (pops) pumpPops.run();
      if (acks) pumpAcks.run();
    } finally {
      synchronized (this) {
        popsRescued = false;
        acksRescued = false;
        if (pops) popsHeldSince = 0;
        if (acks) acksHeldSince = 0;
        if (popsHeldSince != 0 || acksHeldSince != 0) arm();
      }
    }
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
      if (pops) {
        popTurn = true;
        popsHeldSince = 0; // released: a call refused again later is held from then
      } else {
        ackTurn = true;
        acksHeldSince = 0;
      }
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
