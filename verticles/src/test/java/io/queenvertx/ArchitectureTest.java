package io.queenvertx;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The code's layout rules (issues 19 and 35), read from the sources as text (no database):
 * <ul>
 *   <li>one owner per table: table SQL ({@code FROM / JOIN / INTO / UPDATE / DELETE FROM queen.<table>}) appears only in
 *       the class {@link #JAVA_OWNERS} names for that table; a table of {@link #PROCEDURE_TABLES} has no Java owner
 *       and is reached through {@code queen.<function>(...)} calls, which are always fine;</li>
 *   <li>no class over {@value #MAX_LINES} lines in the main code of any module: the broker, the codec, qvctl and
 *       deploy/bench;</li>
 *   <li>layers (issue 35, docs/ARCHITECTURE.md "Layers"): a class names, by import or by full name in its code, only
 *       classes of its own layer or of a layer below ({@link #LAYERS}); the kernel names nothing of the broker; the
 *       webhook API does not reach into the route handlers; no cycle between packages;</li>
 *   <li>no {@code Pool}, {@code Tuple}, {@code SqlConnection}, JDBC or SQL text outside the database layer ({@code db},
 *       the procedure facades and stores) and the composition root ({@code boot}: pool creation, migrations), in the
 *       broker, the codec and qvctl ({@link #SQL_FREE_OF});</li>
 *   <li>no test of an exception's message text in main code, and no branch on it in tests: errors are told apart by
 *       type or SQLSTATE ({@code db.SqlState}).</li>
 * </ul>
 * Each rule has a self-test ({@link #theRulesSeeWhatTheyForbid}) that feeds it bad snippets and checks it finds them.
 * {@link #PENDING} and {@link #PENDING_SPLIT} list the documented exceptions; each entry must still be true, so the
 * test fails on a stale entry and whoever removes the exception deletes it.
 */
class ArchitectureTest {
  private static final Path MAIN = Path.of("src", "main", "java");
  /** Every Java source scanned for the layer rules: the broker, the codec, the bench, the clients' tests, qvctl. */
  private static final List<Path> ALL_ROOTS = List.of(MAIN, Path.of("..", "shared-codec", "src", "main", "java"),
      Path.of("..", "deploy", "bench", "src", "main", "java"), Path.of("..", "clients-test"),
      Path.of("..", "cli", "src", "main", "java"));
  /** The main code of every module, each class held to {@value #MAX_LINES} lines: ALL_ROOTS but the clients' tests. */
  private static final List<Path> MAIN_ROOTS = List.of(ALL_ROOTS.get(0), ALL_ROOTS.get(1), ALL_ROOTS.get(2),
      ALL_ROOTS.get(4));
  /** The tests of every module, read by the message rule too. */
  private static final List<Path> TEST_ROOTS = List.of(Path.of("src", "test", "java"),
      Path.of("..", "shared-codec", "src", "test", "java"), Path.of("..", "deploy", "bench", "src", "test", "java"),
      Path.of("..", "cli", "src", "test", "java"));
  /**
   * Package (below {@code io.queenvertx}) -> layer, bottom up; a package takes the rank of its longest listed prefix.
   * kernel (configuration, the error types, the shared constants) and the codec module at the bottom; then the
   * support packages (event-bus messages, JSON, metrics); the database (pools, procedure facades, stores, SQLSTATEs);
   * what a node hands its parts ({@code node.NodeContext}); the domain verticles and services; the HTTP server's
   * plumbing; the route handlers and the webhook API; the HTTP verticle that assembles them; the composition root.
   */
  static final Map<String, Integer> LAYERS = Map.ofEntries(
      Map.entry("kernel", 0), Map.entry("codec", 0),
      Map.entry("bus", 1), Map.entry("json", 1), Map.entry("metrics", 1),
      Map.entry("db", 2),
      Map.entry("node", 3),
      Map.entry("auth", 4), Map.entry("tenancy", 4), Map.entry("log", 4), Map.entry("consumer", 4),
      Map.entry("decoder", 4), Map.entry("dlq", 4), Map.entry("maintenance", 4), Map.entry("webhook", 4),
      Map.entry("stats", 4), Map.entry("inspection", 4), Map.entry("state", 4), Map.entry("timers", 4),
      Map.entry("http.server", 5),
      Map.entry("http.routes", 6), Map.entry("webhook.api", 6),
      Map.entry("http", 7),
      Map.entry("boot", 8),
      Map.entry("bench", 9), Map.entry("cli", 9));
  /** Package -> packages it must not name though they are not above it. */
  static final Map<String, Set<String>> FORBIDDEN = Map.of(
      "kernel", Set.of("codec"),
      "webhook.api", Set.of("http.routes"));
  /**
   * Package -> the only packages it may name besides its own: the load generator and qvctl are clients of the HTTP
   * API, not parts of the broker (the bench may use the codec module).
   */
  static final Map<String, Set<String>> ONLY = Map.of(
      "bench", Set.of("codec"),
      "cli", Set.of());
  /** Where a pool, a tuple and SQL text may appear: the database layer and the composition root. */
  static final Set<String> SQL_PACKAGES = Set.of("db", "boot");
  /**
   * The load generator (deploy/bench) is no part of the broker: it seeds and measures PostgreSQL with JDBC (pg_stat
   * counters, {@code --dead-letter-via sql}), so the SQL rule reads the broker, the codec and qvctl, not the bench.
   */
  static final String SQL_FREE_OF = "bench";
  /** A broker class named in code: an import, a static import, a package's wildcard import or a full name. */
  private static final Pattern NAMED = Pattern.compile(
      "\\bio\\.queenvertx\\.((?:[a-z][a-z0-9]*\\.)*[a-z][a-z0-9]*)\\.(?:[A-Z]\\w*|\\*)");
  /**
   * A PostgreSQL client type or call: the Vert.x SQL client's pool, tuple, connection, client and prepared query
   * (by import, wildcard import or full name), the PostgreSQL client's pool and connection, JDBC's connection and
   * statements, or a call that runs SQL.
   */
  private static final Pattern SQL_CLIENT = Pattern.compile(
      "\\b(?:io\\.vertx\\.sqlclient\\.(?:Pool|Tuple|SqlConnection|SqlClient|PreparedQuery|\\*)"
          + "|io\\.vertx\\.pgclient\\.(?:PgPool|PgBuilder|PgConnection)\\b"
          + "|java\\.sql\\.(?:Connection|DriverManager|Statement|PreparedStatement|\\*)"
          + "|Tuple\\.(?:of|tuple|from|wrap)\\(|\\.preparedQuery\\(|\\.withTransaction\\()");
  /** SQL text in a string literal (any case): a statement's first words, or a call of a function of the schema. */
  private static final Pattern SQL_TEXT = Pattern.compile(
      "(?i)\"\\s*(?:SELECT|INSERT\\s+INTO|UPDATE\\s+queen|DELETE\\s+FROM|WITH\\s+\\w+\\s+AS)\\b"
          + "|(?-i:\"[^\"\\n]*\\bqueen\\.\\w+\\s*\\()");
  private static final Pattern MESSAGE_TEST = Pattern.compile(
      "get(?:Error)?Message\\(\\)\\)?\\s*\\.\\s*(?:contains|startsWith|endsWith|matches|equals|indexOf)\\(|startsWith\\(\"Q");
  static final int MAX_LINES = 400;
  /**
   * Tables whose SQL lives only in the procedures of the sql module's R__*.sql files: no Java class holds it, Java calls
   * {@code queen.<function>(...)}. docs/ARCHITECTURE.md ("Who owns each table") names the procedure families.
   */
  static final Set<String> PROCEDURE_TABLES = Set.of("queues", "log_partitions", "log_segments",
      "log_consumers", "log_dlq", "consumer_groups_metadata", "consumer_watermarks", "retention_history",
      "maintenance_leases", "stats_node_minute", "stats_queue_minute", "stats_node_totals", "message_traces",
      "message_trace_names", "kv_entries", "kv_lock_fences", "timers");

  /** Tables owned by one Java store class -> that class (path below io/queenvertx, no ".java"). */
  static final Map<String, String> JAVA_OWNERS = Map.of(
      "system_state", "db/SystemState",
      "dlq_redrive_tasks", "db/RedriveTasks",
      "webhook_endpoints", "db/WebhookStore",
      "webhook_deliveries", "db/WebhookStore");

  /**
   * Class -> tables it reads outside their owner, each a documented exception (docs/ARCHITECTURE.md): the webhook
   * store links a dead-lettered delivery to its newest log_dlq row in a read-only subquery.
   */
  static final Map<String, Set<String>> PENDING = Map.of(
      "db/WebhookStore", Set.of("log_dlq"));

  /** Classes allowed over the limit: none. */
  static final Set<String> PENDING_SPLIT = Set.of();

  /** Table SQL; the table name must not be followed by "(" after FROM/JOIN, which is a function call. */
  private static final Pattern TABLE_SQL = Pattern.compile(
      "(?i)\\b(?:(FROM|JOIN|UPDATE)\\s+queen\\.(\\w+)\\b(?!\\s*\\()|INTO\\s+queen\\.(\\w+))");

  @Test
  void eachTableIsTouchedOnlyByItsOwner() throws IOException {
    List<String> problems = new ArrayList<>();
    Map<String, Set<String>> seen = new TreeMap<>();
    for (Path f : sources()) {
      String cls = className(f);
      for (String table : tablesTouched(Files.readString(f))) {
        seen.computeIfAbsent(cls, k -> new TreeSet<>()).add(table);
        Set<String> owners = JAVA_OWNERS.containsKey(table) ? Set.of(JAVA_OWNERS.get(table))
            : PROCEDURE_TABLES.contains(table) ? Set.of() : null;
        if (owners == null) {
          problems.add(cls + " touches queen." + table + ", which has no declared owner: add it to "
              + "PROCEDURE_TABLES or JAVA_OWNERS and to docs/ARCHITECTURE.md");
        } else if (!owners.contains(cls) && !PENDING.getOrDefault(cls, Set.of()).contains(table)) {
          problems.add(cls + " touches queen." + table + ", owned by "
              + (owners.isEmpty() ? "the procedures (R__*.sql): call one" : owners + ": call it"));
        }
      }
    }
    PENDING.forEach((cls, tables) -> {
      for (String t : tables) {
        if (!seen.getOrDefault(cls, Set.of()).contains(t)) {
          problems.add("stale PENDING entry: " + cls + " no longer touches queen." + t + "; delete the entry");
        }
      }
    });
    assertThat(seen).as("the scan found table SQL (system_state's owner)").containsKey("db/SystemState");
    assertThat(problems).isEmpty();
  }

  @Test
  void noClassIsOverTheLineLimit() throws IOException {
    List<String> problems = new ArrayList<>();
    Set<String> over = new TreeSet<>();
    List<Path> files = new ArrayList<>();
    for (Path root : MAIN_ROOTS) files.addAll(javaUnder(root));
    assertThat(files).as("the scan found the broker, the codec, the bench and qvctl")
        .anyMatch(f -> f.toString().contains("bench")).anyMatch(f -> f.toString().contains("cli"))
        .anyMatch(f -> f.toString().contains("shared-codec")).hasSizeGreaterThan(200);
    for (Path f : files) {
      String cls = className(f);
      String problem = lineProblem(cls, Files.readAllLines(f).size());
      if (problem != null) {
        over.add(cls);
        if (!PENDING_SPLIT.contains(cls)) problems.add(problem);
      }
    }
    for (String cls : PENDING_SPLIT) {
      if (!over.contains(cls)) problems.add("stale PENDING_SPLIT entry: " + cls + " is no longer over the limit");
    }
    assertThat(problems).isEmpty();
  }

  @Test
  void noClassNamesALayerAboveItsOwn() throws IOException {
    List<String> problems = new ArrayList<>();
    Map<String, Set<String>> graph = new TreeMap<>();
    int scanned = 0;
    for (Path f : allSources()) {
      String source = Files.readString(f);
      String from = packageOf(source);
      if (from == null) continue;
      scanned++;
      for (String to : named(source)) if (!to.equals(from)) graph.computeIfAbsent(from, k -> new TreeSet<>()).add(to);
      problems.addAll(layerProblems(f.getFileName().toString(), source));
    }
    assertThat(scanned).as("the scan found the sources").isGreaterThan(150);
    problems.addAll(cycles(graph));
    assertThat(problems).isEmpty();
  }

  @Test
  void noPoolTupleOrSqlOutsideTheDatabaseLayer() throws IOException {
    List<String> problems = new ArrayList<>();
    int scanned = 0;
    for (Path f : allSources()) {
      String source = Files.readString(f);
      String pkg = packageOf(source);
      if (pkg == null || SQL_PACKAGES.contains(pkg) || pkg.equals(SQL_FREE_OF)) continue;
      scanned++;
      problems.addAll(sqlProblems(className(f), source));
    }
    assertThat(scanned).as("the scan found the sources").isGreaterThan(150);
    assertThat(problems).isEmpty();
  }

  @Test
  void noExceptionIsToldApartByItsMessage() throws IOException {
    List<String> problems = new ArrayList<>();
    for (Path f : allSources()) problems.addAll(messageProblems(f.getFileName().toString(), Files.readString(f)));
    assertThat(problems).isEmpty();
  }

  /**
   * Tests do not tell a failure apart by its text either: a branch, a filter or a retry on {@code getMessage()}'s
   * text is refused there too (an assertion on a kept message, {@code assertThat(e.getMessage()).contains(..)},
   * checks the text, it does not classify the failure, and is allowed).
   */
  @Test
  void noTestTellsAnExceptionApartByItsMessage() throws IOException {
    List<String> problems = new ArrayList<>();
    int scanned = 0;
    for (Path root : TEST_ROOTS) {
      for (Path f : javaUnder(root)) {
        scanned++;
        problems.addAll(testMessageProblems(f.getFileName().toString(), Files.readString(f)));
      }
    }
    assertThat(scanned).as("the scan found the tests").isGreaterThan(150);
    assertThat(problems).isEmpty();
  }

  @Test
  void theRulesSeeWhatTheyForbid() {
    // full names count like imports; comments and string literals do not
    assertThat(named("""
        package io.queenvertx.db;
        import io.queenvertx.kernel.Config;
        import static io.queenvertx.metrics.StatsCounters.*;
        class X { io.queenvertx.log.LogWriterVerticle w; String s = "io.queenvertx.boot.Node"; }
        // io.queenvertx.http.routes.PushRoutes
        """)).containsExactlyInAnyOrder("kernel", "metrics", "log");
    assertThat(layerProblem("db", "log")).contains("above");
    assertThat(layerProblem("metrics", "stats")).contains("above");
    assertThat(layerProblem("kernel", "codec")).contains("must not");
    assertThat(layerProblem("webhook.api", "http.routes")).contains("must not");
    assertThat(layerProblem("http.routes", "http.server")).isNull();
    // a full name in code (no import) of an upper layer, and a wildcard import, are found in a lower layer's class
    assertThat(layerProblems("Config.java", """
        package io.queenvertx.kernel;
        class Config { Object r = new io.queenvertx.http.routes.PushRoutes(null); }
        """)).singleElement().asString().contains("http.routes").contains("above");
    assertThat(layerProblems("Database.java", """
        package io.queenvertx.db;
        import io.queenvertx.consumer.*;
        import io.queenvertx.kernel.Config;
        class Database { }
        """)).singleElement().asString().contains("consumer");
    assertThat(layerProblems("Frame.java", """
        package io.queenvertx.codec;
        class Frame { /* io.queenvertx.boot.Node */ String s = "io.queenvertx.boot.Node"; }
        """)).isEmpty();
    assertThat(layerProblems("Run.java", "package io.queenvertx.bench;\nclass Run { io.queenvertx.db.Database d; }"))
        .singleElement().asString().contains("must not");
    assertThat(layerProblem("log", "consumer")).isNull();
    assertThat(layerProblem("bench", "log")).contains("must not");
    assertThat(layerProblem("cli", "codec")).contains("must not");
    assertThat(layerProblem("bench", "kernel")).contains("must not");
    assertThat(layerProblem("bench", "codec.api")).isNull();
    assertThat(cycles(Map.of("log", Set.of("consumer"), "consumer", Set.of("dlq"), "dlq", Set.of("log"))))
        .singleElement().asString().contains("consumer").contains("dlq").contains("log");
    assertThat(sqlProblems("http/routes/X", """
        import io.vertx.sqlclient.Tuple;
        class X { void f() { pool.preparedQuery("SELECT queen.f($1)").execute(Tuple.of(1)); } }
        """)).hasSize(4);
    assertThat(sqlProblems("http/routes/X", "class X { String s = \"SELECT is a word\"; }")).hasSize(1);
    assertThat(sqlProblems("log/X", """
        import io.vertx.sqlclient.*;
        class X {
          io.vertx.sqlclient.Pool pool;
          String a = "select queen.log_ack($1)";
          String b = "SELECT * FROM " + "queen.log_pop_many($1, $2)";
          String c = "queen.log.push";
          String d = "  with t as (select 1) select * from t";
          java.sql.Connection jdbc;
        }
        """)).hasSize(7);
    assertThat(sqlProblems("log/X", "class X { String a = \"queen.landed\"; String b = \"DELETE\"; }")).isEmpty();
    assertThat(lineProblem("bench/Bench", MAX_LINES + 1)).contains("bench/Bench").contains("401 lines");
    assertThat(lineProblem("bench/Bench", MAX_LINES)).isNull();
    assertThat(messageProblems("X", """
        if (e.getMessage().contains("QPUSH bad")) {}
        if (String.valueOf(e.getMessage()).startsWith("could not")) {}
        if (pg.getErrorMessage().startsWith("QCRYPT")) {}
        if (text.startsWith("QDUP")) {}
        if ("25006".equals(pg.getSqlState())) {}
        """)).hasSize(5);
    assertThat(testMessageProblems("XIT.java", """
        if (e.getMessage().contains("QPUSH")) retry();
        boolean dup = failures.stream().anyMatch(t -> t.getMessage().startsWith("QDUP"));
        String s = pg.getErrorMessage() .contains("x") ? "a" : "b";
        assertThat(e.getMessage()).contains("kept");
        assertThat(e).hasMessageContaining("kept");
        env.keySet().removeIf(k -> k.startsWith("QUEEN_"));
        String block = \"""
            if (e.getMessage().contains("in a text block")) {}
            \""";
        """)).hasSize(3);
  }

  /** The packages (below io.queenvertx) a source names outside comments and string literals. */
  static Set<String> named(String source) {
    String code = stripped(source).replaceAll("(?m)^\\s*package [^;]+;", "");
    Set<String> out = new TreeSet<>();
    Matcher m = NAMED.matcher(code);
    while (m.find()) out.add(m.group(1));
    return out;
  }

  /** Each name of a class above the source's own layer (or forbidden to it), as a problem. */
  static List<String> layerProblems(String file, String source) {
    String from = packageOf(source);
    List<String> out = new ArrayList<>();
    if (from == null) return out;
    for (String to : named(source)) {
      String problem = to.equals(from) ? null : layerProblem(from, to);
      if (problem != null) out.add(file + " (" + from + "): " + problem);
    }
    return out;
  }

  /** Why a class of {@code lines} lines is too long, or null. */
  static String lineProblem(String cls, long lines) {
    return lines > MAX_LINES ? cls + " has " + lines + " lines (at most " + MAX_LINES + ")" : null;
  }

  /** Why {@code from} may not name {@code to}, or null when it may. */
  static String layerProblem(String from, String to) {
    if (FORBIDDEN.getOrDefault(from, Set.of()).contains(to)) return "must not name " + to;
    if (ONLY.containsKey(from) && ONLY.get(from).stream().noneMatch(p -> to.equals(p) || to.startsWith(p + "."))) {
      return "must not name " + to + " (only " + ONLY.get(from) + ")";
    }
    Integer a = rank(from);
    Integer b = rank(to);
    if (a == null) return "package " + from + " has no layer: add it to LAYERS and to docs/ARCHITECTURE.md";
    if (b == null) return "names " + to + ", which has no layer: add it to LAYERS and to docs/ARCHITECTURE.md";
    return b > a ? "names " + to + " (layer " + b + "), above its own layer " + a : null;
  }

  private static Integer rank(String pkg) {
    for (String p = pkg; ; p = p.substring(0, p.lastIndexOf('.'))) {
      if (LAYERS.containsKey(p)) return LAYERS.get(p);
      if (p.indexOf('.') < 0) return null;
    }
  }

  /** Each cycle of the package graph (a strongly connected component of two or more packages). */
  static List<String> cycles(Map<String, Set<String>> graph) {
    List<String> out = new ArrayList<>();
    Set<String> done = new TreeSet<>();
    for (String start : new TreeSet<>(graph.keySet())) {
      if (done.contains(start)) continue;
      Set<String> reach = reachable(graph, start);
      Set<String> scc = new TreeSet<>();
      for (String n : reach) if (reachable(graph, n).contains(start)) scc.add(n);
      scc.add(start);
      done.addAll(scc);
      if (scc.size() > 1) out.add("package cycle: " + scc);
    }
    return out;
  }

  private static Set<String> reachable(Map<String, Set<String>> graph, String from) {
    Set<String> seen = new TreeSet<>();
    List<String> todo = new ArrayList<>(graph.getOrDefault(from, Set.of()));
    while (!todo.isEmpty()) {
      String n = todo.remove(todo.size() - 1);
      if (seen.add(n)) todo.addAll(graph.getOrDefault(n, Set.of()));
    }
    return seen;
  }

  static List<String> sqlProblems(String cls, String source) {
    List<String> out = new ArrayList<>();
    String code = source.replaceAll("(?s)/\\*.*?\\*/", "").replaceAll("(?m)//.*$", "");
    find(SQL_CLIENT, code, out, g -> cls + ": " + g + " outside the database layer: call a procedure facade");
    find(SQL_TEXT, code, out, g -> cls + ": SQL text " + g + " outside the database layer");
    return out;
  }

  static List<String> messageProblems(String file, String source) {
    List<String> out = new ArrayList<>();
    String code = source.replaceAll("(?s)/\\*.*?\\*/", "").replaceAll("(?m)^\\s*//.*$", "");
    find(MESSAGE_TEST, code, out, g -> file + ": " + g + TELLS_BY_TEXT);
    if (!file.equals("SqlState.java") && code.contains("getSqlState(")) {
      out.add(file + ": reads a raw SQLSTATE: map it in db.SqlState, the one enum of codes");
    }
    return out;
  }

  /** A test of a failure's text in a test (not an assertion on it): a call on getMessage()'s result. */
  private static final Pattern TEST_MESSAGE_TEST = Pattern.compile(
      "get(?:Error|Localized)?Message\\(\\)\\s*\\.\\s*(?:contains|startsWith|endsWith|matches|equals|indexOf)\\(");

  static List<String> testMessageProblems(String file, String source) {
    List<String> out = new ArrayList<>();
    find(TEST_MESSAGE_TEST, stripped(source), out, g -> file + ": " + g + TELLS_BY_TEXT);
    return out;
  }

  private static final String TELLS_BY_TEXT = " tells an error by its text: use its type or SqlState";

  /** Adds the problem {@code problem} makes of each match of {@code pattern} in {@code code}. */
  private static void find(Pattern pattern, String code, List<String> out, Function<String, String> problem) {
    Matcher m = pattern.matcher(code);
    while (m.find()) out.add(problem.apply(m.group()));
  }

  /** The source without comments, and with every string literal, character literal and text block emptied. */
  static String stripped(String source) {
    StringBuilder out = new StringBuilder(source.length());
    int i = 0;
    int n = source.length();
    while (i < n) {
      char c = source.charAt(i);
      if (source.startsWith("//", i)) {
        while (i < n && source.charAt(i) != '\n') i++;
      } else if (source.startsWith("/*", i)) {
        int end = source.indexOf("*/", i + 2);
        i = end < 0 ? n : end + 2;
        out.append(' ');
      } else if (source.startsWith("\"\"\"", i)) {
        i = afterQuoted(source, i + 3, "\"\"\"");
        out.append("\"\"");
      } else if (c == '"' || c == '\'') {
        i = afterQuoted(source, i + 1, String.valueOf(c));
        out.append(c).append(c);
      } else {
        out.append(c);
        i++;
      }
    }
    return out.toString();
  }

  /** The index after the closing {@code end} of a literal whose text starts at {@code i} (escapes skipped). */
  private static int afterQuoted(String source, int i, String end) {
    while (i < source.length() && !source.startsWith(end, i)) i += source.charAt(i) == '\\' ? 2 : 1;
    return Math.min(source.length(), i + end.length());
  }

  @Test
  void theScanRecognisesTableSqlAndFunctionCalls() {
    assertThat(tablesTouched("""
        String a = "SELECT x FROM queen.log_segments s JOIN queen.queues q ON q.id = s.qid";
        String b = "INSERT INTO queen.system_state(key, value) VALUES ($1, $2)";
        String c = "update  queen.dlq_redrive_tasks SET a = 1";
        String d = "DELETE FROM queen.log_dlq WHERE id = $1";
        String e = "SELECT * FROM queen.log_segment_at($1, $2)";
        String f = "SELECT queen.dlq_redrive_record($1) FROM queen.partition_tenant ($1)";
        // SELECT FROM queen.log_txns in a comment does not count
        /** nor in javadoc: JOIN queen.log_consumers */
        """))
        .containsExactlyInAnyOrder("log_segments", "queues", "system_state", "dlq_redrive_tasks", "log_dlq");
  }

  /** The queen.* tables a source file holds SQL for (comments ignored). */
  static Set<String> tablesTouched(String source) {
    String code = source.replaceAll("(?s)/\\*.*?\\*/", "").replaceAll("(?m)^\\s*//.*$", "");
    Set<String> tables = new TreeSet<>();
    Matcher m = TABLE_SQL.matcher(code);
    while (m.find()) tables.add((m.group(2) != null ? m.group(2) : m.group(3)).toLowerCase());
    return tables;
  }

  private static List<Path> sources() throws IOException {
    assertThat(MAIN).as("run from the verticles module").isDirectory();
    try (Stream<Path> s = Files.walk(MAIN)) {
      List<Path> files = s.filter(p -> p.toString().endsWith(".java")).sorted().toList();
      assertThat(files).as("the scan found the sources").hasSizeGreaterThan(50);
      return files;
    }
  }

  private static List<Path> allSources() throws IOException {
    List<Path> out = new ArrayList<>();
    for (Path root : ALL_ROOTS) out.addAll(javaUnder(root));
    return out;
  }

  private static List<Path> javaUnder(Path root) throws IOException {
    if (!Files.isDirectory(root)) return List.of();
    try (Stream<Path> s = Files.walk(root)) {
      return s.filter(p -> p.toString().endsWith(".java") && !p.toString().contains("/target/")
          && !p.toString().contains("/node_modules/")).sorted().toList();
    }
  }

  /** The package below io.queenvertx of a source, from its package line ({@code http.routes}), or null. */
  private static String packageOf(String source) {
    Matcher m = Pattern.compile("(?m)^package io\\.queenvertx\\.([\\w.]+);").matcher(source);
    return m.find() ? m.group(1) : null;
  }

  /** {@code src/main/java/io/queenvertx/boot/Node.java} -> {@code boot/Node}. */
  private static String className(Path f) {
    String rel = f.toString().replace('\\', '/');
    return rel.replaceFirst("^.*?io/queenvertx/", "").replaceFirst("\\.java$", "");
  }
}
