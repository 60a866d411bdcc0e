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
 *   <li>no class over {@value #MAX_LINES} lines.</li>
 * </ul>
 * {@link #PENDING} and {@link #PENDING_SPLIT} list the documented exceptions; each entry must still be true, so the
 * test fails on a stale entry and whoever removes the exception deletes it.
 */
class ArchitectureTest {
  private static final Path MAIN = Path.of("src", "main", "java");
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
      "system_state", "boot/SystemState",
      "dlq_redrive_tasks", "dlq/RedriveTasks",
      "webhook_endpoints", "webhook/WebhookStore",
      "webhook_deliveries", "webhook/WebhookStore");

  /**
   * Class -> tables it reads outside their owner, each a documented exception (docs/ARCHITECTURE.md): the webhook
   * store links a dead-lettered delivery to its newest log_dlq row in a read-only subquery.
   */
  static final Map<String, Set<String>> PENDING = Map.of(
      "webhook/WebhookStore", Set.of("log_dlq"));

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
    assertThat(seen).as("the scan found table SQL (system_state's owner)").containsKey("boot/SystemState");
    assertThat(problems).isEmpty();
  }

  @Test
  void noClassIsOverTheLineLimit() throws IOException {
    List<String> problems = new ArrayList<>();
    Set<String> over = new TreeSet<>();
    for (Path f : sources()) {
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

  /** {@code src/main/java/io/queenvertx/boot/Node.java} -> {@code boot/Node}. */
  private static String className(Path f) {
    String rel = MAIN.relativize(f).toString().replace('\\', '/');
    return rel.replaceFirst("^io/queenvertx/", "").replaceFirst("\\.java$", "");
  }
}
