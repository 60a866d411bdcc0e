package io.queenvertx.log;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.bus.PushCommand;
import io.queenvertx.bus.PushItem;
import io.queenvertx.codec.Frame;
import io.queenvertx.codec.UuidV7;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The fusion window's decisions, without a broker: when a bundle of live pushes may wait and when it must leave. */
class FusionGateTest {
  final List<Long> timers = new ArrayList<>();
  final Map<String, ArrayList<Slot>> pending = new LinkedHashMap<>();
  /** The gate's clock, moved by hand: a slow or busy test JVM cannot make a hold end early. */
  long now = 1_000_000_000L;

  void waiting(String partition, int frames) {
    var item = new PushItem("q", partition, null, new byte[] {'1'});
    var req = new Request(new PushCommand(UUID.randomUUID(), null, List.of(item)), out -> {}, false);
    for (int i = 0; i < frames; i++) {
      pending.computeIfAbsent(partition, k -> new ArrayList<>()).add(new Slot(
          new Frame(UuidV7.next(), "t", null, null, new byte[] {'1'}, false), new byte[16], req, 0));
    }
  }

  @Test
  void neverHoldsWhileNoBundleIsInFlight() {
    var gate = new FusionGate(10_000_000, 512, timers::add);
    waiting("a", 1);
    assertThat(gate.holds(0, pending, Set.of())).isFalse();
    assertThat(timers).isEmpty();
  }

  @Test
  void holdsSmallBundlesWhileOthersAreInFlightAndArmsOneTimer() {
    var gate = new FusionGate(500, 512, timers::add, () -> now);
    waiting("a", 3);
    assertThat(gate.holds(1, pending, Set.of())).isTrue();
    now += 499_000;
    assertThat(gate.holds(1, pending, Set.of())).isTrue();
    assertThat(timers).containsExactly(500_000L);
    // the last write in flight completes: the bundle leaves at once
    assertThat(gate.holds(0, pending, Set.of())).isFalse();
  }

  @Test
  void enoughWaitingFramesOrReadyPartitionsLeaveAtOnce() {
    var gate = new FusionGate(10_000_000, 4, timers::add);
    waiting("a", FusionGate.TARGET_FRAMES);
    assertThat(gate.holds(2, pending, Set.of())).isFalse();
    // a batched push whose partition is busy: its frames still count, so the ready ones are not held
    waiting("b", 1);
    assertThat(gate.holds(2, pending, Set.of("a"))).isFalse();
    pending.clear();
    // frames of a partition whose write is in flight cannot leave: with nothing ready, no hold starts
    waiting("a", 3);
    assertThat(gate.holds(2, pending, Set.of("a"))).isFalse();
    assertThat(timers).isEmpty();
    waiting("b", 1);
    assertThat(gate.holds(2, pending, Set.of("a"))).isTrue();
    waiting("c", 1);
    waiting("d", 1);
    assertThat(gate.holds(2, pending, Set.of("a"))).isTrue();
    waiting("e", 1);
    assertThat(gate.holds(2, pending, Set.of("a"))).isFalse(); // four ready partitions: a full bundle
  }

  @Test
  void aHoldEndsAtItsDeadlineAndZeroTurnsTheWindowOff() {
    var gate = new FusionGate(1, 512, timers::add, () -> now);
    waiting("a", 1);
    assertThat(gate.holds(1, pending, Set.of())).isTrue();
    now += 1_000;
    gate.timerFired();
    assertThat(gate.holds(1, pending, Set.of())).isFalse();
    assertThat(new FusionGate(0, 512, timers::add).holds(1, pending, Set.of())).isFalse();
  }
}
