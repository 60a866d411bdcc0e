package io.queenvertx.boot;

import io.queenvertx.kernel.Config;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.queenvertx.testing.TestDatabase;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.postgresql.util.PSQLException;

/**
 * {@code log_push_multi}'s encryption check (R__20_push.sql, "Encryption (issue 18)"), called directly: an element with
 * plaintext frames for a queue whose encryption_enabled is set raises QCRYPT naming the queues, sorted, and nothing is
 * written, whether the element comes with a partition hint (the broker's steady state) or resolves by name, and
 * whether its partition exists or would be provisioned. Encrypted elements pass on any queue; QCRYPT comes before the
 * other refusals. The steady state (a bundle hinted throughout) runs two statements inside the function, the push
 * locks and then check-and-write (index probes under its generic plan, no separate row lock); the check costs none of
 * its own.
 */
class PushMultiEncryptionIT {
  private static final String T1 = "00000000-0000-0000-0000-000000000001";
  private static final String T2 = "00000000-0000-0000-0000-0000000000b2";
  /** A promise that no hash of the bundle exists at or below this offset: the fast path, no dedup probe. */
  private static final long VERIFIED = 9_000_000_000_000L;
  @AutoClose private static SqlSession c;

  /** One element of a bundle: one frame, its hash derived from {@code txn}. */
  record El(String tenant, String queue, String partition, String hint, boolean encrypted, String txn) {
    El hinted(String pid) {
      return new El(tenant, queue, partition, pid, encrypted, txn);
    }

    El sealed() {
      return new El(tenant, queue, partition, hint, true, txn);
    }
  }

  static int seq;

  static El el(String tenant, String queue, String partition) {
    return new El(tenant, queue, partition, null, false, "t" + (++seq));
  }

  @BeforeAll
  static void schema() throws Exception {
    c = SqlSession.fresh();
    push(el(T1, "enc-a", "p1"), el(T1, "enc-a", "p2"), el(T1, "enc-b", "p1"), el(T1, "plain", "p1"),
        el(T2, "enc-a", "p1"));
    c.exec("UPDATE queen.queues SET encryption_enabled = true WHERE name IN ('enc-a', 'enc-b')");
  }

  static String arr(List<El> els, Function<El, String> f, String type) {
    List<String> out = new ArrayList<>();
    for (El e : els) out.add(f.apply(e));
    return "ARRAY[" + String.join(", ", out) + "]::" + type + "[]";
  }

  static String q(String s) {
    return s == null ? "NULL" : "'" + s + "'";
  }

  /** The call's result rows (idx|status), or the error it raised. */
  static List<String> push(El... els) throws SQLException {
    return c.rows(call(els));
  }

  static String call(El... els) {
    List<El> l = List.of(els);
    return "SELECT idx || '|' || status FROM queen.log_push_multi("
        + arr(l, e -> q(e.tenant), "uuid") + ", " + arr(l, e -> q(e.queue), "text") + ", "
        + arr(l, e -> q(e.partition), "text") + ", " + arr(l, e -> "1", "integer") + ", "
        + arr(l, e -> "decode(md5('" + e.txn + "'), 'hex')", "bytea") + ", " + arr(l, e -> "'\\x00'", "bytea") + ", "
        + arr(l, e -> String.valueOf(VERIFIED), "bigint") + ", NULL, " + arr(l, e -> q(e.hint), "uuid") + ", "
        + arr(l, e -> String.valueOf(e.encrypted), "boolean") + ")";
  }

  /** The message of the error the bundle raised. */
  static String refusal(El... els) {
    PSQLException e = catchThrowableOfType(PSQLException.class, () -> push(els));
    assertThat((Throwable) e).as("the bundle is refused").isNotNull();
    return e.getServerErrorMessage().getMessage();
  }

  static String pid(String tenant, String queue, String partition) throws SQLException {
    return c.text("SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id "
        + "WHERE q.tenant_id = '" + tenant + "' AND q.name = '" + queue + "' AND p.name = '" + partition + "'");
  }

  /** Offsets allocated, segments and partitions stored, over the whole database. */
  static String written() throws SQLException {
    return c.text("SELECT (SELECT sum(last_offset) FROM queen.log_partitions) || '/' "
        + "|| (SELECT count(*) FROM queen.log_segments) || '/' || (SELECT count(*) FROM queen.log_partitions)");
  }

  @Test
  void aHintedPlaintextElementForAnEncryptedQueueIsRefusedAndNothingIsWritten() throws SQLException {
    String before = written();
    assertThat(refusal(el(T1, "enc-a", "p1").hinted(pid(T1, "enc-a", "p1"))))
        .isEqualTo("QCRYPT plaintext frames for encrypted queue(s): enc-a");
    // behind a plaintext element of a plain queue, hinted too
    assertThat(refusal(el(T1, "plain", "p1").hinted(pid(T1, "plain", "p1")),
        el(T1, "enc-b", "p1").hinted(pid(T1, "enc-b", "p1"))))
        .isEqualTo("QCRYPT plaintext frames for encrypted queue(s): enc-b");
    assertThat(written()).isEqualTo(before);
  }

  @Test
  void aNameResolvedPlaintextElementForAnEncryptedQueueIsRefusedAndNothingIsWritten() throws SQLException {
    String before = written();
    assertThat(refusal(el(T1, "enc-a", "p1"))).isEqualTo("QCRYPT plaintext frames for encrypted queue(s): enc-a");
    assertThat(refusal(el(T1, "plain", "p1").hinted(pid(T1, "plain", "p1")), el(T1, "enc-b", "p1")))
        .isEqualTo("QCRYPT plaintext frames for encrypted queue(s): enc-b");
    // a partition that would be provisioned on an encrypted queue is not created
    assertThat(refusal(el(T1, "enc-a", "p-new"))).isEqualTo("QCRYPT plaintext frames for encrypted queue(s): enc-a");
    assertThat(written()).isEqualTo(before);
  }

  @Test
  void theRefusalNamesEachEncryptedQueueOnceSortedAndEachTenantsQueueApart() throws SQLException {
    String before = written();
    assertThat(refusal(el(T1, "plain", "p1"), el(T1, "enc-b", "p1").hinted(pid(T1, "enc-b", "p1")),
        el(T1, "enc-a", "p2"), el(T1, "enc-a", "p1").hinted(pid(T1, "enc-a", "p1"))))
        .isEqualTo("QCRYPT plaintext frames for encrypted queue(s): enc-a, enc-b");
    assertThat(refusal(el(T1, "enc-a", "p1").hinted(pid(T1, "enc-a", "p1")),
        el(T2, "enc-a", "p1").hinted(pid(T2, "enc-a", "p1"))))
        .isEqualTo("QCRYPT plaintext frames for encrypted queue(s): enc-a, enc-a");
    assertThat(written()).isEqualTo(before);
  }

  @Test
  void encryptedElementsPassOnAnyQueueBesidePlaintextForAPlainOne() throws SQLException {
    assertThat(push(el(T1, "enc-a", "p1").hinted(pid(T1, "enc-a", "p1")).sealed(), el(T1, "enc-b", "p1").sealed(),
        el(T1, "plain", "p1").hinted(pid(T1, "plain", "p1")), el(T1, "plain", "p1").sealed(),
        el(T1, "enc-a", "p-sealed").sealed()))
        .containsExactly("0|queued", "1|queued", "2|queued", "3|queued", "4|queued");
  }

  @Test
  void aMalformedElementIsRefusedWhetherHintedOrNotAndProvisionsNothing() throws SQLException {
    String before = written();
    String call = "SELECT count(*) FROM queen.log_push_multi(ARRAY[NULL, NULL]::uuid[], ARRAY['plain', %s], "
        + "ARRAY['p1', '%s'], ARRAY[1, %d], ARRAY[decode(md5('x'), 'hex'), decode(md5('y'), 'hex')], "
        + "ARRAY['\\x00', '\\x00']::bytea[], ARRAY[%d, %d]::bigint[], NULL, %s, NULL)";
    String hints = "ARRAY['" + pid(T1, "plain", "p1") + "', '" + pid(T1, "enc-a", "p1") + "']::uuid[]";
    // hinted throughout (the bundle resolves without a lookup), the second element's hashes one frame short
    assertThat(sqlError(call.formatted("'enc-a'", "p1", 2, VERIFIED, VERIFIED, hints)))
        .isEqualTo("QCRYPT plaintext frames for encrypted queue(s): enc-a");
    String plainTwice = "ARRAY['" + pid(T1, "plain", "p1") + "', '" + pid(T1, "plain", "p1") + "']::uuid[]";
    assertThat(sqlError(call.formatted("'plain'", "p1", 2, VERIFIED, VERIFIED, plainTwice)))
        .isEqualTo("QPUSH bad segment: element 1 count=2 hashes=16 bytes");
    assertThat(sqlError(call.formatted("NULL", "p1", 1, VERIFIED, VERIFIED, plainTwice)))
        .isEqualTo("QMULTI element 1 has no queue or no blob");
    // by name, beside a partition that does not exist yet
    assertThat(sqlError(call.formatted("'plain'", "p-none", 0, -1, -1, "NULL")))
        .isEqualTo("QPUSH bad segment: element 1 count=0 hashes=16 bytes");
    assertThat(sqlError(call.formatted("NULL", "p-none", 1, -1, -1, "NULL")))
        .isEqualTo("QMULTI element 1 has no queue or no blob");
    assertThat(written()).isEqualTo(before);
  }

  static String sqlError(String sql) {
    PSQLException e = catchThrowableOfType(PSQLException.class, () -> c.rows(sql));
    assertThat((Throwable) e).as(sql).isNotNull();
    return e.getServerErrorMessage().getMessage();
  }

  @Test
  void qcryptComesBeforeABadSegmentAndBeforeAStaleHint() throws SQLException {
    String before = written();
    String badCall = "SELECT count(*) FROM queen.log_push_multi(ARRAY[NULL, NULL]::uuid[], "
        + "ARRAY['%s', 'plain'], ARRAY['p1', 'p1'], ARRAY[1, 2], ARRAY[decode(md5('x'), 'hex'), "
        + "decode(md5('y'), 'hex')], ARRAY['\\x00', '\\x00']::bytea[], NULL, NULL, NULL, NULL)";
    assertThat(sqlError(badCall.formatted("enc-a"))).isEqualTo("QCRYPT plaintext frames for encrypted queue(s): enc-a");
    assertThat(sqlError(badCall.formatted("plain"))).isEqualTo("QPUSH bad segment: element 1 count=2 hashes=16 bytes");

    // A queue deleted and created again, now encrypted: the old hint is stale, and QCRYPT decides first.
    push(el(T1, "gone", "p1"));
    String old = pid(T1, "gone", "p1");
    c.exec("SELECT queen.delete_queue(NULL, 'gone')");
    assertThat(refusal(el(T1, "gone", "p1").hinted(old).sealed()))
        .isEqualTo("QSTALE 1 of 1 partitions of this bundle no longer exist");
    push(el(T1, "gone", "p1"));
    c.exec("UPDATE queen.queues SET encryption_enabled = true WHERE name = 'gone'");
    String mid = written();
    assertThat(refusal(el(T1, "gone", "p1").hinted(old))).isEqualTo("QCRYPT plaintext frames for encrypted queue(s): gone");
    assertThat(refusal(el(T1, "gone", "p1").hinted(old).sealed()))
        .isEqualTo("QSTALE 1 of 1 partitions of this bundle no longer exist");
    assertThat(written()).isEqualTo(mid);
    assertThat(before).isNotEqualTo(mid);
  }

  @Test
  void aHintedBundleRunsTwoIndexedStatementsAndOneByNameRunsThree() throws Exception {
    Config.Database db = TestDatabase.get().fresh();
    Migrations.apply(db);
    try (Connection k = DriverManager.getConnection(Migrations.jdbcUrl(db), db.user(), db.password());
         Statement st = k.createStatement()) {
      // Every statement the function runs, with the plan it ran. The test tables are tiny: no sequential scans, set
      // before the session's first call plans (and caches) the function's statements.
      st.execute("SET enable_seqscan = off");
      List<El> els = List.of(el(T1, "cost", "p1"), el(T1, "cost", "p2"), el(T1, "cost", "p3"));
      st.execute(call(els.toArray(El[]::new)));
      List<El> hinted = new ArrayList<>();
      for (El e : els) {
        try (var rs = st.executeQuery("SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id "
            + "WHERE q.name = 'cost' AND p.name = '" + e.partition() + "'")) {
          rs.next();
          hinted.add(new El(e.tenant(), e.queue(), e.partition(), rs.getString(1), false, "h" + (++seq)));
        }
      }
      st.execute("LOAD 'auto_explain'");
      st.execute("SET auto_explain.log_min_duration = 0");
      st.execute("SET auto_explain.log_nested_statements = on");
      st.execute("SET auto_explain.log_level = notice");
      List<String> steady = nested(st, call(hinted.toArray(El[]::new)));
      assertThat(steady).as("the push locks, then check and write in one").hasSize(2);
      assertThat(steady.get(0)).contains("pg_advisory_xact_lock").doesNotContain("log_partitions");
      assertThat(steady.get(1)).contains("Index Cond: (id = ANY", "Update on log_partitions", "Insert on log_segments")
          .as("one row per segment: the hashes ride on the segment row").doesNotContain("log_txns");
      assertThat(String.join("\n", steady))
          .doesNotContain("Seq Scan", "LockRows", "Function Scan on _log_push_elements");
      List<String> byName = nested(st, call(el(T1, "cost", "p1"), el(T1, "cost", "p2")));
      assertThat(byName).as("the name lookup, then as hinted").hasSize(3);
      assertThat(String.join("\n", byName)).doesNotContain("LockRows");
      assertThat(byName.get(0)).contains("Index Cond: ((queue_id = q.id) AND (name = COALESCE(u.pn");
      assertThat(String.join("\n", byName)).doesNotContain("Seq Scan");
    }
  }

  /** The plans auto_explain reported for the statements a call ran inside log_push_multi, in order. */
  static List<String> nested(Statement st, String sql) throws SQLException {
    st.clearWarnings();
    try (var rs = st.executeQuery(sql)) {
      while (rs.next()) {
        assertThat(rs.getString(1)).endsWith("|queued");
      }
    }
    List<String> out = new ArrayList<>();
    for (SQLWarning w = st.getWarnings(); w != null; w = w.getNextWarning()) {
      String m = w.getMessage();
      if (m.contains("Query Text:") && !m.contains("Query Text: SELECT idx || '|' || status FROM queen.log_push_multi")) {
        out.add(m);
      }
    }
    return out;
  }
}
