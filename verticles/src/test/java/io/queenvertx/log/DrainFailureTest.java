package io.queenvertx.log;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.db.SqlState;
import io.vertx.pgclient.PgException;
import java.net.ConnectException;
import org.junit.jupiter.api.Test;

/** Which replay failures set an event aside (the database refuses the data) and which only wait (everything else). */
class DrainFailureTest {
  static PgException pg(String state, String message) {
    return new PgException(message, "ERROR", state, null);
  }

  @Test
  void onlyARefusalOfTheDataItselfIsPermanent() {
    assertThat(SqlState.refusesData(pg("22001", "value too long for type character varying(255)"))).isTrue();
    assertThat(SqlState.refusesData(pg("22021", "invalid byte sequence for encoding \"UTF8\": 0x00"))).isTrue();
    assertThat(SqlState.refusesData(pg("23505", "duplicate key value violates unique constraint"))).isTrue();
    assertThat(SqlState.refusesData(pg("54000", "index row size 3000 exceeds btree maximum"))).isTrue();
    assertThat(SqlState.refusesData(pg("QV102", "QPUSH bad segment 0: count=1 hashes=3 bytes"))).isTrue();

    assertThat(SqlState.refusesData(pg("QV101", "QPUSH unknown queue/partition: q/p"))).isFalse();
    assertThat(SqlState.refusesData(pg("57P03", "the database system is starting up"))).isFalse();
    assertThat(SqlState.refusesData(pg("57P01", "terminating connection due to administrator command")))
        .isFalse();
    assertThat(SqlState.refusesData(pg("08006", "connection failure"))).isFalse();
    assertThat(SqlState.refusesData(pg("53300", "too many connections"))).isFalse();
    assertThat(SqlState.refusesData(pg("40001", "could not serialize access"))).isFalse();
    assertThat(SqlState.refusesData(pg("40P01", "deadlock detected"))).isFalse();
    assertThat(SqlState.refusesData(new ConnectException("Connection refused"))).isFalse();
    assertThat(SqlState.refusesData(new io.vertx.core.VertxException("Connection is closed", true))).isFalse();
    assertThat(SqlState.refusesData(null)).isFalse();
  }
}
