package io.queenvertx.boot;

import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Properties;
import org.flywaydb.core.Flyway;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies the versioned schema of the {@code sql} module at boot. Runs on the boot thread, before Vert.x serves
 * anything (JDBC blocks).
 *
 * <p>Several nodes may boot at the same moment against one empty database. Flyway creating its history table is the
 * racy part, so every node first takes one session-level advisory lock on a separate connection; the nodes apply the
 * migrations one after another, and the later ones find nothing to do.
 */
public final class Migrations {
  private static final Logger log = LoggerFactory.getLogger(Migrations.class);
  /** Shared by every queen-vertx node; keep it distinct from the maintenance advisory locks (7370xx). */
  static final long MIGRATION_LOCK = 7_369_001L;

  private Migrations() {}

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
        var result = Flyway.configure()
            .dataSource(url, db.user(), db.password())
            .schemas("queen")
            .defaultSchema("queen")
            .table("schema_history")
            .locations("classpath:db/migration")
            .placeholderReplacement(false)
            .load()
            .migrate();
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

  static String jdbcUrl(Config.Database db) {
    return "jdbc:postgresql://" + db.host() + ":" + db.port() + "/" + db.database()
        + (db.ssl() ? "?sslmode=require" : "");
  }
}
