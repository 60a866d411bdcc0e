package io.queenvertx.db;

import io.queenvertx.kernel.MaintenanceFlags;
import io.queenvertx.bus.Addresses;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;

/**
 * The one owner of {@code queen.system_state}: the two cluster-wide maintenance switches (ENGINE.md §9.4), each a row
 * {@code key -> {"enabled": bool}} (a missing row is off). Its keys are also the field names of the
 * {@link Addresses#MAINTENANCE_CHANGED} announcement. Every node keeps a copy in {@link MaintenanceFlags}, refreshed
 * from here at boot and periodically, and on each announcement.
 */
public final class SystemState {
  /** One switch and its row key. */
  public enum Switch {
    /** Push maintenance: pushes go to the spool, DLQ moves are refused. */
    PUSH("maintenance_mode"),
    /** Pop maintenance: every pop answers empty. */
    POP("pop_maintenance_mode");

    private final String key;

    Switch(String key) {
      this.key = key;
    }

    /** The row key in {@code queen.system_state} and the field name in the announcement. */
    public String key() {
      return key;
    }

    void apply(MaintenanceFlags flags, boolean on) {
      if (this == PUSH) flags.setPush(on);
      else flags.setPop(on);
    }
  }

  /** Both switches as the database holds them. */
  public record Switches(boolean push, boolean pop) {
    /** Copies both onto this node's flags, unless they changed since {@code seenChanges} (the read may be older). */
    public void applyTo(MaintenanceFlags flags, long seenChanges) {
      flags.applyRead(seenChanges, push, pop);
    }
  }

  private static final String READ = "SELECT key, (value->>'enabled')::boolean FROM queen.system_state "
      + "WHERE key IN ('maintenance_mode', 'pop_maintenance_mode')";
  private static final String WRITE = "INSERT INTO queen.system_state(key, value, updated_at) "
      + "VALUES ($1, $2::text::jsonb, now()) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()";

  private final Pool pool;

  public SystemState(Pool pool) {
    this.pool = pool;
  }

  /** Both switches, fresh from the database. */
  public Future<Switches> read() {
    return pool.query(READ).execute().map(rows -> {
      boolean push = false;
      boolean pop = false;
      for (var r : rows) {
        boolean on = Boolean.TRUE.equals(r.getBoolean(1));
        if (Switch.PUSH.key.equals(r.getString(0))) push = on;
        if (Switch.POP.key.equals(r.getString(0))) pop = on;
      }
      return new Switches(push, pop);
    });
  }

  /**
   * Turns one switch on or off: writes the row, then applies it to this node's flags and announces it on
   * {@link Addresses#MAINTENANCE_CHANGED} to every node (fails, changing nothing locally, when the write fails).
   */
  public Future<Void> set(MaintenanceFlags flags, Vertx vertx, Switch which, boolean on) {
    return pool.preparedQuery(WRITE)
        .execute(Tuple.of(which.key, new JsonObject().put("enabled", on).encode()))
        .map(v -> {
          which.apply(flags, on);
          vertx.eventBus().publish(Addresses.MAINTENANCE_CHANGED, new JsonObject().put(which.key, on));
          return null;
        });
  }

  /** Applies a {@link Addresses#MAINTENANCE_CHANGED} announcement (the switches it names) to this node's flags. */
  public static void applyAnnouncement(JsonObject announcement, MaintenanceFlags flags) {
    for (Switch s : Switch.values()) {
      if (announcement.getValue(s.key) instanceof Boolean on) s.apply(flags, on);
    }
  }
}
