package io.queenvertx.log;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.bus.PushCommand;
import io.queenvertx.bus.PushItem;
import io.queenvertx.bus.PushOutcome;
import io.queenvertx.codec.Frame;
import io.queenvertx.codec.TxnHash;
import io.queenvertx.codec.UuidV7;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The spool handling's rules that need no database: drain backoff, replay grouping, bisection, failed-write spooling. */
class SpoolerTest {
  static final UUID T1 = UUID.fromString("00000000-0000-0000-0000-000000000001");
  static final UUID T2 = UUID.fromString("00000000-0000-0000-0000-000000000002");

  static Spool.Event event(UUID tenant, String producer, String txn) {
    return new Spool.Event(tenant.toString(), "q", "p", txn, producer, false, "{}".getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void drainBackoffDoublesFromTheFirstWaitUpToTheCap() {
    List<Long> waits = new ArrayList<>();
    long w = 0;
    for (int i = 0; i < 9; i++) {
      w = Spooler.nextBackoff(w);
      waits.add(w);
    }
    assertThat(waits).containsExactly(100L, 200L, 400L, 800L, 1600L, 3200L, 5000L, 5000L, 5000L);
  }

  @Test
  void replayGroupsEventsByTenantAndProducerInOrderOfFirstAppearance() {
    var a1 = event(T1, "alice", "1");
    var b1 = event(T1, "bob", "2");
    var a2 = event(T1, "alice", "3");
    var c1 = event(T2, "alice", "4");
    var b2 = event(T1, "bob", "5");
    var groups = new ArrayList<>(Spooler.byOrigin(List.of(a1, b1, a2, c1, b2)).values());
    assertThat(groups).hasSize(3);
    assertThat(groups.get(0)).containsExactly(a1, a2);
    assertThat(groups.get(1)).containsExactly(b1, b2);
    assertThat(groups.get(2)).containsExactly(c1);
  }

  @Test
  void bisectingARefusedBatchIsolatesTheBadEventInLogarithmicRounds() {
    List<Spool.Event> batch = new ArrayList<>();
    for (int i = 0; i < 13; i++) batch.add(event(T1, "p", "txn-" + i));
    var bad = batch.get(9);
    List<Spool.Event> current = batch;
    int rounds = 0;
    while (current.size() > 1) {
      var halves = Spooler.halves(current);
      assertThat(halves).hasSize(2);
      assertThat(halves.get(0).size() + halves.get(1).size()).isEqualTo(current.size());
      assertThat(halves.get(0).size()).isEqualTo(current.size() / 2);
      List<Spool.Event> joined = new ArrayList<>(halves.get(0));
      joined.addAll(halves.get(1));
      assertThat(joined).containsExactlyElementsOf(current);
      current = halves.get(0).contains(bad) ? halves.get(0) : halves.get(1);
      rounds++;
    }
    assertThat(current).containsExactly(bad);
    assertThat(rounds).isEqualTo(4);
  }

  @Test
  void aFailedLiveWriteIsSpooledFollowersIncludedWhileAFailedReplayKeepsItsFileAndLearnsWhy(@TempDir Path dir)
      throws Exception {
    var spool = new Spool(dir, 100);
    // spoolFailedWrite reads neither the node nor the encryption: the database plays no part in it. Its file access
    // runs on the worker pool of a context.
    var vertx = io.vertx.core.Vertx.vertx();
    var spooler = new Spooler(null, null, null, vertx.getOrCreateContext(), spool, null, null);
    var key = new PartitionKey(T1, "q", "p");

    AtomicReference<List<PushOutcome>> live = new AtomicReference<>();
    var liveReq = new Request(new PushCommand(T1, "alice", List.of(item("a"), item("a"))), live::set, false);
    Slot leader = slot(liveReq, 0, "a");
    Slot follower = slot(liveReq, 1, "a");
    leader.flushFollowers.add(follower);
    liveReq.outstanding = 2;

    AtomicReference<List<PushOutcome>> replay = new AtomicReference<>();
    var replayReq = new Request(new PushCommand(T1, "alice", List.of(item("b"))), replay::set, true);
    Slot replayed = slot(replayReq, 0, "b");
    replayReq.outstanding = 1;

    var cause = new java.net.ConnectException("Connection refused");
    var seg = new PackedSegment(key, List.of(leader, replayed), new byte[0], null, null);
    try {
      spooler.spoolFailedWrite(seg, cause).await(10, java.util.concurrent.TimeUnit.SECONDS);
    } finally {
      vertx.close();
    }

    assertThat(spool.pendingEvents()).isEqualTo(2);
    assertThat(live.get()).extracting(PushOutcome::status).containsExactly("buffered", "duplicate");
    assertThat(replay.get()).extracting(PushOutcome::status).containsExactly("failed");
    assertThat(replayReq.causes[0]).isSameAs(cause);
    spool.rotate();
    var spooled = Spool.read(spool.sealed().get(0));
    assertThat(spooled).extracting(Spool.Event::transactionId).containsExactly("a", "a");
  }

  static PushItem item(String txn) {
    return new PushItem("q", "p", txn, "{}".getBytes(StandardCharsets.UTF_8));
  }

  static Slot slot(Request req, int index, String txn) {
    var frame = new Frame(UuidV7.next(), txn, null, "alice", "{}".getBytes(StandardCharsets.UTF_8), false);
    return new Slot(frame, TxnHash.of(txn), req, index);
  }
}
