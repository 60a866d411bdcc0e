package io.queenvertx.boot;

import io.queenvertx.kernel.Config;
import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.TestDatabase;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Runs the SQL test scripts of the sql module ({@code sql/src/test/sql/NN_*.sql}, in name order, one database) against
 * a schema built by {@link Migrations#apply}, the code the broker boots with, so they test the functions that run.
 * Each script asserts with DO blocks that RAISE on failure; every statement runs in its own transaction, as psql runs
 * a file (a script may rely on that: 08_concurrency commits its setup before a second session looks).
 */
class SqlScriptsIT {
  private static final Path DIR = Path.of("..", "sql", "src", "test", "sql");
  private static final Pattern DOLLAR_TAG = Pattern.compile("\\$[A-Za-z_]*\\$");

  @TestFactory
  List<DynamicTest> everyScriptPasses() throws Exception {
    assertThat(DIR).as("run from the verticles module").isDirectory();
    List<Path> scripts;
    try (Stream<Path> s = Files.list(DIR)) {
      scripts = s.filter(p -> p.getFileName().toString().matches("[0-9]{2}_.*\\.sql")).sorted().toList();
    }
    assertThat(scripts).hasSizeGreaterThan(10);
    Config.Database db = TestDatabase.get().fresh();
    Migrations.apply(db);
    Connection c = DriverManager.getConnection(Migrations.jdbcUrl(db), db.user(), db.password());
    List<DynamicTest> tests = new ArrayList<>();
    for (int i = 0; i < scripts.size(); i++) {
      Path script = scripts.get(i);
      boolean last = i == scripts.size() - 1;
      tests.add(DynamicTest.dynamicTest(script.getFileName().toString(), () -> {
        try {
          run(c, script);
        } finally {
          if (last) c.close();
        }
      }));
    }
    return tests;
  }

  private static void run(Connection c, Path script) throws IOException, SQLException {
    for (String statement : statements(Files.readString(script))) {
      try (var st = c.createStatement()) {
        st.execute(statement);
      } catch (SQLException e) {
        throw new AssertionError(script.getFileName() + ": " + e.getMessage() + "\n-- in --\n" + statement, e);
      }
    }
  }

  /** Splits a script at the semicolons outside comments, quotes and dollar quotes; drops empty statements. */
  static List<String> statements(String sql) {
    List<String> out = new ArrayList<>();
    int start = 0;
    int i = 0;
    while (i < sql.length()) {
      char ch = sql.charAt(i);
      if (sql.startsWith("--", i)) {
        int eol = sql.indexOf('\n', i);
        i = eol < 0 ? sql.length() : eol;
      } else if (sql.startsWith("/*", i)) {
        i = sql.indexOf("*/", i) + 2;
      } else if (ch == '\'') {
        i = endOfQuote(sql, i);
      } else if (ch == '$' && dollarTag(sql, i) != null) {
        String tag = dollarTag(sql, i);
        i = sql.indexOf(tag, i + tag.length()) + tag.length();
      } else {
        if (ch == ';') {
          add(out, sql.substring(start, i));
          start = i + 1;
        }
        i++;
      }
    }
    add(out, sql.substring(start));
    return out;
  }

  private static int endOfQuote(String sql, int open) {
    int j = open + 1;
    while (true) {
      j = sql.indexOf('\'', j);
      if (j < 0) return sql.length();
      if (j + 1 < sql.length() && sql.charAt(j + 1) == '\'') {
        j += 2;
      } else {
        return j + 1;
      }
    }
  }

  private static String dollarTag(String sql, int at) {
    Matcher m = DOLLAR_TAG.matcher(sql).region(at, sql.length());
    return m.lookingAt() ? m.group() : null;
  }

  private static void add(List<String> out, String statement) {
    String code = statement.replaceAll("--[^\\n]*", "").strip();
    if (!code.isEmpty()) out.add(statement.strip());
  }
}
