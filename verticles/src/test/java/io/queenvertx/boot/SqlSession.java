package io.queenvertx.boot;

import io.queenvertx.kernel.Config;
import io.queenvertx.testing.TestDatabase;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

/**
 * A JDBC session on a fresh database migrated as the broker migrates it, for tests that call the SQL functions
 * directly. Simple query mode, so {@code EXPLAIN (GENERIC_PLAN)} can take {@code $n} in its text.
 */
final class SqlSession implements AutoCloseable {
  private final Connection c;

  private SqlSession(Connection c) {
    this.c = c;
  }

  static SqlSession fresh() throws SQLException {
    Config.Database db = TestDatabase.get().fresh();
    Migrations.apply(db);
    var props = new Properties();
    props.setProperty("user", db.user());
    props.setProperty("password", db.password());
    props.setProperty("preferQueryMode", "simple");
    return new SqlSession(DriverManager.getConnection(Migrations.jdbcUrl(db), props));
  }

  void exec(String sql) throws SQLException {
    try (var st = c.createStatement()) {
      st.execute(sql);
    }
  }

  /** Each row's columns as text joined by "|". */
  List<String> rows(String sql) throws SQLException {
    List<String> out = new ArrayList<>();
    try (var st = c.createStatement(); var rs = st.executeQuery(sql)) {
      int n = rs.getMetaData().getColumnCount();
      while (rs.next()) {
        List<String> cols = new ArrayList<>();
        for (int i = 1; i <= n; i++) cols.add(rs.getString(i));
        out.add(String.join("|", cols));
      }
    }
    return out;
  }

  /** The first row's text, or null when there is none. */
  String text(String sql) throws SQLException {
    List<String> r = rows(sql);
    return r.isEmpty() ? null : r.get(0);
  }

  /** The generic plan of {@code sql} without costs, with sequential scans off (the test tables are tiny). */
  String plan(String sql) throws SQLException {
    exec("SET enable_seqscan = off");
    return String.join("\n", rows("EXPLAIN (GENERIC_PLAN, COSTS OFF) " + sql));
  }

  @Override
  public void close() throws SQLException {
    c.close();
  }
}
