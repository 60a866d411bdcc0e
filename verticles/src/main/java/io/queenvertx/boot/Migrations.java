package io.queenvertx.boot;

import io.queenvertx.kernel.Config;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.CoreErrorCode;
import org.flywaydb.core.api.ErrorCode;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.output.ValidateOutput;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies the versioned schema of the {@code sql} module at boot. Runs on the boot thread, before Vert.x serves
 * anything (JDBC blocks).
 *
 * <p>Several nodes may boot at the same moment against one empty database. Flyway creating its history table is the
 * racy part, so every node first takes one session-level advisory lock on a separate connection; the nodes apply the
 * migrations one after another, and the later ones find nothing to do.
 *
 * <p>The schema is split in two: versioned migrations ({@code V*.sql}) hold tables, indexes and data changes, and
 * repeatable migrations ({@code R__*.sql}) hold every function, each defined once under its current name; Flyway runs
 * the repeatables after the versioned ones, and again whenever a file changes. Moving the functions out (issue 19)
 * rewrote V1-V14, so a database those files built reports checksum mismatches for them. When the applied checksums
 * are exactly the ones the old files had ({@link #REWRITTEN_CHECKSUMS}) and nothing else is wrong, the history is
 * repaired to the new checksums before migrating; V15 then drops the old function names and the repeatables create
 * the current ones. Any other validation error fails the boot as before.
 */
public final class Migrations {
  private static final Logger log = LoggerFactory.getLogger(Migrations.class);
  /** Shared by every queen-vertx node; keep it distinct from the maintenance advisory locks (7370xx). */
  static final long MIGRATION_LOCK = 7_369_001L;

  /**
   * Flyway checksums of V1-V14 as they were before issue 19 moved the functions out of them: the only applied
   * checksums that {@link #repairRewrittenHistory} accepts in place of the current files' checksums.
   */
  static final Map<String, Integer> REWRITTEN_CHECKSUMS = rewrittenChecksums();

  private Migrations() {}

  private static Map<String, Integer> rewrittenChecksums() {
    int[] sums = {-403956854, -696742531, 1273784049, -943008390, 300115095, -224216439, 493186777, -772160336,
        233099565, -670831096, 243323639, -88206067, 1784299867, 1610315488};
    var m = new HashMap<String, Integer>();
    for (int v = 1; v <= sums.length; v++) m.put(Integer.toString(v), sums[v - 1]);
    return Map.copyOf(m);
  }

  public static void apply(Config.Database db) throws SQLException {
    String url = jdbcUrl(db);
    var props = new Properties();
    props.setProperty("user", db.user());
    props.setProperty("password", db.password());
    try (var lockConn = DriverManager.getConnection(url, props)) {
      try (var st = lockConn.createStatement()) {
        st.execute("SELECT pg_advisory_lock(" + MIGRATION_LOCK + ")");
      }
      try {
        var flyway = Flyway.configure()
            .dataSource(url, db.user(), db.password())
            .schemas("queen")
            .defaultSchema("queen")
            .table("schema_history")
            .locations("classpath:db/migration")
            .placeholderReplacement(false)
            .load();
        repairRewrittenHistory(flyway);
        var result = flyway.migrate();
        if (result.migrationsExecuted > 0) {
          log.info("schema migrated to version {} ({} migrations applied)", result.targetSchemaVersion,
              result.migrationsExecuted);
        } else {
          log.info("schema up to date");
        }
      } finally {
        try (var st = lockConn.createStatement()) {
          st.execute("SELECT pg_advisory_unlock(" + MIGRATION_LOCK + ")");
        }
      }
    }
  }

  /**
   * Repairs the schema history when its only validation errors are checksum mismatches of V1-V14 whose applied
   * checksum is the pre-issue-19 one (pending migrations are not errors here: migrate applies them). Otherwise leaves
   * the history alone, and migrate's own validation reports whatever is wrong.
   *
   * @return whether the history was repaired
   */
  static boolean repairRewrittenHistory(Flyway flyway) {
    var validation = flyway.validateWithResult();
    if (validation.validationSuccessful) return false;
    Map<String, Integer> applied = new HashMap<>();
    for (MigrationInfo info : flyway.info().applied()) {
      if (info.getVersion() != null && info.getChecksum() != null) {
        applied.put(info.getVersion().getVersion(), info.getChecksum());
      }
    }
    List<String> rewritten = new ArrayList<>();
    for (ValidateOutput out : validation.invalidMigrations) {
      ErrorCode code = out.errorDetails == null ? null : out.errorDetails.errorCode;
      if (code == CoreErrorCode.RESOLVED_VERSIONED_MIGRATION_NOT_APPLIED
          || code == CoreErrorCode.RESOLVED_REPEATABLE_MIGRATION_NOT_APPLIED
          || code == CoreErrorCode.OUTDATED_REPEATABLE_MIGRATION) {
        continue;
      }
      Integer old = REWRITTEN_CHECKSUMS.get(out.version);
      if (code != CoreErrorCode.CHECKSUM_MISMATCH || old == null || !old.equals(applied.get(out.version))) {
        return false;
      }
      rewritten.add(out.version);
    }
    if (rewritten.isEmpty()) return false;
    log.info("schema history: versions {} were rewritten when the functions moved to repeatable migrations; "
        + "repairing their checksums", rewritten);
    flyway.repair();
    return true;
  }

  /**
   * The JDBC URL of {@code db}: every host, tried in order; with {@code read-write} the driver takes only a server
   * whose {@code transaction_read_only} is off ({@code targetServerType=primary}), so the schema is applied on the
   * primary and boot waits for one.
   */
  static String jdbcUrl(Config.Database db) {
    List<String> params = new ArrayList<>();
    if (db.target() == Config.Target.READ_WRITE) params.add("targetServerType=primary");
    if (db.ssl()) params.add("sslmode=require");
    return "jdbc:postgresql://" + String.join(",", db.hosts().stream().map(Config.Host::toString).toList()) + "/"
        + java.net.URLEncoder.encode(db.database(), java.nio.charset.StandardCharsets.UTF_8).replace("+", "%20")
        + (params.isEmpty() ? "" : "?" + String.join("&", params));
  }
}
