package io.queenvertx.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * A read of {@code queen.system_state} that started before an operator's switch and answers after it must not put the
 * old value back (TimerFiringIT saw the periodic reconcile turn push maintenance off again right after the POST that
 * turned it on, and a due timer fired under maintenance).
 */
class MaintenanceFlagsTest {
  @Test
  void aReadThatStartedBeforeASwitchIsDropped() {
    var flags = new MaintenanceFlags();
    long seen = flags.changes();          // the reconcile's read starts: both off in the table
    flags.setPush(true);                  // the operator's POST lands meanwhile (or another node's announcement)
    assertThat(flags.applyRead(seen, false, false)).as("the older read is dropped").isFalse();
    assertThat(flags.pushMaintenance()).isTrue();
  }

  @Test
  void aReadWithNoSwitchSinceIsApplied() {
    var flags = new MaintenanceFlags();
    flags.setPop(true);
    long seen = flags.changes();
    assertThat(flags.applyRead(seen, true, false)).isTrue();
    assertThat(flags.pushMaintenance()).isTrue();
    assertThat(flags.popMaintenance()).as("the table said pop maintenance is off (another node turned it off)")
        .isFalse();
    assertThat(flags.applyRead(flags.changes(), null, true)).isTrue();
    assertThat(flags.pushMaintenance()).as("a switch not read is left as it is").isTrue();
    assertThat(flags.popMaintenance()).isTrue();
  }
}
