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
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The code's layout rules (issue 19), read from verticles/src/main/java as text (no database):
 * <ul>
 *   <li>one owner per table: table SQL ({@code FROM / JOIN / INTO / UPDATE / DELETE FROM queen.<table>}) appears only in
 *       the class {@link #JAVA_OWNERS} names for that table; a table of {@link #PROCEDURE_TABLES} has no Java owner
 *       and is reached through {@code queen.<function>(...)} calls, which are always fine;</li>
 *   <li>no class over {@value #MAX_LINES} lines, in the broker and in deploy/bench;</li>
 *   <li>layers (issue 35, docs/ARCHITECTURE.md "Layers"): a class names, by import or by full name in its code, only
 *       classes of its own layer or of a layer below ({@link #LAYERS}); the kernel names nothing of the broker; the
 *       webhook API does not reach into the route handlers; no cycle between packages;</li>
 *   <li>no {@code Pool}, {@code Tuple}, {@code SqlConnection} or SQL text outside the database layer ({@code db}, the
 *       procedure facades and stores) and the composition root ({@code boot}: pool creation, migrations);</li>
 *   <li>no test of an exception's message text: errors are told apart by type or SQLSTATE ({@code db.SqlState}).</li>
 * </ul>
 * {@link #PENDING} and {@link #PENDING_SPLIT} list the documented exceptions; each entry must still be true, so the
 * test fails on a stale entry and whoever removes the exception deletes it.
 */
class ArchitectureTest {
  private static final Path MAIN = Path.of("src", "main", "java");
  /** Every Java source scanned for the layer rules: the broker, the codec, the bench, the clients' tests, qvctl. */
  private static final List<Path> ALL_ROOTS = List.of(MAIN, Path.of("..", "shared-codec", "src", "main", "java"),
      Path.of("..", "deploy", "bench", "src", "main", "java"), Path.of("..", "clients-test"),
      Path.of("..", "cli", "src", "main", "java"));
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
      "webhook.api", Set.of("http.routes"),
      "bench", Set.of("kernel", "bus", "json", "metrics", "db", "node", "http"),
      "cli", Set.of("kernel", "codec", "bus", "json", "metrics", "db", "node", "http"));
  /** Where a pool, a tuple and SQL text may appear: the database layer and the composition root. */
  static final Set<String> SQL_PACKAGES = Set.of("db", "boot");
  /** A broker class named in code: an import, a static import or a full name. */
  private static final Pattern NAMED = Pattern.compile("\\bio\\.queenvertx\\.((?:[a-z][a-z0-9]*\\.)*[a-z][a-z0-9]*)\\.[A-Z]\\w*");
  private static final Pattern SQL_CLIENT = Pattern.compile(
      "\\b(?:io\\.vertx\\.sqlclient\\.(?:Pool|Tuple|SqlConnection|SqlClient|PreparedQuery)\\b|Tuple\\.(?:of|tuple|from)\\("
          + "|\\.preparedQuery\\(|\\.withTransaction\\()");
  private static final Pattern SQL_TEXT = Pattern.compile(
      "\"\\s*(?:SELECT|INSERT\\s+INTO|UPDATE\\s+queen|DELETE\\s+FROM|WITH\\s+\\w+\\s+AS)\\b");
  private static final Pattern MESSAGE_TEST = Pattern.compile(
      "get(?:Error)?Message\\(\\)\\)?\\s*\\.\\s*(?:contains|startsWith|endsWith|matches|equals|indexOf)\\(|startsWith\\(\"Q");
  static final int MAX_LINES = 400;
  /**
   * Tables whose SQL lives only in the procedures of the sql module's R__*.sql files: no Java class holds it, Java calls
   * {@code queen.<function>(...)}. docs/ARCHITECTURE.md ("Who owns each table") names the procedure families.
   */
  static final Set<String> PROCEDURE_TABLES = Set.of("queues", "log_partitions", "log_segments", "log_txns",
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
    List<Path> files = new ArrayList<>(sources());
    files.addAll(javaUnder(ALL_ROOTS.get(2)));
    for (Path f : files) {
      long lines = Files.readAllLines(f).size();
      String cls = className(f);
      if (lines > MAX_LINES) {
        over.add(cls);
        if (!PENDING_SPLIT.contains(cls)) problems.add(cls + " has " + lines + " lines (at most " + MAX_LINES + ")");
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
      String from = packageOf(f);
      if (from == null) continue;
      scanned++;
      for (String to : named(Files.readString(f))) {
        if (to.equals(from)) continue;
        graph.computeIfAbsent(from, k -> new TreeSet<>()).add(to);
        String problem = layerProblem(from, to);
        if (problem != null) problems.add(f.getFileName() + " (" + from + "): " + problem);
      }
    }
    assertThat(scanned).as("the scan found the sources").isGreaterThan(150);
    problems.addAll(cycles(graph));
    assertThat(problems).isEmpty();
  }

  @Test
  void noPoolTupleOrSqlOutsideTheDatabaseLayer() throws IOException {
    List<String> problems = new ArrayList<>();
    for (Path f : sources()) {
      String pkg = packageOf(f);
      if (SQL_PACKAGES.contains(pkg)) continue;
      problems.addAll(sqlProblems(className(f), Files.readString(f)));
    }
    assertThat(problems).isEmpty();
  }

  @Test
  void noExceptionIsToldApartByItsMessage() throws IOException {
    List<String> problems = new ArrayList<>();
    for (Path f : allSources()) problems.addAll(messageProblems(f.getFileName().toString(), Files.readString(f)));
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
    assertThat(layerProblem("log", "consumer")).isNull();
    assertThat(cycles(Map.of("log", Set.of("consumer"), "consumer", Set.of("dlq"), "dlq", Set.of("log"))))
        .singleElement().asString().contains("consumer").contains("dlq").contains("log");
    assertThat(sqlProblems("http/routes/X", """
        import io.vertx.sqlclient.Tuple;
        class X { void f() { pool.preparedQuery("SELECT queen.f($1)").execute(Tuple.of(1)); } }
        """)).hasSize(4);
    assertThat(sqlProblems("http/routes/X", "class X { String s = \"SELECT is a word\"; }")).hasSize(1);
    assertThat(messageProblems("X", """
        if (e.getMessage().contains("QPUSH bad")) {}
        if (String.valueOf(e.getMessage()).startsWith("could not")) {}
        if (pg.getErrorMessage().startsWith("QCRYPT")) {}
        if (text.startsWith("QDUP")) {}
        if ("25006".equals(pg.getSqlState())) {}
        """)).hasSize(5);
  }

  /** The packages (below io.queenvertx) a source names outside comments and string literals. */
  static Set<String> named(String source) {
    String code = stripped(source).replaceAll("(?m)^\\s*package [^;]+;", "");
    Set<String> out = new TreeSet<>();
    Matcher m = NAMED.matcher(code);
    while (m.find()) out.add(m.group(1));
    return out;
  }

  /** Why {@code from} may not name {@code to}, or null when it may. */
  static String layerProblem(String from, String to) {
    if (FORBIDDEN.getOrDefault(from, Set.of()).contains(to)) return "must not name " + to;
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
    Matcher m = SQL_CLIENT.matcher(code);
    while (m.find()) out.add(cls + ": " + m.group() + " outside the database layer: call a procedure facade");
    Matcher t = SQL_TEXT.matcher(code);
    while (t.find()) out.add(cls + ": SQL text " + t.group() + " outside the database layer");
    return out;
  }

  static List<String> messageProblems(String file, String source) {
    List<String> out = new ArrayList<>();
    String code = source.replaceAll("(?s)/\\*.*?\\*/", "").replaceAll("(?m)^\\s*//.*$", "");
    Matcher m = MESSAGE_TEST.matcher(code);
    while (m.find()) out.add(file + ": " + m.group() + " tells an error by its text: use its type or SqlState");
    if (!file.equals("SqlState.java") && code.contains("getSqlState(")) {
      out.add(file + ": reads a raw SQLSTATE: map it in db.SqlState, the one enum of codes");
    }
    return out;
  }

  /** The source without comments and with every string literal emptied. */
  private static String stripped(String source) {
    return source.replaceAll("\"(?:[^\"\\\\\\n]|\\\\.)*\"", "\"\"").replaceAll("(?s)/\\*.*?\\*/", "")
        .replaceAll("(?m)//.*$", "");
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
  private static String packageOf(Path f) throws IOException {
    Matcher m = Pattern.compile("(?m)^package io\\.queenvertx\\.([\\w.]+);").matcher(Files.readString(f));
    return m.find() ? m.group(1) : null;
  }

  /** {@code src/main/java/io/queenvertx/boot/Node.java} -> {@code boot/Node}. */
  private static String className(Path f) {
    String rel = f.toString().replace('\\', '/');
    return rel.replaceFirst("^.*?io/queenvertx/", "").replaceFirst("\\.java$", "");
  }
}
