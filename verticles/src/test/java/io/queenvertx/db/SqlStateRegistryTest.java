package io.queenvertx.db;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The SQLSTATE registry (issue 35): every {@code RAISE EXCEPTION} of the R__*.sql files carries the broker's own code
 * ({@code USING ERRCODE = 'QVnnn'}), every such code is a constant of {@link SqlState} and a row of the table
 * "SQLSTATE codes" in docs/ARCHITECTURE.md, and the other way round.
 */
class SqlStateRegistryTest {
  private static final Path MIGRATIONS = Path.of("..", "sql", "src", "main", "resources", "db", "migration");
  private static final Path ARCHITECTURE = Path.of("..", "docs", "ARCHITECTURE.md");
  private static final Pattern RAISE = Pattern.compile("(?s)RAISE\\s+EXCEPTION\\s+'(?:[^']|'')*'(.*?);");
  private static final Pattern ERRCODE = Pattern.compile("USING\\s+ERRCODE\\s*=\\s*'(QV[0-9A-Z]{3})'");

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
          Matcher code = ERRCODE.matcher(m.group(1));
          if (code.find()) raised.add(code.group(1));
          else missing.add(f.getFileName() + ": " + m.group().lines().findFirst().orElse(""));
        }
      }
    }
    assertThat(raises).as("the scan found the RAISEs").isGreaterThan(20);
    assertThat(missing).as("RAISE EXCEPTION without the broker's SQLSTATE").isEmpty();
    Set<String> declared = new TreeSet<>();
    for (SqlState s : SqlState.values()) if (s.broker()) declared.add(s.code());
    assertThat(raised).as("codes raised by SQL = broker codes of SqlState").isEqualTo(declared);
    String doc = Files.readString(ARCHITECTURE);
    for (SqlState s : SqlState.values()) {
      if (!s.broker()) continue;
      assertThat(doc).as("docs/ARCHITECTURE.md registers %s", s).containsPattern(
          "\\| `" + s.code() + "` \\| `[a-z_]+` \\|[^\\n]*\\| `" + s.name() + "` \\|");
    }
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
