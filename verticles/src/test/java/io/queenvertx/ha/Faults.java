package io.queenvertx.ha;

import java.time.Duration;

/** The faults the failover tests inject into the Patroni cluster ({@link FailoverRun.Fault}). */
final class Faults {
  private Faults() {}

  /** kill -9 of the primary's postmaster ({@code local-ha.sh kill-primary}); Patroni restarts or replaces it. */
  static final FailoverRun.Fault KILL_POSTMASTER = (pg, nodes, harm) -> {
    String out = pg.script("kill-primary").trim();
    harm.run(); // the kill is the script's last step
    return out.substring(out.lastIndexOf('\n') + 1);
  };

  /** A planned switchover ({@code local-ha.sh switchover}: patronictl switchover, then a new synchronous pair). */
  static final FailoverRun.Fault SWITCHOVER = (pg, nodes, harm) -> {
    harm.run();
    String out = pg.script("switchover").trim();
    return out.substring(out.lastIndexOf('\n') + 1);
  };

  /**
   * The primary's machine lost: kill -9 of its Patroni and of every process of its PostgreSQL. A standby is promoted
   * once the leader key expires (Patroni's ttl); the member is then started again ({@code local-ha.sh up}) and
   * rejoins as a standby.
   */
  static final FailoverRun.Fault LOSE_PRIMARY_MACHINE = (pg, nodes, harm) -> {
    Struck s = strikePrimary(pg, "KILL", harm);
    pg.script("up");
    return s.old() + " lost (Patroni and PostgreSQL killed); " + s.next() + " promoted after " + s.promotedMs()
        + " ms";
  };

  /** The member struck, the one promoted in its place, after how long, and when the blow fell (nanos). */
  record Struck(String old, String next, long promotedMs, long at) {}

  /** Sends {@code signal} to the whole primary member, marks the harm, and waits until another member is primary. */
  static Struck strikePrimary(PatroniCluster pg, String signal, Runnable harm) throws Exception {
    String old = pg.leader();
    pg.signalMember(old, signal);
    long t = System.nanoTime();
    harm.run();
    String next = pg.awaitLeader(old, Duration.ofMinutes(2));
    return new Struck(old, next, (System.nanoTime() - t) / 1_000_000, t);
  }
}
