package io.queenvertx.db;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The turns of small pops and acks (FusionTurns), driven as PopFusion and AckFusion drive them. */
class FusionTurnsTest {
  /** A fusion of one kind: calls waiting, statements sent (each takes every call waiting), one out at a time. */
  private static final class Side {
    final boolean pops;
    final FusionTurns turns;
    int waiting;
    int out;
    final List<Integer> sent = new CopyOnWriteArrayList<>();

    Side(FusionTurns turns, boolean pops) {
      this.turns = turns;
      this.pops = pops;
      if (pops) turns.onPopTurn(this::pump);
      else turns.onAckTurn(this::pump);
    }

    synchronized void submit(int n) {
      for (int i = 0; i < n; i++) {
        waiting++;
        if (pops) turns.popQueued();
        else turns.ackQueued();
      }
      pump();
    }

    synchronized void pump() {
      if (out > 0 || waiting == 0) return;
      if (!(pops ? turns.startPops(waiting) : turns.startAcks(waiting))) return;
      sent.add(waiting);
      waiting = 0;
      out++;
    }

    synchronized void returns() {
      out--;
      if (pops) turns.popsDone();
      else turns.acksDone();
      pump();
    }
  }

  @Test
  void aKindGoesAtOnceWhenTheOtherIsNeitherOutNorWaiting() {
    FusionTurns turns = new FusionTurns(null, 0);
    Side pops = new Side(turns, true);
    Side acks = new Side(turns, false);
    pops.submit(1);
    assertThat(pops.sent).containsExactly(1);
    pops.returns();
    acks.submit(1);
    assertThat(acks.sent).containsExactly(1);
  }

  @Test
  void eachKindGathersWhatArrivesDuringTheOthersTurnAndNeitherIsOutWithTheOther() {
    FusionTurns turns = new FusionTurns(null, 0);
    Side pops = new Side(turns, true);
    Side acks = new Side(turns, false);
    pops.submit(1);                       // a pop goes alone
    acks.submit(3);                       // acks wait while it is out
    assertThat(acks.sent).isEmpty();
    pops.submit(2);                       // pops arriving now wait too: the acks waiting have the next turn
    pops.returns();                       // the pop returns: the three acks go in one statement
    assertThat(acks.sent).containsExactly(3);
    assertThat(pops.out).isZero();
    pops.submit(1);                       // a pop arriving while the ack statement is out waits
    assertThat(pops.sent).containsExactly(1);
    acks.submit(2);
    acks.returns();                       // the ack returns: the three waiting pops go at once, not the acks
    assertThat(pops.sent).containsExactly(1, 3);
    assertThat(acks.sent).containsExactly(3);
    pops.returns();                       // and then the two acks
    assertThat(acks.sent).containsExactly(3, 2);
    acks.returns();
    assertThat(pops.out + acks.out).isZero();
  }

  @Test
  void aTurnGivenToAKindWithNothingToSendPassesBack() {
    FusionTurns turns = new FusionTurns(null, 0);
    Side pops = new Side(turns, true);
    Side acks = new Side(turns, false);
    acks.submit(1);
    pops.submit(2);
    // the counts say pops wait, but their fusion has nothing to send (say its lane was dropped): on the ack's return
    // the turn goes to pops, none goes, and the acks waiting are not left behind
    pops.waiting = 0;
    acks.submit(1);
    acks.returns();
    assertThat(acks.sent).containsExactly(1, 1);
  }

  @Test
  void aKindHeldBehindAStuckStatementOfTheOtherGoesAfterTheBound() {
    Vertx vertx = Vertx.vertx();
    try {
      FusionTurns turns = new FusionTurns(vertx, 50);
      Side pops = new Side(turns, true);
      Side acks = new Side(turns, false);
      acks.submit(1);                     // an ack statement goes and never returns (a row lock, say)
      long t0 = System.nanoTime();
      pops.submit(2);                     // the pops are held behind it, then go alongside it after the bound
      assertThat(pops.sent).isEmpty();
      await().atMost(Duration.ofSeconds(5)).until(() -> pops.sent.equals(List.of(2)));
      assertThat((System.nanoTime() - t0) / 1_000_000).isGreaterThanOrEqualTo(50);
      acks.submit(1);                     // and the same for acks behind a stuck small pop, once the ack returns
      pops.submit(1);
      acks.returns();
      await().atMost(Duration.ofSeconds(5)).until(() -> acks.sent.equals(List.of(1, 1)));
    } finally {
      vertx.close();
    }
  }
}
