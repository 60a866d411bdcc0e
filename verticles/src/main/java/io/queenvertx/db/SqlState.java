package io.queenvertx.db;

import io.vertx.pgclient.PgException;

/**
 * Every SQLSTATE the broker reacts to, read from {@link PgException#getSqlState()}: never from an error's text.
 * The broker's own codes are the class {@code QV} ({@code RAISE EXCEPTION ... USING ERRCODE = 'QV101'} in the
 * {@code R__*.sql} files; the registry, with who raises each and how it reaches HTTP, is the table "SQLSTATE codes"
 * of docs/ARCHITECTURE.md), allocated by family: QV0xx common, QV1xx push, QV2xx pop, QV3xx ack, QV4xx queues and
 * configuration, QV5xx inspection, QV6xx dead letters and redrive, QV7xx consumer groups, traces, retention and
 * stats, QV8xx key-value and QV9xx timers and locks (reserved). The standard codes and classes the code relies on
 * follow them; {@link #OTHER} is any other PostgreSQL error, {@link #NONE} a failure that is not one.
 */
public enum SqlState {
  /** A queue or partition that could not be resolved or created (R__10 {@code _log_ensure_partition}, R__20). */
  PUSH_PARTITION_UNRESOLVED("QV101"),
  /** A malformed segment: counts and hash sidecar disagree, or no queue or blob (R__20 {@code log_push(_multi)}). */
  PUSH_BAD_SEGMENT("QV102"),
  /** Plaintext frames for an encrypted queue (R__20 {@code _log_check_encryption}, {@code log_push_multi}). */
  PUSH_PLAINTEXT_FOR_ENCRYPTED("QV103"),
  /** The argument arrays of {@code log_push_multi} differ in length. */
  PUSH_MISALIGNED_ARRAYS("QV104"),
  /** An element of {@code log_push_multi} without a queue or a blob. */
  PUSH_ELEMENT_INCOMPLETE("QV105"),
  /** An element of {@code log_push_multi} whose partition is missing after provisioning. */
  PUSH_SEGMENT_UNRESOLVED("QV106"),
  /** A partition the bundle named by id no longer exists (its queue was deleted): retry by name. */
  PUSH_PARTITION_STALE("QV107"),
  /** The argument arrays of {@code log_ack} / {@code log_ack_many} differ in length (R__40). */
  ACK_MISALIGNED_ARRAYS("QV301"),
  /** {@code configure_queue} refused its input: no queue, an unknown mode, options not an object (R__50). */
  QUEUE_CONFIG_INVALID("QV401"),
  /** The argument arrays of {@code log_dlq_file} differ in length (R__40). */
  DLQ_FILE_MISALIGNED_ARRAYS("QV601"),
  /** A dead-letter move's segment is malformed: hash sidecar, no blob, no rows (R__70). */
  DLQ_MOVE_BAD_SEGMENT("QV602"),
  /** A dead-letter move without a destination queue or partition (R__70). */
  DLQ_MOVE_UNNAMED_DESTINATION("QV603"),
  /** Rows of a bulk dead-letter move were gone under its lock (R__70 {@code log_dlq_move_many}). */
  DLQ_MOVE_ROWS_GONE("QV604"),

  /** Key-value (R__96 {@code kv_apply}, {@code kv_list}): a malformed operation. */
  KV_BAD_REQUEST("QV801"),
  KV_UNKNOWN_OP("QV802"),
  KV_BAD_NAMESPACE("QV803"),
  KV_BAD_KEY("QV804"),
  KV_KEY_TOO_LARGE("QV805"),
  KV_VALUE_TOO_LARGE("QV806"),
  KV_EXPIRY_NOT_SPECIFIED("QV807"),
  KV_BAD_TTL("QV808"),
  KV_BAD_EXPECT("QV809"),
  KV_DUPLICATE_KEY_IN_CALL("QV810"),
  KV_TOO_MANY_OPS("QV811"),
  KV_TOO_MANY_KEYS("QV812"),
  KV_PREFIX_REQUIRED("QV813"),
  KV_GET_PREFIX_IN_TRANSACTION("QV814"),
  KV_RESERVED_NAMESPACE("QV815"),
  /** A {@code required} key-value operation lost its precondition; the DETAIL is the verdict's JSON ({@link #detail}). */
  KV_PRECONDITION("QV820"),
  KV_MISALIGNED("QV898"),
  /** Locks and semaphores (R__98 {@code locks_apply}): a malformed operation. */
  LOCKS_UNKNOWN_OP("QV931"),
  LOCKS_BAD_NAME("QV932"),
  LOCKS_TTL_REQUIRED("QV933"),
  LOCKS_BAD_TTL("QV934"),
  LOCKS_BAD_OWNER("QV935"),
  LOCKS_BAD_LIMIT("QV936"),
  LOCKS_TOKEN_REQUIRED("QV937"),
  LOCKS_BAD_TOKEN("QV938"),
  LOCKS_BAD_SLOT("QV939"),
  LOCKS_DUPLICATE_IN_CALL("QV940"),
  LOCKS_TOO_MANY_OPS("QV941"),
  LOCKS_TOO_MANY_KEYS("QV942"),
  LOCKS_MISALIGNED("QV949"),
  /** timers_apply: op not schedule, reschedule or cancel (R__97, contract §1.3). */
  TIMER_UNKNOWN_OP("QV902"),
  /** timers_apply: queue empty or over 255 characters. */
  TIMER_QUEUE_REQUIRED("QV903"),
  /** timers_apply: timerKey empty. */
  TIMER_KEY_REQUIRED("QV904"),
  /** timers_apply: timerKey over 512 bytes. */
  TIMER_KEY_TOO_LONG("QV905"),
  /** timers_apply: a schedule without delayMs. */
  TIMER_DELAY_REQUIRED("QV906"),
  /** timers_apply: delayMs beyond the 90-day horizon. */
  TIMER_HORIZON("QV907"),
  /** timers_apply: a schedule without txn, or a txn over 65,535 bytes. */
  TIMER_TXN_REQUIRED("QV908"),
  /** timers_apply: a schedule without payload. */
  TIMER_PAYLOAD_REQUIRED("QV909"),
  /** timers_apply: a payload over 1 MiB (plus the envelope's room when encrypted). */
  TIMER_PAYLOAD_TOO_LARGE("QV910"),
  /** timers_apply: a (queue, timerKey) twice in one call. */
  TIMER_DUPLICATE_KEY("QV911"),
  /** timers_apply: more than 256 operations. */
  TIMER_TOO_MANY_OPS("QV912"),
  /** timers_apply: partition empty or over 255 characters. */
  TIMER_BAD_PARTITION("QV913"),
  /** timers_apply / timers_fired: misaligned arrays or a schedule without its minted message id (a broker bug). */
  TIMER_MISALIGNED("QV914"),
  /** timers_fired: a named timer was not claimed by the transaction (the fire must roll back). */
  TIMER_FIRE_MISMATCH("QV950"),

  /** unique_violation (a redrive task already running for the queue, ...). */
  UNIQUE_VIOLATION("23505"),
  /** invalid_text_representation (a uuid that does not parse, ...). */
  INVALID_TEXT_REPRESENTATION("22P02"),
  /** query_canceled: {@code statement_timeout} ran out. */
  QUERY_CANCELED("57014"),
  /** read_only_sql_transaction: a write reached a server that takes none (a replica, a demoted primary). */
  READ_ONLY_SQL_TRANSACTION("25006"),
  /** admin_shutdown, crash_shutdown, cannot_connect_now: the server is stopping, crashed or starting. */
  ADMIN_SHUTDOWN("57P01"),
  CRASH_SHUTDOWN("57P02"),
  CANNOT_CONNECT_NOW("57P03"),
  /** database_dropped, idle_session_timeout: the rest of class 57P, operator intervention. */
  DATABASE_DROPPED("57P04"),
  IDLE_SESSION_TIMEOUT("57P05"),
  /** serialization_failure (on a replica: a recovery conflict). */
  SERIALIZATION_FAILURE("40001"),
  /** Any other code of class 08 (connection_exception). */
  CONNECTION_EXCEPTION("08"),
  /** Any other code of class 22 (data_exception). */
  DATA_EXCEPTION("22"),
  /** Any other code of class 23 (integrity_constraint_violation). */
  INTEGRITY_CONSTRAINT_VIOLATION("23"),
  /** Any other code of class 54 (program_limit_exceeded). */
  PROGRAM_LIMIT_EXCEEDED("54"),
  /** A PostgreSQL error of a code not listed. */
  OTHER(""),
  /** Not a PostgreSQL error (a closed connection, a timeout of the client, ...). */
  NONE("");

  /** The class of the broker's own codes. */
  public static final String BROKER_CLASS = "QV";

  private final String code;

  SqlState(String code) {
    this.code = code;
  }

  /** The five-character SQLSTATE, or the two-character class of a class constant, or "" (OTHER, NONE). */
  public String code() {
    return code;
  }

  /** Whether this is the broker's own code (class QV). */
  public boolean broker() {
    return code.startsWith(BROKER_CLASS);
  }

  /** The SQLSTATE class (two characters) this constant belongs to, "" for OTHER and NONE. */
  public String sqlClass() {
    return code.length() >= 2 ? code.substring(0, 2) : "";
  }

  /** The constant of a SQLSTATE: its own, else its class's, else OTHER; NONE for null. */
  public static SqlState ofCode(String sqlState) {
    if (sqlState == null) return NONE;
    SqlState byClass = OTHER;
    for (SqlState s : values()) {
      if (s.code.equals(sqlState)) return s;
      if (s.code.length() == 2 && sqlState.startsWith(s.code)) byClass = s;
    }
    return byClass;
  }

  /** The constant of a failure: its PostgreSQL error's (the failure or a cause), else NONE. */
  public static SqlState of(Throwable t) {
    for (Throwable e = t; e != null; e = e.getCause()) {
      if (e instanceof PgException pg) return ofCode(pg.getSqlState());
      if (e.getCause() == e) break;
    }
    return NONE;
  }

  /** The SQLSTATE of a failure's PostgreSQL error, as PostgreSQL sent it, or null when it is none. */
  public static String codeOf(Throwable t) {
    for (Throwable e = t; e != null; e = e.getCause()) {
      if (e instanceof PgException pg) return pg.getSqlState();
      if (e.getCause() == e) break;
    }
    return null;
  }

  /** The PostgreSQL error's own text (without severity and code) of a failure, or null when it is none. */
  public static String errorText(Throwable t) {
    for (Throwable e = t; e != null; e = e.getCause()) {
      if (e instanceof PgException pg) return pg.getErrorMessage();
      if (e.getCause() == e) break;
    }
    return null;
  }

  /**
   * Whether the database refused the data itself, so that a retry can never succeed: a data exception (class 22), a
   * constraint violation (23), a program limit such as an over-long index row (54), or the push function's own
   * refusal of a malformed segment (QV102). Anything else, unreachable, closed, busy, out of resources, serialization
   * failures, unknown errors, is transient (the spool's drain sets the first kind aside and retries the second).
   */
  public static boolean refusesData(Throwable t) {
    SqlState state = of(t);
    return switch (state.sqlClass()) {
      case "22", "23", "54" -> true;
      default -> state == PUSH_BAD_SEGMENT;
    };
  }

  /**
   * Whether a failure is the database's trouble rather than the statement's (the key-value, timer and lock routes answer
   * it 503 with Retry-After): no PostgreSQL error at all (a closed connection, a client timeout), a connection error
   * (08), a serialization failure or deadlock (40001, 40P01), insufficient resources (53), an operator intervention or
   * cancel (57), a system error (58).
   */
  public static boolean unavailable(Throwable t) {
    String code = codeOf(t);
    if (code == null) return true;
    return code.equals("40001") || code.equals("40P01") || code.startsWith("08") || code.startsWith("53")
        || code.startsWith("57") || code.startsWith("58");
  }

  /** The DETAIL of a failure's PostgreSQL error (QV820 carries its verdict there), or null. */
  public static String detail(Throwable t) {
    for (Throwable e = t; e != null; e = e.getCause()) {
      if (e instanceof PgException pg) return pg.getDetail();
      if (e.getCause() == e) break;
    }
    return null;
  }

  /** {@code SQLSTATE <code>: <text>} for a PostgreSQL error, else the failure as a string (log lines). */
  public static String describe(Throwable t) {
    return of(t) != NONE ? "SQLSTATE " + codeOf(t) + ": " + errorText(t) : String.valueOf(t);
  }

  /** Whether {@code t} is a PostgreSQL error of this code. */
  public boolean is(Throwable t) {
    return of(t) == this;
  }
}
