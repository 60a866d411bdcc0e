package io.queenvertx.faults;

import java.time.Duration;

/**
 * The sizes of one fault-suite run. {@code short} (the default, what CI runs) keeps the suite near a minute on two
 * cores; {@code long} ({@code -Dqueen.faults=long}, or {@code mvn -Pfaults}) runs more crashes, longer
 * outages and more producers.
 *
 * @param name            short or long
 * @param load            the producers
 * @param warmupItems     acknowledged items before the first fault of a scenario
 * @param crashes         kill -9 count of scenario 1
 * @param itemsPerFault   acknowledged items after each fault (a kill -9 and restart, a PostgreSQL restart) before
 *                        the next step
 * @param pgRestarts      fast and immediate restart pairs of scenario 2
 * @param outage          how long PostgreSQL stays down in scenario 3a
 * @param restartOutage   how long PostgreSQL stays down in scenario 3b, the broker being restarted halfway
 * @param afterItems      acknowledged items after PostgreSQL is back before the producers stop
 * @param drainTimeout    how long the spool may take to empty once PostgreSQL is back
 */
record FaultPlan(String name, Load load, int warmupItems, int crashes, int itemsPerFault, int pgRestarts,
                 Duration outage, Duration restartOutage, int afterItems, Duration drainTimeout) {

  /** Producers: {@code producers} tasks, {@code batch} items per request, a pause of {@code periodMs} between. */
  record Load(int producers, int batch, int periodMs, int partitions) {}

  static FaultPlan current() {
    String mode = System.getProperty("queen.faults", "short").trim();
    if (mode.equalsIgnoreCase("long")) {
      return new FaultPlan("long", new Load(6, 4, 60, 8), 3_000, 4, 5_000, 3, Duration.ofSeconds(120),
          Duration.ofSeconds(60), 2_000, Duration.ofMinutes(10));
    }
    // outages of 10 s: five times the 2 s after which the spool used to give up, and long enough for thousands of
    // items answered buffered (the long run keeps 120 s and 60 s)
    return new FaultPlan("short", new Load(4, 4, 50, 4), 600, 1, 1_000, 1, Duration.ofSeconds(10),
        Duration.ofSeconds(10), 500, Duration.ofMinutes(3));
  }
}
