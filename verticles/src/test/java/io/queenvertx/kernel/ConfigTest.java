package io.queenvertx.kernel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

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
        .hasMessage("POP_WAIT_BACKOFF_MULTIPLIER='two' is not accepted: a finite number of at least 1");
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
  void withPortAndWithDatabaseRebuildOnlyTheConcernTheyChange() {
    Config c = Config.from(Map.of("QUEEN_TENANCY_HEADER", "on", "QUEEN_ACCESS_LOG", "on", "DB_POOL_SIZE", "9",
        "QUEEN_CLUSTER_MEMBERS", "10.0.0.1", "JWT_ENABLED", "on", "JWT_SECRET", "s", "FILE_BUFFER_FLUSH_MS", "250"));
    Config moved = c.withPort(7001);
    assertThat(moved.http()).isEqualTo(new HttpSettings(7001, c.http().bindAddress(), c.http().maxBodyBytes(),
        c.http().instances(), true, c.http().eventLoops(), c.http().maxPushItems()));
    assertThat(moved).usingRecursiveComparison().ignoringFields("http.port").isEqualTo(c);
    var db = new Config.Database("h", 1234, "d", "u", "p", false);
    Config pointed = c.withDatabase(db);
    assertThat(pointed.postgres().connection()).contains(db);
    assertThat(pointed.postgres().poolSize()).isEqualTo(9);
    assertThat(pointed).usingRecursiveComparison().ignoringFields("postgres.connection").isEqualTo(c);
  }

  @Test
  void everyConcernDefaultsToItsNamedConstants() {
    var c = Config.from(Map.of("QUEEN_DATA_DIR", "/srv/q"));
    assertThat(c.http()).isEqualTo(new HttpSettings(HttpSettings.DEFAULT_PORT, HttpSettings.DEFAULT_BIND_ADDRESS,
        HttpSettings.DEFAULT_MAX_BODY_BYTES, Runtime.getRuntime().availableProcessors(), false,
        2 * Runtime.getRuntime().availableProcessors(), HttpSettings.DEFAULT_MAX_PUSH_ITEMS));
    assertThat(c.postgres()).isEqualTo(new PostgresSettings(Optional.empty(), Path.of("/srv/q"), 0,
        c.postgres().embeddedSharedBuffersMb(), PostgresSettings.DEFAULT_POOL_SIZE,
        PostgresSettings.DEFAULT_STATEMENT_TIMEOUT_MS, true, java.util.List.of(),
        PostgresSettings.DEFAULT_READ_MAX_LAG_MS, PostgresSettings.DEFAULT_CHECK_INTERVAL_MS,
        PostgresSettings.DEFAULT_CHECK_TIMEOUT_MS, PostgresSettings.DEFAULT_FAILOVER_WAIT_MS));
    assertThat(c.pop()).isEqualTo(new PopSettings(PopSettings.DEFAULT_TIMEOUT_MS,
        PopSettings.DEFAULT_SUBSCRIPTION_MODE, PopSettings.DEFAULT_WAIT_INITIAL_INTERVAL_MS,
        PopSettings.DEFAULT_WAIT_BACKOFF_THRESHOLD, PopSettings.DEFAULT_WAIT_BACKOFF_MULTIPLIER,
        PopSettings.DEFAULT_WAIT_MAX_INTERVAL_MS, PopSettings.DEFAULT_MAX_BATCH, PopSettings.DEFAULT_MAX_BYTES));
    assertThat(c.engine()).isEqualTo(new EngineSettings(EngineSettings.DEFAULT_ZSTD_LEVEL,
        EngineSettings.DEFAULT_SEGMENT_CACHE_ENTRIES, EngineSettings.DEFAULT_DEDUP_CACHE_MB,
        EngineSettings.DEFAULT_PUSH_BUNDLES_IN_FLIGHT, EngineSettings.DEFAULT_PUSH_PARTITIONS_PER_BUNDLE,
        EngineSettings.DEFAULT_PUSH_FUSION_HOLD_US));
    assertThat(c.spool()).isEqualTo(new SpoolSettings(Path.of("/srv/q/buffers"), SpoolSettings.DEFAULT_FLUSH_MS,
        SpoolSettings.DEFAULT_EVENTS_PER_FILE));
    assertThat(c.maintenance()).isEqualTo(new MaintenanceSettings(MaintenanceSettings.DEFAULT_RETENTION_INTERVAL_MS,
        MaintenanceSettings.DEFAULT_RETENTION_BATCH_SIZE, MaintenanceSettings.DEFAULT_CACHE_REFRESH_INTERVAL_MS,
        MaintenanceSettings.DEFAULT_REDRIVE_STALE_MS, MaintenanceSettings.DEFAULT_TIMER_POLL_MS, true));
    assertThat(c.security()).isEqualTo(new SecuritySettings(Optional.empty(), false, Map.of(), List.of(), List.of()));
    assertThat(c.cluster()).isEqualTo(new ClusterSettings(false, ClusterSettings.DEFAULT_MEMBERS,
        ClusterSettings.DEFAULT_PORT, 0, "", ClusterSettings.DEFAULT_NAME, Path.of(ClusterSettings.DEFAULT_XML_FILE)));
    assertThat(c.jwt()).isEqualTo(new JwtSettings(false, JwtSettings.DEFAULT_ALGORITHM, "", "", "",
        JwtSettings.DEFAULT_JWKS_REFRESH_INTERVAL_S, JwtSettings.DEFAULT_JWKS_TIMEOUT_MS, "", "",
        JwtSettings.DEFAULT_CLOCK_SKEW_S, true, JwtSettings.DEFAULT_SKIP_PATHS, "role", "roles", "admin", "read-write",
        "read-only", "write-only"));
    assertThat(c.exposure()).isEqualTo(new ExposureSettings(ExposureSettings.DEFAULT_IDLE_TIMEOUT_S,
        ExposureSettings.DEFAULT_HEADER_TIMEOUT_MS, ExposureSettings.defaultMaxConnections(), false));
    assertThat(c.startup()).isEqualTo(new StartupSettings(StartupSettings.DEFAULT_DB_CONNECT_TIMEOUT_S));
  }

  /** One variable of each concern: its record's parsing is as strict as the rest and names the variable. */
  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "QUEEN_HTTP_INSTANCES | many | QUEEN_HTTP_INSTANCES='many' is not accepted: an integer of at least 1 (32-bit)",
      "QUEEN_EMBEDDED_PG_PORT       | 70000 | QUEEN_EMBEDDED_PG_PORT='70000' is not accepted: an integer from 0 to 65535",
      "POP_WAIT_MAX_INTERVAL_MS     | 1s   | POP_WAIT_MAX_INTERVAL_MS='1s' is not accepted: an integer of at least 1",
      "QUEEN_POP_MAX_BATCH | 0 | QUEEN_POP_MAX_BATCH='0' is not accepted: an integer of at least 1 (32-bit)",
      "QUEEN_POP_MAX_BYTES          | 64MB | QUEEN_POP_MAX_BYTES='64MB' is not accepted: an integer of at least 0",
      "QUEEN_MAX_PUSH_ITEMS | many | QUEEN_MAX_PUSH_ITEMS='many' is not accepted: an integer of at least 1 (32-bit)",
      "QUEEN_V2_ZSTD_LEVEL          | 23   | QUEEN_V2_ZSTD_LEVEL='23' is not accepted: an integer from -7 to 22",
      "FILE_BUFFER_FLUSH_MS         | fast | FILE_BUFFER_FLUSH_MS='fast' is not accepted: an integer of at least 10",
      "QUEEN_REDRIVE_STALE_MS       | 1e4  | QUEEN_REDRIVE_STALE_MS='1e4' is not accepted: an integer of at least 1000",
      "QUEEN_CLUSTER_PORT           | 0    | QUEEN_CLUSTER_PORT='0' is not accepted: an integer from 1 to 65535",
      "JWT_CLOCK_SKEW               | 30s  | JWT_CLOCK_SKEW='30s' is not accepted: an integer of at least 0",
      "QUEEN_HTTP_MAX_CONNECTIONS   | lots | QUEEN_HTTP_MAX_CONNECTIONS='lots' is not accepted: an integer of at least 0 (32-bit)",
      "QUEEN_ACCESS_LOG             | loud | QUEEN_ACCESS_LOG='loud' is not accepted: a boolean (true/false, 1/0, yes/no, on/off)",
      "QUEEN_WEBHOOK_API_KEYS       | k=nope | QUEEN_WEBHOOK_API_KEYS: the tenant of entry 'k...' is not accepted ('nope'): a tenant UUID after '='",
      "QUEEN_JWT_REQUIRE_EXP        | often | QUEEN_JWT_REQUIRE_EXP='often' is not accepted: a boolean (true/false, 1/0, yes/no, on/off)",
  })
  void eachConcernRejectsABadValueByNamingTheVariableAndTheValue(String variable, String value, String message) {
    assertThatThrownBy(() -> Config.from(Map.of(variable, value)))
        .isInstanceOf(ConfigException.class).hasMessage(message);
  }

  @Test
  void allowedOriginsAndHostsAreStrictAndKeptCanonical() {
    var c = Config.from(Map.of("QUEEN_ALLOWED_ORIGINS", " HTTPS://App.Example.com:443 , http://10.0.0.5:8080,"
        + "http://[::1]:80", "QUEEN_ALLOWED_HOSTS", "Queen.Example, 10.0.0.5:6632,[::1]"));
    assertThat(c.security().allowedOrigins())
        .containsExactly("https://app.example.com", "http://10.0.0.5:8080", "http://[::1]");
    assertThat(c.security().allowedHosts()).containsExactly("queen.example", "10.0.0.5:6632", "[::1]");
    assertThat(Config.from(Map.of("QUEEN_ALLOWED_ORIGINS", "https://a.example,*")).security().allowedOrigins())
        .containsExactly("*");
    for (String bad : new String[] {"https://a.example/", "a.example", "ftp://a.example", "https://a.example:0",
        "https://a.example:99999", "https://", "null", "https://a b"}) {
      assertThatThrownBy(() -> Config.from(Map.of("QUEEN_ALLOWED_ORIGINS", "https://ok.example," + bad)))
          .as(bad).isInstanceOf(ConfigException.class)
          .hasMessageStartingWith("QUEEN_ALLOWED_ORIGINS='https://ok.example," + bad + "' is not accepted: "
              + "comma-separated origins").hasMessageEndingWith("'" + bad + "' is not one");
    }
    for (String bad : new String[] {"a.example/x", "a.example:", "a.example:x", "[::1", "http://a.example", "*"}) {
      assertThatThrownBy(() -> Config.from(Map.of("QUEEN_ALLOWED_HOSTS", bad)))
          .as(bad).isInstanceOf(ConfigException.class)
          .hasMessageStartingWith("QUEEN_ALLOWED_HOSTS='" + bad + "' is not accepted: comma-separated host names");
    }
  }

  @Test
  void authOnWithAnUnknownAlgorithmOrNoKeyMaterialIsAConfigError() {
    assertThatThrownBy(() -> Config.from(Map.of("JWT_ENABLED", "true", "JWT_SECRET", "s", "JWT_ALGORITHM", "HS999")))
        .isInstanceOf(ConfigException.class)
        .hasMessage("JWT_ALGORITHM='HS999' is not accepted: one of HS256, HS384, HS512, RS256, RS384, RS512, EdDSA, auto");
    assertThatThrownBy(() -> Config.from(Map.of("JWT_ENABLED", "true")))
        .isInstanceOf(ConfigException.class)
        .hasMessage("JWT_ENABLED=true needs JWT_SECRET, JWT_PUBLIC_KEY or JWT_JWKS_URL (all are empty)");
    assertThat(Config.from(Map.of("JWT_ENABLED", "true", "JWT_JWKS_URL", "http://127.0.0.1:1/jwks",
        "JWT_ALGORITHM", "eddsa")).jwt().enabled()).isTrue();
    assertThat(Config.from(Map.of("JWT_ALGORITHM", "HS999")).jwt().enabled()).isFalse();
  }

  @Test
  void theEmbeddedBufferPoolIsAnEighthOfMemoryWithinBoundsUnlessConfigured() {
    assertThat(Config.from(Map.of()).postgres().embeddedSharedBuffersMb()).isBetween(128, 1024);
    assertThat(Config.from(Map.of("QUEEN_EMBEDDED_PG_SHARED_BUFFERS_MB", "300")).postgres().embeddedSharedBuffersMb())
        .isEqualTo(300);
    assertThat(Config.from(Map.of("QUEEN_EMBEDDED_PG_SHARED_BUFFERS_MB", "16")).postgres().embeddedSharedBuffersMb())
        .isEqualTo(16);
    assertThatThrownBy(() -> Config.from(Map.of("QUEEN_EMBEDDED_PG_SHARED_BUFFERS_MB", "1")))
        .isInstanceOf(ConfigException.class)
        .hasMessage("QUEEN_EMBEDDED_PG_SHARED_BUFFERS_MB='1' is not accepted: an integer of at least 16 (32-bit)");
  }

  /**
   * Issue 34: no numeric setting is clamped into its range any more (DB_POOL_SIZE=0 used to boot with a pool of 1):
   * the value just outside the range stops the boot naming the range, the bound itself is taken as given.
   */
  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "DB_POOL_SIZE                       | 0     | 1     | an integer from 1 to 10000",
      "DB_POOL_SIZE                       | -3    | 10000 | an integer from 1 to 10000",
      "DB_POOL_SIZE                       | 10001 | 1     | an integer from 1 to 10000",
      "QUEEN_EMBEDDED_PG_SHARED_BUFFERS_MB | 15   | 16    | an integer of at least 16 (32-bit)",
      "QUEEN_STMT_TIMEOUT_MS              | -1    | 0     | an integer of at least 0 (32-bit)",
      "QUEEN_READ_MAX_LAG_MS              | -1    | 0     | an integer of at least 0 (32-bit)",
      "QUEEN_PG_CHECK_INTERVAL_MS         | 99    | 100   | an integer from 100 to 60000",
      "QUEEN_PG_CHECK_INTERVAL_MS         | 60001 | 60000 | an integer from 100 to 60000",
      "QUEEN_PG_CHECK_TIMEOUT_MS          | 99    | 100   | an integer from 100 to 60000",
      "QUEEN_PG_FAILOVER_WAIT_MS          | 600001 | 0    | an integer from 0 to 600000",
      "QUEEN_MAX_BODY_BYTES               | 0     | 1     | an integer of at least 1 (32-bit)",
      "QUEEN_MAX_BODY_BYTES               | 2147483648 | 2147483647 | an integer of at least 1 (32-bit)",
      "QUEEN_HTTP_INSTANCES               | 0     | 1     | an integer of at least 1 (32-bit)",
      "QUEEN_EVENT_LOOPS                  | 0     | 1     | an integer of at least 1 (32-bit)",
      "DEFAULT_TIMEOUT                    | -1    | 0     | an integer of at least 0 (32-bit)",
      "POP_DEFAULT_TIMEOUT_MS             | -1    | 0     | an integer of at least 0 (32-bit)",
      "POP_WAIT_INITIAL_INTERVAL_MS       | 0     | 1     | an integer of at least 1",
      "POP_WAIT_BACKOFF_THRESHOLD         | -1    | 0     | an integer of at least 0 (32-bit)",
      "POP_WAIT_BACKOFF_MULTIPLIER        | 0.5   | 1     | a finite number of at least 1",
      "POP_WAIT_MAX_INTERVAL_MS           | 0     | 1     | an integer of at least 1",
      "QUEEN_SEGMENT_CACHE_ENTRIES        | 15    | 16    | an integer of at least 16 (32-bit)",
      "QUEEN_DEDUP_CACHE_MB               | -1    | 0     | an integer of at least 0 (32-bit)",
      "QUEEN_PUSH_BUNDLES_IN_FLIGHT       | 0     | 1     | an integer of at least 1 (32-bit)",
      "QUEEN_PUSH_PARTITIONS_PER_BUNDLE   | 0     | 1     | an integer of at least 1 (32-bit)",
      "QUEEN_PUSH_FUSION_HOLD_US          | -1    | 0     | an integer of at least 0 (32-bit)",
      "FILE_BUFFER_FLUSH_MS               | 9     | 10    | an integer of at least 10",
      "FILE_BUFFER_EVENTS_PER_FILE        | 0     | 1     | an integer of at least 1 (32-bit)",
      "RETENTION_INTERVAL                 | 99    | 100   | an integer of at least 100",
      "RETENTION_BATCH_SIZE               | 0     | 1     | an integer of at least 1 (32-bit)",
      "QUEEN_CACHE_REFRESH_INTERVAL_MS    | 999   | 1000  | an integer of at least 1000",
      "QUEEN_REDRIVE_STALE_MS             | 999   | 1000  | an integer of at least 1000",
      "QUEEN_HTTP_IDLE_TIMEOUT_S          | -1    | 0     | an integer of at least 0 (32-bit)",
      "QUEEN_HTTP_HEADER_TIMEOUT_MS       | -1    | 0     | an integer of at least 0 (32-bit)",
      "QUEEN_HTTP_MAX_CONNECTIONS         | -1    | 0     | an integer of at least 0 (32-bit)",
      "JWT_JWKS_REFRESH_INTERVAL          | 4     | 5     | an integer of at least 5 (32-bit)",
      "JWT_JWKS_TIMEOUT_MS                | 0     | 1     | an integer of at least 1 (32-bit)",
      "JWT_CLOCK_SKEW                     | -1    | 0     | an integer of at least 0",
  })
  void aValueOutOfItsRangeStopsTheBootAndItsBoundIsTakenAsGiven(String variable, String rejected, String bound,
                                                               String accepted) {
    assertThatThrownBy(() -> Config.from(Map.of(variable, rejected)))
        .isInstanceOf(ConfigException.class)
        .hasMessage(variable + "='" + rejected + "' is not accepted: " + accepted);
    Number taken = READ.get(variable).apply(Config.from(Map.of(variable, bound)));
    assertThat(new java.math.BigDecimal(taken.toString())).as("%s=%s is taken as given", variable, bound)
        .isEqualByComparingTo(new java.math.BigDecimal(bound));
  }

  /** Where each numeric setting lands in the configuration. */
  private static final Map<String, java.util.function.Function<Config, Number>> READ = Map.ofEntries(
      Map.entry("DB_POOL_SIZE", c -> c.postgres().poolSize()),
      Map.entry("QUEEN_EMBEDDED_PG_SHARED_BUFFERS_MB", c -> c.postgres().embeddedSharedBuffersMb()),
      Map.entry("QUEEN_STMT_TIMEOUT_MS", c -> c.postgres().statementTimeoutMs()),
      Map.entry("QUEEN_READ_MAX_LAG_MS", c -> c.postgres().readMaxLagMs()),
      Map.entry("QUEEN_PG_CHECK_INTERVAL_MS", c -> c.postgres().checkIntervalMs()),
      Map.entry("QUEEN_PG_CHECK_TIMEOUT_MS", c -> c.postgres().checkTimeoutMs()),
      Map.entry("QUEEN_PG_FAILOVER_WAIT_MS", c -> c.postgres().failoverWaitMs()),
      Map.entry("QUEEN_MAX_BODY_BYTES", c -> c.http().maxBodyBytes()),
      Map.entry("QUEEN_HTTP_INSTANCES", c -> c.http().instances()),
      Map.entry("QUEEN_EVENT_LOOPS", c -> c.http().eventLoops()),
      Map.entry("DEFAULT_TIMEOUT", c -> c.pop().defaultTimeoutMs()),
      Map.entry("POP_DEFAULT_TIMEOUT_MS", c -> c.pop().defaultTimeoutMs()),
      Map.entry("POP_WAIT_INITIAL_INTERVAL_MS", c -> c.pop().waitInitialIntervalMs()),
      Map.entry("POP_WAIT_BACKOFF_THRESHOLD", c -> c.pop().waitBackoffThreshold()),
      Map.entry("POP_WAIT_BACKOFF_MULTIPLIER", c -> c.pop().waitBackoffMultiplier()),
      Map.entry("POP_WAIT_MAX_INTERVAL_MS", c -> c.pop().waitMaxIntervalMs()),
      Map.entry("QUEEN_SEGMENT_CACHE_ENTRIES", c -> c.engine().segmentCacheEntries()),
      Map.entry("QUEEN_DEDUP_CACHE_MB", c -> c.engine().dedupCacheMb()),
      Map.entry("QUEEN_PUSH_BUNDLES_IN_FLIGHT", c -> c.engine().pushBundlesInFlight()),
      Map.entry("QUEEN_PUSH_PARTITIONS_PER_BUNDLE", c -> c.engine().pushPartitionsPerBundle()),
      Map.entry("QUEEN_PUSH_FUSION_HOLD_US", c -> c.engine().pushFusionHoldMicros()),
      Map.entry("FILE_BUFFER_FLUSH_MS", c -> c.spool().flushMs()),
      Map.entry("FILE_BUFFER_EVENTS_PER_FILE", c -> c.spool().eventsPerFile()),
      Map.entry("RETENTION_INTERVAL", c -> c.maintenance().retentionIntervalMs()),
      Map.entry("RETENTION_BATCH_SIZE", c -> c.maintenance().retentionBatchSize()),
      Map.entry("QUEEN_CACHE_REFRESH_INTERVAL_MS", c -> c.maintenance().cacheRefreshIntervalMs()),
      Map.entry("QUEEN_REDRIVE_STALE_MS", c -> c.maintenance().redriveStaleMs()),
      Map.entry("QUEEN_HTTP_IDLE_TIMEOUT_S", c -> c.exposure().idleTimeoutS()),
      Map.entry("QUEEN_HTTP_HEADER_TIMEOUT_MS", c -> c.exposure().headerTimeoutMs()),
      Map.entry("QUEEN_HTTP_MAX_CONNECTIONS", c -> c.exposure().maxConnections()),
      Map.entry("JWT_JWKS_REFRESH_INTERVAL", c -> c.jwt().jwksRefreshIntervalS()),
      Map.entry("JWT_JWKS_TIMEOUT_MS", c -> c.jwt().jwksTimeoutMs()),
      Map.entry("JWT_CLOCK_SKEW", c -> c.jwt().clockSkewS()));

  @Test
  void theDedupCacheSwitchIsABoolean() {
    assertThat(Config.from(Map.of()).engine().dedupCacheMb()).isEqualTo(EngineSettings.DEFAULT_DEDUP_CACHE_MB);
    assertThat(Config.from(Map.of("QUEEN_DEDUP_CACHE", "0")).engine().dedupCacheMb()).isZero();
    assertThat(Config.from(Map.of("QUEEN_DEDUP_CACHE", "off", "QUEEN_DEDUP_CACHE_MB", "64")).engine().dedupCacheMb())
        .isZero();
    assertThat(Config.from(Map.of("QUEEN_DEDUP_CACHE", "on", "QUEEN_DEDUP_CACHE_MB", "64")).engine().dedupCacheMb())
        .isEqualTo(64);
    assertThatThrownBy(() -> Config.from(Map.of("QUEEN_DEDUP_CACHE", "none")))
        .isInstanceOf(ConfigException.class)
        .hasMessage("QUEEN_DEDUP_CACHE='none' is not accepted: a boolean (true/false, 1/0, yes/no, on/off)");
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
