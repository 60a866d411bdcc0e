package io.queenvertx.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The CPU accounting of a measured window, over snapshots written by hand. */
class CpuAccountTest {
  private static final int PM = 100;

  private static CpuAccount.ProcSnap snap(long broker, long pmOwn, long reaped, Map<Integer, Long> children) {
    return new CpuAccount.ProcSnap(broker, PM, pmOwn, reaped, children, 7);
  }

  @Test
  void liveBackendsCountTheirGrowth() {
    var w = CpuAccount.window(snap(1_000, 50, 0, Map.of(201, 300L, 202, 400L)),
        snap(1_600, 52, 0, Map.of(201, 450L, 202, 410L)));
    assertEquals(600, w.brokerTicks());
    assertEquals(2 + 150 + 10, w.pgTicks());
  }

  @Test
  void aBackendThatExitsInTheWindowCountsOnlyItsWindowTime() {
    // 201 had used 300 ticks before the window, 80 more inside it, then exited: the postmaster reaped 380
    var w = CpuAccount.window(snap(0, 50, 1_000, Map.of(201, 300L, 202, 400L)),
        snap(0, 50, 1_380, Map.of(202, 420L)));
    assertEquals(80 + 20, w.pgTicks());
  }

  @Test
  void aBackendBornInTheWindowCountsWhole_aliveOrReaped() {
    var s0 = snap(0, 50, 1_000, Map.of(202, 400L));
    assertEquals(35, CpuAccount.pgDelta(s0, snap(0, 50, 1_000, Map.of(202, 400L, 203, 35L))));
    assertEquals(35, CpuAccount.pgDelta(s0, snap(0, 50, 1_035, Map.of(202, 400L))));
  }

  @Test
  void aReusedPidIsANewBackend() {
    // 201 (300 ticks at the start) exited after 10 more; a new backend got pid 201 and used 5
    var w = CpuAccount.window(snap(0, 50, 1_000, Map.of(201, 300L)), snap(0, 50, 1_310, Map.of(201, 5L)));
    assertEquals(15, w.pgTicks());
  }

  @Test
  void aRestartedPostmasterOrNoneIsNotMeasured() {
    var s0 = snap(0, 50, 0, Map.of());
    var other = new CpuAccount.ProcSnap(0, PM + 1, 1, 0, Map.of(), 7);
    assertEquals(-1, CpuAccount.pgDelta(s0, other));
    var gone = new CpuAccount.ProcSnap(0, PM, -1, 0, Map.of(), 7);
    assertEquals(-1, CpuAccount.pgDelta(s0, gone));
    assertEquals(-1, CpuAccount.window(new CpuAccount.ProcSnap(-1, PM, 1, 0, Map.of(), 7), s0).brokerTicks());
  }

  @Test
  void microsecondsPerMessage() {
    // 150 ticks at 100 per second = 1.5 s of CPU for 10,000 messages = 150 µs each
    assertEquals(150.0, CpuAccount.Window.usPerMsg(150, 100, 10_000), 1e-9);
    assertTrue(Double.isNaN(CpuAccount.Window.usPerMsg(150, 100, 0)));
    assertTrue(Double.isNaN(CpuAccount.Window.usPerMsg(-1, 100, 10)));
  }

  @Test
  void netMicrosecondsPerMessageLeaveOutTheIdleCpu() {
    // 30 s window, 900 ticks used, idle at 10 ticks/s (300 over the window): 600 ticks = 6 s for 20,000 messages
    assertEquals(300.0, CpuAccount.Window.netUsPerMsg(900, 10, 30, 100, 20_000), 1e-9);
    // never below zero when the idle rate was higher than the window's (a noisy idle sample)
    assertEquals(0.0, CpuAccount.Window.netUsPerMsg(100, 10, 30, 100, 20_000), 1e-9);
    assertTrue(Double.isNaN(CpuAccount.Window.netUsPerMsg(900, -1, 30, 100, 20_000)));
  }

  @Test
  void jitThreadsCountTheirGrowthAndTheNewOnes() {
    assertEquals(5 + 40, CpuAccount.threadsDelta(Map.of(11, 100L, 12, 7L), Map.of(11, 105L, 13, 40L)));
    assertTrue(CpuAccount.isJitThread("C2 CompilerThre"));
    assertTrue(CpuAccount.isJitThread("C1 CompilerThre"));
    assertTrue(!CpuAccount.isJitThread("vert.x-eventloo"));
  }

  @Test
  void statLineFieldsStartAfterTheLastParenthesis() {
    String line = "4242 (postgres: a) b) S 100 4242 4242 0 -1 4194560 500 0 0 0 11 22 33 44 20 0 1 0 99";
    String[] f = CpuAccount.statFields(line);
    assertEquals("S", f[0]);
    assertEquals(100, CpuAccount.ppid(f));
    assertEquals(33, CpuAccount.ownTicks(f));
    assertEquals(77, CpuAccount.reapedTicks(f));
  }

  @Test
  void aRealStatLineOfThisProcessParses() throws Exception {
    String line = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/self/stat"));
    String[] f = CpuAccount.statFields(line);
    assertEquals(ProcessHandle.current().parent().map(ProcessHandle::pid).orElse(-1L).intValue(), CpuAccount.ppid(f));
  }
}
