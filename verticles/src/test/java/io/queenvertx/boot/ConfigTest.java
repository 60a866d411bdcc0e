package io.queenvertx.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class ConfigTest {
  @Test
  void defaultsAreQueens() {
    var c = Config.from(Map.of());
    assertThat(c.port()).isEqualTo(6632);
    assertThat(c.bindAddress()).isEqualTo("0.0.0.0");
    assertThat(c.database()).isEmpty();
    assertThat(c.dbPoolSize()).isEqualTo(160);
    assertThat(c.maxBodyBytes()).isEqualTo(67108864L);
    assertThat(c.popDefaultTimeoutMs()).isEqualTo(30000);
    assertThat(c.defaultSubscriptionMode()).isEqualTo("new");
    assertThat(c.tenancyHeader()).isFalse();
    assertThat(c.jwt().enabled()).isFalse();
    assertThat(c.clustered()).isFalse();
  }

  @Test
  void pgHostSelectsAnExternalDatabaseAndPgDatabaseWinsOverPgDb() {
    var c = Config.from(Map.of("PG_HOST", "db", "PG_DB", "b", "PG_DATABASE", "a", "PG_PORT", "6000"));
    assertThat(c.database()).get().satisfies(d -> {
      assertThat(d.host()).isEqualTo("db");
      assertThat(d.database()).isEqualTo("a");
      assertThat(d.port()).isEqualTo(6000);
    });
    assertThat(Config.from(Map.of("PG_HOST", "db", "PG_DB", "b")).database().get().database()).isEqualTo("b");
  }

  @Test
  void integersAreLaxAndFallBackToTheDefault() {
    assertThat(Config.from(Map.of("PORT", "abc")).port()).isEqualTo(6632);
    assertThat(Config.from(Map.of("DB_POOL_SIZE", "12")).dbPoolSize()).isEqualTo(12);
  }

  @Test
  void theEmbeddedBufferPoolIsAnEighthOfMemoryWithinBoundsUnlessConfigured() {
    assertThat(Config.from(Map.of()).embeddedPgSharedBuffersMb()).isBetween(128, 1024);
    assertThat(Config.from(Map.of("QUEEN_EMBEDDED_PG_SHARED_BUFFERS_MB", "300")).embeddedPgSharedBuffersMb())
        .isEqualTo(300);
    assertThat(Config.from(Map.of("QUEEN_EMBEDDED_PG_SHARED_BUFFERS_MB", "1")).embeddedPgSharedBuffersMb())
        .isEqualTo(16);
  }

  @Test
  void booleansAreStrictAndAnUnknownSpellingIsFatal() {
    assertThat(Config.from(Map.of("QUEEN_TENANCY_HEADER", " Yes ")).tenancyHeader()).isTrue();
    assertThat(Config.from(Map.of("QUEEN_TENANCY_HEADER", "off")).tenancyHeader()).isFalse();
    assertThatThrownBy(() -> Config.from(Map.of("QUEEN_TENANCY_HEADER", "maybe")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("QUEEN_TENANCY_HEADER");
  }

  @Test
  void aBindAddressWithAPortIsFatal() {
    assertThatThrownBy(() -> Config.from(Map.of("QUEEN_BIND_ADDR", "0.0.0.0:6632")))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void popTimeoutPrefersDefaultTimeout() {
    assertThat(Config.from(Map.of("DEFAULT_TIMEOUT", "5", "POP_DEFAULT_TIMEOUT_MS", "7")).popDefaultTimeoutMs())
        .isEqualTo(5);
    assertThat(Config.from(Map.of("POP_DEFAULT_TIMEOUT_MS", "7")).popDefaultTimeoutMs()).isEqualTo(7);
  }
}
