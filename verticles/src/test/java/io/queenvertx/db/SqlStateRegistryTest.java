package io.queenvertx.db;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The SQLSTATE registry (issue 35): every {@code RAISE EXCEPTION} of the R__*.sql files carries the broker's own code
 * ({@code USING ERRCODE = 'QVnnn'}, or a {@code CASE} choosing between such codes), every such code is a constant of
 * {@link SqlState} and a row of the table "SQLSTATE codes" in docs/ARCHITECTURE.md, and the other way round; and each
 * code is provoked by a test: {@code SqlStateIT} (a method {@code qvNNN...}, through the code's facade) or, for the
 * key-value, timer and lock codes, the SQL tests ({@code qt.raises(..., 'QVnnn')} in sql/src/test/sql, run by
 * {@code SqlScriptsIT}).
 */
class SqlStateRegistryTest {
  private static final Path MIGRATIONS = Path.of("..", "sql", "src", "main", "resources", "db", "migration");
  private static final Path ARCHITECTURE = Path.of("..", "docs", "ARCHITECTURE.md");
  private static final Pattern RAISE = Pattern.compile("(?s)RAISE\\s+EXCEPTION\\s+'(?:[^']|'')*'(.*?);");
  private static final Pattern ERRCODE = Pattern.compile("(?s)USING\\s+ERRCODE\\s*=\\s*(.*)");
  private static final Pattern CODE = Pattern.compile("'(QV[0-9A-Z]{3})'");
  private static final Path SQL_TESTS = Path.of("..", "sql", "src", "test", "sql");
  private static final Path SQL_STATE_IT = Path.of("src", "test", "java", "io", "queenvertx", "db", "SqlStateIT.java");
  /** The families whose codes the SQL tests provoke (their facades come with issue 36): key-value, timers, locks. */
  private static final Set<String> SQL_TESTED_FAMILIES = Set.of("QV8", "QV9");
  /**
   * Codes raised by R__96_kv, R__97_timers and R__98_locks that no {@link SqlState} constant maps yet: the issue 36
   * branches map them with the facades that call those functions (db/TimerProcedures, the key-value and lock
   * facades). The test fails on an entry that has become a constant: delete it then.
   */
  static final Set<String> UNMAPPED_UNTIL_ISSUE_36 = new TreeSet<>(Set.of(
      "QV801", "QV802", "QV803", "QV804", "QV805", "QV806", "QV807", "QV808", "QV809", "QV810", "QV811", "QV812",
      "QV813", "QV814", "QV820", "QV898",
      "QV902", "QV903", "QV904", "QV905", "QV906", "QV907", "QV908", "QV909", "QV910", "QV911", "QV912", "QV913",
      "QV914", "QV950",
      "QV931", "QV932", "QV933", "QV934", "QV935", "QV936", "QV937", "QV938", "QV939", "QV940", "QV941", "QV942",
      "QV949"));

  @Test
  void everyRaiseCarriesARegisteredBrokerCode() throws IOException {
    List<String> missing = new ArrayList<>();
    Set<String> raised = new TreeSet<>();
    int raises = 0;
    try (Stream<Path> s = Files.list(MIGRATIONS)) {
      for (Path f : s.filter(p -> p.getFileName().toString().startsWith("R__")).sorted().toList()) {
        Matcher m = RAISE.matcher(Files.readString(f));
        while (m.find()) {
          raises++;
          Set<String> codes = codes(m.group(1));
          if (codes.isEmpty()) missing.add(f.getFileName() + ": " + m.group().lines().findFirst().orElse(""));
          raised.addAll(codes);
        }
      }
    }
    assertThat(raises).as("the scan found the RAISEs").isGreaterThan(20);
    assertThat(missing).as("RAISE EXCEPTION without the broker's SQLSTATE").isEmpty();
    Set<String> declared = new TreeSet<>();
    for (SqlState s : SqlState.values()) if (s.broker()) declared.add(s.code());
    Set<String> stale = new TreeSet<>(UNMAPPED_UNTIL_ISSUE_36);
    stale.retainAll(declared);
    assertThat(stale).as("UNMAPPED_UNTIL_ISSUE_36 entries that SqlState now maps: delete them").isEmpty();
    Set<String> unmapped = new TreeSet<>(raised);
    unmapped.removeAll(declared);
    assertThat(unmapped).as("codes raised by SQL that SqlState does not map").isEqualTo(
        intersection(UNMAPPED_UNTIL_ISSUE_36, raised));
    assertThat(UNMAPPED_UNTIL_ISSUE_36).as("unmapped codes that SQL still raises").isSubsetOf(raised);
    assertThat(declared).as("broker codes of SqlState that SQL raises").isSubsetOf(raised);
    String doc = Files.readString(ARCHITECTURE);
    for (SqlState s : SqlState.values()) {
      if (!s.broker()) continue;
      assertThat(doc).as("docs/ARCHITECTURE.md registers %s", s).containsPattern(
          "\\| `" + s.code() + "` \\| `[a-z_]+` \\|[^\\n]*\\| `" + s.name() + "` \\|");
    }
  }

  /** Each broker code has its test: a method qvNNN of SqlStateIT, or a qt.raises of the SQL tests. */
  @Test
  void everyBrokerCodeIsProvokedByATest() throws IOException {
    String it = Files.readString(SQL_STATE_IT);
    StringBuilder sql = new StringBuilder();
    try (Stream<Path> s = Files.list(SQL_TESTS)) {
      for (Path f : s.filter(p -> p.toString().endsWith(".sql")).sorted().toList()) sql.append(Files.readString(f));
    }
    Set<String> codes = new TreeSet<>(UNMAPPED_UNTIL_ISSUE_36);
    for (SqlState s : SqlState.values()) if (s.broker()) codes.add(s.code());
    List<String> untested = new ArrayList<>();
    for (String code : codes) {
      boolean sqlTested = SQL_TESTED_FAMILIES.contains(code.substring(0, 3));
      boolean tested = sqlTested
          ? sql.toString().contains("SQLSTATE '" + code + "'") || Arrays.stream(sql.toString().split(";"))
              .anyMatch(st -> st.contains("qt.raises(") && st.strip().endsWith("'" + code + "')"))
          : Pattern.compile("void\\s+" + code.toLowerCase() + "[A-Z]\\w*\\(").matcher(it).find();
      if (!tested) {
        untested.add(code + (sqlTested ? ": no qt.raises(..., '" + code + "') in sql/src/test/sql"
            : ": no SqlStateIT." + code.toLowerCase() + "..."));
      }
    }
    assertThat(codes).as("the registry's codes").hasSizeGreaterThan(50);
    assertThat(untested).isEmpty();
  }

  /** The broker codes an {@code ERRCODE = ...} clause names: one, or the branches of a CASE. */
  private static Set<String> codes(String tail) {
    Set<String> out = new TreeSet<>();
    Matcher e = ERRCODE.matcher(tail);
    if (!e.find()) return out;
    Matcher c = CODE.matcher(e.group(1));
    while (c.find()) out.add(c.group(1));
    return out;
  }

  private static Set<String> intersection(Set<String> a, Set<String> b) {
    Set<String> out = new TreeSet<>(a);
    out.retainAll(b);
    return out;
  }

  @Test
  void aCodeMapsToItsConstantElseToItsClass() {
    assertThat(SqlState.ofCode("QV103")).isEqualTo(SqlState.PUSH_PLAINTEXT_FOR_ENCRYPTED);
    assertThat(SqlState.ofCode("23505")).isEqualTo(SqlState.UNIQUE_VIOLATION);
    assertThat(SqlState.ofCode("23503")).isEqualTo(SqlState.INTEGRITY_CONSTRAINT_VIOLATION);
    assertThat(SqlState.ofCode("22P02")).isEqualTo(SqlState.INVALID_TEXT_REPRESENTATION);
    assertThat(SqlState.ofCode("22001")).isEqualTo(SqlState.DATA_EXCEPTION);
    assertThat(SqlState.ofCode("57014")).isEqualTo(SqlState.QUERY_CANCELED);
    assertThat(SqlState.ofCode("25006")).isEqualTo(SqlState.READ_ONLY_SQL_TRANSACTION);
    assertThat(SqlState.ofCode("08006")).isEqualTo(SqlState.CONNECTION_EXCEPTION);
    assertThat(SqlState.ofCode("54000")).isEqualTo(SqlState.PROGRAM_LIMIT_EXCEEDED);
    assertThat(SqlState.ofCode("40P01")).isEqualTo(SqlState.OTHER);
    assertThat(SqlState.ofCode("QV999")).isEqualTo(SqlState.OTHER);
    assertThat(SqlState.ofCode(null)).isEqualTo(SqlState.NONE);
    assertThat(SqlState.of(new RuntimeException("ERROR: QCRYPT plaintext (QV103)"))).isEqualTo(SqlState.NONE);
    var wrapped = new RuntimeException(new io.vertx.pgclient.PgException("x", "ERROR", "QV107", null));
    assertThat(SqlState.of(wrapped)).isEqualTo(SqlState.PUSH_PARTITION_STALE);
    assertThat(SqlState.codeOf(wrapped)).isEqualTo("QV107");
    assertThat(SqlState.errorText(wrapped)).isEqualTo("x");
  }
}
