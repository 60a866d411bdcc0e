package io.queenvertx.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class ConfigTest {
  @Test
  void defaultsAreQueens() {
    var c = Config.from(Map.of());
    assertThat(c.http().port()).isEqualTo(6632);
    assertThat(c.http().bindAddress()).isEqualTo("0.0.0.0");
    assertThat(c.postgres().connection()).isEmpty();
    assertThat(c.postgres().poolSize()).isEqualTo(160);
    assertThat(c.http().maxBodyBytes()).isEqualTo(67108864L);
    assertThat(c.pop().defaultTimeoutMs()).isEqualTo(30000);
    assertThat(c.pop().defaultSubscriptionMode()).isEqualTo("new");
    assertThat(c.security().tenancyHeader()).isFalse();
    assertThat(c.jwt().enabled()).isFalse();
    assertThat(c.cluster().enabled()).isFalse();
  }

  @Test
  void pgHostSelectsAnExternalDatabaseAndPgDatabaseWinsOverPgDb() {
    var c = Config.from(Map.of("PG_HOST", "db", "PG_DB", "b", "PG_DATABASE", "a", "PG_PORT", "6000"));
    assertThat(c.postgres().connection()).get().satisfies(d -> {
      assertThat(d.host()).isEqualTo("db");
      assertThat(d.database()).isEqualTo("a");
      assertThat(d.port()).isEqualTo(6000);
    });
    assertThat(Config.from(Map.of("PG_HOST", "db", "PG_DB", "b")).postgres().connection().get().database()).isEqualTo("b");
  }

  @Test
  void integersAreStrictAndABadOneNamesTheVariableTheValueAndTheRange() {
    assertThat(Config.from(Map.of("DB_POOL_SIZE", "12")).postgres().poolSize()).isEqualTo(12);
    assertThat(Config.from(Map.of("PORT", " ")).http().port()).isEqualTo(6632);
    assertThatThrownBy(() -> Config.from(Map.of("PORT", "abc")))
        .isInstanceOf(ConfigException.class)
        .hasMessage("PORT='abc' is not accepted: an integer from 1 to 65535");
    assertThatThrownBy(() -> Config.from(Map.of("PORT", "70000")))
        .isInstanceOf(ConfigException.class)
        .hasMessage("PORT='70000' is not accepted: an integer from 1 to 65535");
    assertThatThrownBy(() -> Config.from(Map.of("DB_POOL_SIZE", "12x")))
        .isInstanceOf(ConfigException.class).hasMessageStartingWith("DB_POOL_SIZE='12x' is not accepted: an integer");
    assertThatThrownBy(() -> Config.from(Map.of("RETENTION_INTERVAL", "5s")))
        .isInstanceOf(ConfigException.class).hasMessageStartingWith("RETENTION_INTERVAL='5s' is not accepted");
    assertThatThrownBy(() -> Config.from(Map.of("POP_WAIT_BACKOFF_MULTIPLIER", "two")))
        .isInstanceOf(ConfigException.class)
        .hasMessage("POP_WAIT_BACKOFF_MULTIPLIER='two' is not accepted: a finite number");
    assertThatThrownBy(() -> Config.from(Map.of("QUEEN_DB_CONNECT_TIMEOUT_S", "-1")))
        .isInstanceOf(ConfigException.class)
        .hasMessageStartingWith("QUEEN_DB_CONNECT_TIMEOUT_S='-1' is not accepted: an integer from 0 to");
  }

  @Test
  void theDatabaseConnectTimeoutDefaultsToThreeMinutes() {
    assertThat(Config.from(Map.of()).startup().dbConnectTimeoutS()).isEqualTo(180);
    assertThat(Config.from(Map.of("QUEEN_DB_CONNECT_TIMEOUT_S", "0")).startup().dbConnectTimeoutS()).isZero();
  }

  @Test
  void aMalformedEncryptionKeyIsAConfigErrorThatDoesNotShowTheKey() {
    String good = "0123456789abcdef".repeat(4);
    assertThat(Config.from(Map.of("QUEEN_ENCRYPTION_KEY", good)).security().encryptionKeyHex()).contains(good);
    assertThatThrownBy(() -> Config.from(Map.of("QUEEN_ENCRYPTION_KEY", "zz")))
        .isInstanceOf(ConfigException.class)
        .hasMessage("QUEEN_ENCRYPTION_KEY (a value of 2 characters, not shown) is not accepted: "
            + "64 hexadecimal characters [0-9a-fA-F] (a 32-byte AES-256 key)");
    String badChar = good.substring(0, 10) + "g" + good.substring(11);
    assertThatThrownBy(() -> Config.from(Map.of("QUEEN_ENCRYPTION_KEY", badChar)))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("character 10 is not hexadecimal")
        .hasMessageNotContaining(badChar);
  }

  @Test
  void copiesReplaceOneComponentAndKeepTheRest() {
    Config c = Config.from(Map.of("QUEEN_TENANCY_HEADER", "on", "QUEEN_DB_CONNECT_TIMEOUT_S", "7"));
    Config moved = c.withPort(7001);
    assertThat(moved.http().port()).isEqualTo(7001);
    assertThat(moved).isEqualTo(c.withPort(c.http().port()).withPort(7001));
    assertThat(moved.security().tenancyHeader()).isTrue();
    assertThat(moved.startup().dbConnectTimeoutS()).isEqualTo(7);
    var db = new Config.Database("h", 1234, "d", "u", "p", false);
    assertThat(c.withDatabase(db).postgres().connection()).contains(db);
    assertThat(c.withDatabase(db).withPort(c.http().port()).serverId()).isEqualTo(c.serverId());
  }

  @Test
  void theEmbeddedBufferPoolIsAnEighthOfMemoryWithinBoundsUnlessConfigured() {
    assertThat(Config.from(Map.of()).postgres().embeddedSharedBuffersMb()).isBetween(128, 1024);
    assertThat(Config.from(Map.of("QUEEN_EMBEDDED_PG_SHARED_BUFFERS_MB", "300")).postgres().embeddedSharedBuffersMb())
        .isEqualTo(300);
    assertThat(Config.from(Map.of("QUEEN_EMBEDDED_PG_SHARED_BUFFERS_MB", "1")).postgres().embeddedSharedBuffersMb())
        .isEqualTo(16);
  }

  @Test
  void booleansAreStrictAndAnUnknownSpellingIsFatal() {
    assertThat(Config.from(Map.of("QUEEN_TENANCY_HEADER", " Yes ")).security().tenancyHeader()).isTrue();
    assertThat(Config.from(Map.of("QUEEN_TENANCY_HEADER", "off")).security().tenancyHeader()).isFalse();
    assertThatThrownBy(() -> Config.from(Map.of("QUEEN_TENANCY_HEADER", "maybe")))
        .isInstanceOf(ConfigException.class)
        .hasMessage("QUEEN_TENANCY_HEADER='maybe' is not accepted: a boolean (true/false, 1/0, yes/no, on/off)");
  }

  @Test
  void aBindAddressWithAPortIsFatal() {
    assertThatThrownBy(() -> Config.from(Map.of("QUEEN_BIND_ADDR", "0.0.0.0:6632")))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void popTimeoutPrefersDefaultTimeout() {
    assertThat(Config.from(Map.of("DEFAULT_TIMEOUT", "5", "POP_DEFAULT_TIMEOUT_MS", "7")).pop().defaultTimeoutMs())
        .isEqualTo(5);
    assertThat(Config.from(Map.of("POP_DEFAULT_TIMEOUT_MS", "7")).pop().defaultTimeoutMs()).isEqualTo(7);
  }

  @Test
  void theEventBusPortIsRandomByDefaultAndCanBeFixed() {
    assertThat(Config.from(Map.of()).cluster().busPort()).isZero();
    assertThat(Config.from(Map.of("QUEEN_CLUSTER_BUS_PORT", "5801")).cluster().busPort()).isEqualTo(5801);
    assertThatThrownBy(() -> Config.from(Map.of("QUEEN_CLUSTER_BUS_PORT", "70000")))
        .hasMessageContaining("QUEEN_CLUSTER_BUS_PORT");
  }
}
