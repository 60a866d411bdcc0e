package io.queenvertx.boot;

import io.queenvertx.kernel.Config;
import io.queenvertx.kernel.ConfigException;
import io.queenvertx.kernel.PostgresSettings;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Issue 37: several hosts, libpq's port rule, PG_URL, target_session_attrs and the read replicas' list. */
class PgLocationTest {
  private static Config.Database db(Map<String, String> env) {
    return Config.from(env).postgres().connection().orElseThrow();
  }

  @Test
  void aListOfHostsWithOnePortAppliesThePortToEveryHostAndFollowsTheWritableOne() {
    var d = db(Map.of("PG_HOST", "pg-a, pg-b,pg-c", "PG_PORT", "5433"));
    assertThat(d.hosts()).containsExactly(new Config.Host("pg-a", 5433), new Config.Host("pg-b", 5433),
        new Config.Host("pg-c", 5433));
    assertThat(d.target()).isEqualTo(Config.Target.READ_WRITE);
    assertThat(d.host()).isEqualTo("pg-a");
    assertThat(Migrations.jdbcUrl(d))
        .isEqualTo("jdbc:postgresql://pg-a:5433,pg-b:5433,pg-c:5433/postgres?targetServerType=primary");
  }

  @Test
  void onePortPerHostIsTakenInOrderAndAnyOtherCountIsRefusedNamingPgPort() {
    assertThat(db(Map.of("PG_HOST", "a,b", "PG_PORT", "1,2")).hosts())
        .containsExactly(new Config.Host("a", 1), new Config.Host("b", 2));
    assertThatThrownBy(() -> db(Map.of("PG_HOST", "a,b,c", "PG_PORT", "1,2")))
        .isInstanceOf(ConfigException.class)
        .hasMessage("PG_PORT='1,2' is not accepted: one port for every host, or one per host (PG_HOST lists 3)");
    assertThatThrownBy(() -> db(Map.of("PG_HOST", "a,,b")))
        .isInstanceOf(ConfigException.class).hasMessageStartingWith("PG_HOST='a,,b' is not accepted");
    assertThatThrownBy(() -> db(Map.of("PG_HOST", "a,b", "PG_PORT", "1,x")))
        .isInstanceOf(ConfigException.class).hasMessageStartingWith("PG_PORT='1,x' is not accepted");
  }

  @Test
  void oneHostIsTakenAsItIsUnlessReadWriteIsAskedFor() {
    var one = db(Map.of("PG_HOST", "db"));
    assertThat(one.target()).isEqualTo(Config.Target.ANY);
    assertThat(Migrations.jdbcUrl(one)).isEqualTo("jdbc:postgresql://db:5432/postgres");
    assertThat(db(Map.of("PG_HOST", "db", "PG_TARGET_SESSION_ATTRS", "read-write")).target())
        .isEqualTo(Config.Target.READ_WRITE);
    assertThat(db(Map.of("PG_HOST", "db", "PG_TARGET_SESSION_ATTRS", "primary")).target())
        .isEqualTo(Config.Target.READ_WRITE);
    assertThat(db(Map.of("PG_HOST", "a,b", "PG_TARGET_SESSION_ATTRS", "any")).target()).isEqualTo(Config.Target.ANY);
    assertThatThrownBy(() -> db(Map.of("PG_HOST", "db", "PG_TARGET_SESSION_ATTRS", "standby")))
        .isInstanceOf(ConfigException.class)
        .hasMessage("PG_TARGET_SESSION_ATTRS='standby' is not accepted: target_session_attrs read-write, primary "
            + "or any");
  }

  @Test
  void aLibpqUriGivesHostsPortsCredentialsDatabaseAndParametersDecoded() {
    var d = db(Map.of("PG_URL", "postgresql://us%40r:p%3Aw@h1:6001,h2,[::1]:6003/my%20db"
        + "?target_session_attrs=any&sslmode=require", "PG_USER", "ignored"));
    assertThat(d.hosts()).containsExactly(new Config.Host("h1", 6001), new Config.Host("h2", 5432),
        new Config.Host("::1", 6003));
    assertThat(d.user()).isEqualTo("us@r");
    assertThat(d.password()).isEqualTo("p:w");
    assertThat(d.database()).isEqualTo("my db");
    assertThat(d.ssl()).isTrue();
    assertThat(d.target()).isEqualTo(Config.Target.ANY);
    assertThat(Migrations.jdbcUrl(d))
        .isEqualTo("jdbc:postgresql://h1:6001,h2:5432,[::1]:6003/my%20db?sslmode=require");
  }

  @Test
  void whatTheUriLeavesOutComesFromThePgVariables() {
    var d = db(Map.of("PG_URL", "postgres:///orders", "PG_HOST", "x,y", "PG_PORT", "7", "PG_USER", "u",
        "PG_PASSWORD", " secret "));
    assertThat(d.hosts()).containsExactly(new Config.Host("x", 7), new Config.Host("y", 7));
    assertThat(d.database()).isEqualTo("orders");
    assertThat(d.user()).isEqualTo("u");
    assertThat(d.password()).isEqualTo(" secret ");
    assertThat(d.target()).isEqualTo(Config.Target.READ_WRITE);
  }

  @Test
  void aUriThatIsNotOneOrHasAnUnknownParameterIsRefusedWithoutShowingItsPassword() {
    assertThatThrownBy(() -> db(Map.of("PG_URL", "postgresql://u:hunter2@h/db?connect_timeout=3")))
        .isInstanceOf(ConfigException.class)
        .hasMessage("PG_URL='postgresql://u:***@h/db?connect_timeout=3' is not accepted: parameters sslmode, "
            + "target_session_attrs (not connect_timeout)");
    assertThatThrownBy(() -> db(Map.of("PG_URL", "mysql://h/db")))
        .isInstanceOf(ConfigException.class).hasMessageContaining("a URI starting postgresql:// or postgres://");
    assertThatThrownBy(() -> db(Map.of("PG_URL", "postgresql://h/db?sslmode=sometimes")))
        .isInstanceOf(ConfigException.class).hasMessageContaining("sslmode disable, allow, prefer, require");
  }

  @Test
  void readReplicasTakeTheirOwnPortOrPgReadPortOrTheFirstServersPort() {
    var pg = Config.from(Map.of("PG_HOST", "a,b", "PG_PORT", "5000", "PG_READ_HOSTS", "r1, r2:7001,[::2]"))
        .postgres();
    assertThat(pg.readHosts()).containsExactly(new Config.Host("r1", 5000), new Config.Host("r2", 7001),
        new Config.Host("::2", 5000));
    assertThat(Config.from(Map.of("PG_HOST", "a", "PG_READ_HOST", "r", "PG_READ_PORT", "9")).postgres().readHosts())
        .isEqualTo(List.of(new Config.Host("r", 9)));
    assertThat(pg.readMaxLagMs()).isEqualTo(PostgresSettings.DEFAULT_READ_MAX_LAG_MS);
    assertThatThrownBy(() -> Config.from(Map.of("PG_READ_HOSTS", "r1")))
        .isInstanceOf(ConfigException.class)
        .hasMessage("PG_READ_HOSTS='r1' is not accepted: read replicas need an external PostgreSQL (PG_HOST or PG_URL)");
    assertThatThrownBy(() -> Config.from(Map.of("PG_HOST", "a", "PG_READ_HOSTS", "r1:x")))
        .isInstanceOf(ConfigException.class).hasMessageStartingWith("PG_READ_HOSTS='r1:x' is not accepted");
  }
}
