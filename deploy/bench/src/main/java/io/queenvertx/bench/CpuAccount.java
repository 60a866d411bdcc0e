package io.queenvertx.bench;

import java.util.Map;

/**
 * CPU time of the broker and of the PostgreSQL server over a measured window, from two {@code /proc} snapshots.
 * Pure: {@link Measured} reads {@code /proc} into {@link ProcSnap}s, this class does the arithmetic (and the unit tests
 * feed it snapshots by hand).
 *
 * <p>PostgreSQL's CPU is the postmaster's own time, plus the time of the children it has reaped (its {@code cutime} and
 * {@code cstime}: a backend that exits hands its whole CPU time to its parent's counters when reaped), plus the time of
 * its live children. The window's PostgreSQL CPU is that sum at the end minus that sum at the start: a backend that
 * lived at the start and exited during the window counts only its in-window time (its pre-window time is in both
 * sums), a backend born in the window counts whole, and a pid reused by a new backend needs no special case. Comparing
 * the live children pid by pid would instead count an exited backend's pre-window time a second time.
 */
final class CpuAccount {
  private CpuAccount() {}

  /** What {@code /proc} said at one instant. Ticks are clock ticks ({@code CLK_TCK} per second); -1 when unread. */
  record ProcSnap(long brokerTicks, int postmaster, long postmasterTicks, long reapedTicks, Map<Integer, Long> children,
      long benchTicks, Map<Integer, Long> brokerJitThreads) {
    ProcSnap(long brokerTicks, int postmaster, long postmasterTicks, long reapedTicks, Map<Integer, Long> children,
        long benchTicks) {
      this(brokerTicks, postmaster, postmasterTicks, reapedTicks, children, benchTicks, Map.of());
    }

    /** PostgreSQL's CPU to date: the postmaster, its reaped children and its live ones; -1 without a postmaster. */
    long pgTicks() {
      if (postmaster <= 0 || postmasterTicks < 0) return -1;
      long t = postmasterTicks + reapedTicks;
      for (long c : children.values()) t += c;
      return t;
    }
  }

  /**
   * CPU of the window in clock ticks: broker, PostgreSQL, the generator, and the part of the broker's spent by its JIT
   * compiler threads; -1 where not measurable.
   */
  record Window(long brokerTicks, long pgTicks, long benchTicks, long brokerJitTicks) {
    /** Microseconds of CPU per message ({@code NaN} when not measurable or nothing was delivered). */
    static double usPerMsg(long ticks, long clkTck, long messages) {
      if (ticks < 0 || messages <= 0 || clkTck <= 0) return Double.NaN;
      return ticks * 1e6 / clkTck / messages;
    }

    /**
     * Microseconds per message of what the load added: the window's ticks minus what the process spends idle over as
     * long a time ({@code idleTicksPerSec}, measured before the load), floored at 0; {@code NaN} when not measurable.
     */
    static double netUsPerMsg(long ticks, double idleTicksPerSec, double secs, long clkTck, long messages) {
      if (ticks < 0 || idleTicksPerSec < 0) return Double.NaN;
      return usPerMsg(Math.max(0, Math.round(ticks - idleTicksPerSec * secs)), clkTck, messages);
    }
  }

  static Window window(ProcSnap s0, ProcSnap s1) {
    return new Window(delta(s0.brokerTicks, s1.brokerTicks), pgDelta(s0, s1), delta(s0.benchTicks, s1.benchTicks),
        threadsDelta(s0.brokerJitThreads, s1.brokerJitThreads));
  }

  /**
   * CPU of a set of threads between two snapshots (tid to ticks): the growth of the threads in both, plus the whole of
   * the threads born since. A thread that ended in the window is lost (its time stays in the process's total only):
   * HotSpot starts and stops compiler threads with the load, so this is a lower bound.
   */
  static long threadsDelta(Map<Integer, Long> t0, Map<Integer, Long> t1) {
    long d = 0;
    for (var e : t1.entrySet()) d += Math.max(0, e.getValue() - t0.getOrDefault(e.getKey(), 0L));
    return d;
  }

  /** A HotSpot JIT compiler thread, by its name in {@code /proc/<pid>/task/<tid>/comm} (at most 15 characters). */
  static boolean isJitThread(String comm) {
    return comm.startsWith("C1 CompilerThre") || comm.startsWith("C2 CompilerThre");
  }

  /** PostgreSQL's CPU between two snapshots; -1 if either has no postmaster or the postmaster changed (a restart). */
  static long pgDelta(ProcSnap s0, ProcSnap s1) {
    if (s0.postmaster != s1.postmaster) return -1;
    long a = s0.pgTicks();
    long b = s1.pgTicks();
    return a < 0 || b < 0 ? -1 : Math.max(0, b - a);
  }

  private static long delta(long a, long b) {
    return a < 0 || b < 0 ? -1 : b - a;
  }

  // ---------------------------------------------------------------- /proc/<pid>/stat

  /**
   * The fields of a {@code /proc/<pid>/stat} line after the command name; index 0 is field 3 (state). The command name
   * sits in parentheses and may itself hold spaces and parentheses, so the fields start after the LAST ')'.
   */
  static String[] statFields(String statLine) {
    int close = statLine.lastIndexOf(')');
    if (close < 0 || close + 2 > statLine.length()) throw new IllegalArgumentException("not a stat line: " + statLine);
    return statLine.substring(close + 2).trim().split(" ");
  }

  /** Parent pid (field 4). */
  static int ppid(String[] f) {
    return Integer.parseInt(f[1]);
  }

  /** utime + stime (fields 14 and 15) of the process itself. */
  static long ownTicks(String[] f) {
    return Long.parseLong(f[11]) + Long.parseLong(f[12]);
  }

  /** cutime + cstime (fields 16 and 17): the CPU of the children this process has waited for. */
  static long reapedTicks(String[] f) {
    return Long.parseLong(f[13]) + Long.parseLong(f[14]);
  }
}
