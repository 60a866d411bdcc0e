package io.queenvertx.db;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.kernel.Config;
import org.junit.jupiter.api.Test;

/** The replay lag {@link ReadPool} reads a replica by ({@link ReadPool.History}). */
class ReadLagTest {
  static final Config.Host P = new Config.Host("p.invalid", 1);
  static final Config.Host R = new Config.Host("r.invalid", 2);

  static ServerState primary(long lsn) {
    return new ServerState(P, true, false, false, "1", 3, lsn, -1, null, 0);
  }

  static ServerState replica(long replayed, long sinceReplayMs) {
    return new ServerState(R, true, true, true, "1", 0, replayed, sinceReplayMs, null, 0);
  }

  @Test
  void aReplicaThatReplayedThePrimarysPositionHasNoLagAndOneBehindIsAsOldAsTheNewestPositionItHas() {
    var h = new ReadPool.History();
    h.note(primary(100), 10_000);
    h.note(primary(200), 11_000);
    h.note(primary(300), 12_000);
    assertThat(h.lagMs(replica(300, 9_000), primary(300), 12_000)).isZero();
    assertThat(h.lagMs(replica(250, 0), primary(300), 12_000)).isEqualTo(1_000);
    assertThat(h.lagMs(replica(120, 0), primary(300), 12_000)).isEqualTo(2_000);
  }

  @Test
  void aReplicaBehindEveryNoteIsAtLeastAsLateAsItsLastReplayedCommit() {
    var h = new ReadPool.History();
    h.note(primary(100), 10_000);
    h.note(primary(200), 11_000);
    assertThat(h.lagMs(replica(50, 30_000), primary(200), 11_000)).isEqualTo(30_000);
    assertThat(h.lagMs(replica(50, 10), primary(200), 11_000)).isEqualTo(1_000);
    assertThat(h.lagMs(replica(50, -1), primary(200), 11_000)).isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void aNewPrimaryStartsTheNotesOverAndWhatIsNotAStandbyOfItHasNoLag() {
    var h = new ReadPool.History();
    h.note(primary(100), 10_000);
    var other = new ServerState(new Config.Host("q.invalid", 3), true, false, false, "1", 4, 500, -1, null, 0);
    h.note(other, 11_000);
    assertThat(h.lagMs(replica(100, 5), other, 11_000)).isEqualTo(5);
    assertThat(h.lagMs(primary(100), other, 11_000)).isEqualTo(-1); // a demoted primary that still takes writes
    assertThat(h.lagMs(new ServerState(R, true, true, true, "2", 0, 900, 0, null, 0), other, 11_000)).isEqualTo(-1);
    assertThat(h.lagMs(ServerState.unreachable(R, "refused"), other, 11_000)).isEqualTo(-1);
    assertThat(h.lagMs(replica(100, 5), null, 11_000)).isEqualTo(-1);
    assertThat(h.lagMs(other, other, 11_000)).isZero();
  }
}
