package io.queenvertx.db;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.bus.AckItem;
import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.Wire;
import io.vertx.core.Future;
import java.sql.SQLException;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * One test per SQLSTATE of the broker (docs/ARCHITECTURE.md, "SQLSTATE codes"): each is provoked through the facade
 * that calls its procedure and read back as its {@link SqlState} constant, with its human message kept. QV101 and QV106
 * answer races no facade can stage (a partition that vanishes under the push's lock, or that provisioning could not
 * create): they are raised by calling the functions the same way the facade does, in a transaction rolled back.
 */
class SqlStateIT {
  private static final UUID TENANT = UUID.fromString(Wire.DEFAULT_TENANT);
  private static final byte[] ONE_HASH = new byte[16];

  @NodeFixture
  static TestNode node;

  private static Database db() {
    return node.node().database();
  }

  /** The failure of {@code call}, which must fail with {@code expected}; returns the error's own text. */
  private static String refused(Future<?> call, SqlState expected) throws Exception {
    Throwable e = call.toCompletionStage().toCompletableFuture().handle((v, t) -> t).get(30, TimeUnit.SECONDS);
    assertThat(e).as("the call fails").isNotNull();
    assertThat(SqlState.of(e)).as("%s", e).isEqualTo(expected);
    assertThat(SqlState.codeOf(e)).isEqualTo(expected.code());
    return SqlState.errorText(e);
  }

  private static PushProcedures.Segments oneSegment(String queue, int count, byte[] hashes) {
    var s = PushProcedures.Segments.of(1);
    s.tenants()[0] = TENANT;
    s.queues()[0] = queue;
    s.partitions()[0] = "p";
    s.counts()[0] = count;
    s.hashes()[0] = hashes;
    s.blobs()[0] = new byte[] {1};
    return s;
  }

  @Test
  void qv101AnUnknownPartitionUnderThePushLock() throws SQLException {
    try (var c = Wire.connect()) {
      c.setAutoCommit(false);
      try (var st = c.createStatement()) {
        st.executeQuery("SELECT queen._log_push_into('" + UUID.randomUUID() + "', 1, '\\x"
            + "00".repeat(16) + "', '\\x01', -1)");
        throw new AssertionError("no error");
      } catch (SQLException e) {
        assertThat(SqlState.ofCode(e.getSQLState())).isEqualTo(SqlState.PUSH_PARTITION_UNRESOLVED);
        assertThat(e.getMessage()).contains("QPUSH unknown queue/partition");
      } finally {
        c.rollback();
      }
    }
  }

  @Test
  void qv102ASegmentWhoseHashesDoNotMatchItsCount() throws Exception {
    String text = refused(db().pushes().pushMulti(oneSegment(Wire.queue("qv102"), 2, ONE_HASH)),
        SqlState.PUSH_BAD_SEGMENT);
    assertThat(text).startsWith("QPUSH bad segment: element 0 count=2 hashes=16 bytes");
  }

  @Test
  void qv103PlaintextForAnEncryptedQueue() throws Exception {
    String q = Wire.queue("qv103");
    Wire.pushOne(node, q, "p", 1, "first");
    Wire.execute("UPDATE queen.queues SET encryption_enabled = true WHERE name = '" + q + "'");
    var s = oneSegment(q, 1, ONE_HASH);
    s.encrypted()[0] = false;
    assertThat(refused(db().pushes().pushMulti(s), SqlState.PUSH_PLAINTEXT_FOR_ENCRYPTED)).contains(q);
  }

  @Test
  void qv104MisalignedArrays() throws Exception {
    var one = oneSegment(Wire.queue("qv104"), 1, ONE_HASH);
    var s = new PushProcedures.Segments(one.tenants(), one.queues(), one.partitions(), one.counts(), one.hashes(),
        one.blobs(), one.verified(), one.expect(), one.hints(), new Boolean[2]);
    assertThat(refused(db().pushes().pushMulti(s), SqlState.PUSH_MISALIGNED_ARRAYS)).startsWith("QMULTI misaligned");
  }

  @Test
  void qv105AnElementWithoutAQueue() throws Exception {
    assertThat(refused(db().pushes().pushMulti(oneSegment(null, 1, ONE_HASH)), SqlState.PUSH_ELEMENT_INCOMPLETE))
        .isEqualTo("QMULTI element 0 has no queue or no blob");
  }

  @Test
  void qv106AnElementProvisioningCouldNotCreate() throws SQLException {
    try (var c = Wire.connect()) {
      c.setAutoCommit(false);
      try (var st = c.createStatement()) {
        // a partition row that does not appear: the race of a concurrent queue delete, staged
        st.execute("CREATE FUNCTION pg_temp.swallow() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$");
        st.execute("CREATE TRIGGER qv106 BEFORE INSERT ON queen.log_partitions FOR EACH ROW "
            + "EXECUTE FUNCTION pg_temp.swallow()");
        st.executeQuery("SELECT * FROM queen.log_push_multi(ARRAY['" + TENANT + "']::uuid[], ARRAY['"
            + Wire.queue("qv106") + "'], ARRAY['p'], ARRAY[1], ARRAY['\\x" + "00".repeat(16) + "'::bytea], "
            + "ARRAY['\\x01'::bytea], NULL, NULL, NULL, NULL)");
        throw new AssertionError("no error");
      } catch (SQLException e) {
        assertThat(SqlState.ofCode(e.getSQLState())).isEqualTo(SqlState.PUSH_SEGMENT_UNRESOLVED);
        assertThat(e.getMessage()).contains("QMULTI unresolved segment 0");
      } finally {
        c.rollback();
      }
    }
  }

  @Test
  void qv107AHintWhosePartitionIsGone() throws Exception {
    var s = oneSegment(Wire.queue("qv107"), 1, ONE_HASH);
    s.hints()[0] = UUID.randomUUID();
    assertThat(refused(db().pushes().pushMulti(s), SqlState.PUSH_PARTITION_STALE))
        .isEqualTo("QSTALE 1 of 1 partitions of this bundle no longer exist");
  }

  @Test
  void qv301AnAckWhoseArraysDiffer() throws Exception {
    var call = AckCall.of(TENANT, UUID.randomUUID(), Wire.QUEUE_MODE, null,
        List.of(new AckItem("t1", null, "completed", null, null, null)));
    var bad = new AckCall(call.tenant(), call.partitionId(), call.group(), null, call.hashes(),
        new String[] {"completed", "completed"});
    assertThat(refused(db().acks().ack(bad), SqlState.ACK_MISALIGNED_ARRAYS)).startsWith("QACK misaligned arrays");
  }

  @Test
  void qv401AConfigureWithAnUnknownMode() throws Exception {
    assertThat(refused(db().queues().configure(TENANT, Wire.queue("qv401"), "{}", "sideways"),
        SqlState.QUEUE_CONFIG_INVALID)).isEqualTo("QCONF mode must be \"merge\" or \"replace\", got sideways");
  }

  @Test
  void qv601ADeadLetterFilingWhoseArraysDiffer() throws Exception {
    var f = new DlqProcedures.Filing(UUID.randomUUID(), Wire.QUEUE_MODE, "token", new Long[] {0L},
        new UUID[] {UUID.randomUUID(), UUID.randomUUID()}, new String[] {"t"}, new String[] {"null"},
        new String[] {"e"}, new Integer[] {0}, 0, 0);
    assertThat(refused(db().dlq().file(f), SqlState.DLQ_FILE_MISALIGNED_ARRAYS)).startsWith("QDLQ misaligned arrays");
  }

  @Test
  void qv602AMoveWithABadSegment() throws Exception {
    assertThat(refused(db().dlq().move(TENANT, UUID.randomUUID(), "q", "p", new byte[3], new byte[] {1}),
        SqlState.DLQ_MOVE_BAD_SEGMENT)).isEqualTo("QMOVE bad segment: 3 hash bytes (want 16)");
  }

  @Test
  void qv603AMoveWithoutADestination() throws Exception {
    assertThat(refused(db().dlq().move(TENANT, UUID.randomUUID(), " ", "p", ONE_HASH, new byte[] {1}),
        SqlState.DLQ_MOVE_UNNAMED_DESTINATION)).isEqualTo("QMOVE unnamed destination");
  }

  @Test
  void qv604ABulkMoveWhoseRowsAreGone() throws Exception {
    assertThat(refused(db().dlq().moveMany(TENANT, new UUID[] {UUID.randomUUID()}, Wire.queue("qv604"), "p",
        ONE_HASH, new byte[] {1}), SqlState.DLQ_MOVE_ROWS_GONE)).isEqualTo("QMOVE 1 of 1 rows were gone under the lock");
  }

  private static TimerProcedures.Op timer(String queue, String key, long delayMs) {
    return new TimerProcedures.Op("schedule", queue, key, "Default", delayMs, "t-" + key, UUID.randomUUID(),
        "1".getBytes(java.nio.charset.StandardCharsets.UTF_8), false);
  }

  @Test
  void qv907ATimerBeyondTheHorizon() throws Exception {
    assertThat(refused(db().timers().apply(TENANT, null, List.of(timer(Wire.queue("qv907"), "k", 7_776_000_001L))),
        SqlState.TIMER_HORIZON)).contains("delayMs 7776000001 is beyond the 7776000000 ms (90 days) horizon");
  }

  @Test
  void qv911ATimerNamedTwiceInOneCall() throws Exception {
    String q = Wire.queue("qv911");
    assertThat(refused(db().timers().apply(TENANT, null, List.of(timer(q, "k", 10), timer(q, "k", 20))),
        SqlState.TIMER_DUPLICATE_KEY)).startsWith("timer operation 0: its (queue, timerKey) appears again");
  }

  @Test
  void qv950DeletingATimerTheTransactionDidNotClaim() throws Exception {
    var ghost = new TimerProcedures.Claimed(TENANT, Wire.queue("qv950"), "k", "Default", null, "t", UUID.randomUUID(),
        new byte[0], false, null, 0, 0);
    assertThat(refused(db().transaction(tx -> tx.timers().fired(List.of(ghost))), SqlState.TIMER_FIRE_MISMATCH))
        .isEqualTo("timers_fired: 1 of 1 timers were not claimed by this transaction");
  }
}
