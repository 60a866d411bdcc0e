package io.queenvertx.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The layout of the sql module's migrations (issue 19): every function or procedure is defined in exactly one
 * repeatable migration (R__*.sql), once, under a name without a _vN suffix, with statements that can run again;
 * versioned migrations (V*.sql) define none. Reads the files as text: no database.
 */
class SqlFunctionsTest {
  private static final Path DIR = Path.of("..", "sql", "src", "main", "resources", "db", "migration");
  private static final Pattern CREATE = Pattern.compile(
      "(?im)^\\s*CREATE\\s+(OR\\s+REPLACE\\s+)?(FUNCTION|PROCEDURE|TRIGGER)\\s+(?:queen\\.)?(\\w+)");

  @Test
  void eachFunctionIsDefinedOnceInARepeatableMigrationUnderAPlainName() throws IOException {
    Map<String, List<String>> defined = new TreeMap<>();
    List<String> problems = new ArrayList<>();
    for (Path f : files()) {
      String name = f.getFileName().toString();
      Matcher m = CREATE.matcher(withoutComments(Files.readString(f)));
      while (m.find()) {
        String kind = m.group(2).toUpperCase();
        String fn = m.group(3);
        String where = name + " (" + kind + " " + fn + ")";
        if (!kind.equals("TRIGGER")) defined.computeIfAbsent(fn.toLowerCase(), k -> new ArrayList<>()).add(name);
        if (!name.startsWith("R__")) problems.add(where + ": only repeatable migrations define functions");
        if (m.group(1) == null) problems.add(where + ": CREATE without OR REPLACE cannot run again");
        if (fn.matches("(?i).*_v[0-9]+")) problems.add(where + ": a versioned function name");
      }
    }
    defined.forEach((fn, in) -> {
      if (in.size() > 1) problems.add(fn + " is defined " + in.size() + " times: " + in);
    });
    assertThat(defined).as("the scan found the functions").hasSizeGreaterThan(40);
    assertThat(problems).isEmpty();
  }

  private static List<Path> files() throws IOException {
    assertThat(DIR).as("run from the verticles module").isDirectory();
    try (Stream<Path> s = Files.list(DIR)) {
      return s.filter(p -> p.toString().endsWith(".sql")).sorted().toList();
    }
  }

  /** Drops {@code --} comments, so prose that names a statement is not taken for one. */
  private static String withoutComments(String sql) {
    return sql.replaceAll("--[^\\n]*", "");
  }
}
