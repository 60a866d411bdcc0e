package io.queenvertx.testing;

import io.queenvertx.boot.Migrations;
import io.queenvertx.kernel.Config;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One real PostgreSQL per test JVM: a Testcontainers container where a Docker engine exists, otherwise the embedded
 * (zonky) server, which also works as root. Tests that need isolation create a database of their own inside it:
 * {@link #fresh()} (migrated, a copy of a template) or {@link #empty()} (for the migration tests).
 */
public final class TestDatabase {
  private static volatile TestDatabase instance;
  private static final AtomicInteger SEQ = new AtomicInteger();

  private final String host;
  private final int port;
  private final String user;
  private final String password;
  private final String adminDatabase;
  private final AutoCloseable handle;
  private final java.util.Set<String> migrated = java.util.concurrent.ConcurrentHashMap.newKeySet();
  private String template;
  private String shared;

  private TestDatabase(String host, int port, String adminDatabase, String user, String password,
                       AutoCloseable handle) {
    this.host = host;
    this.adminDatabase = adminDatabase;
    this.port = port;
    this.user = user;
    this.password = password;
    this.handle = handle;
  }

  public static TestDatabase get() {
    if (instance == null) {
      synchronized (TestDatabase.class) {
        if (instance == null) instance = start();
      }
    }
    return instance;
  }

  private static TestDatabase start() {
    try {
      if (dockerAvailable()) {
        var pg = new org.testcontainers.postgresql.PostgreSQLContainer("postgres:16-alpine")
            .withCommand("postgres", "-c", "max_connections=600");
        pg.start();
        return new TestDatabase(pg.getHost(), pg.getFirstMappedPort(), pg.getDatabaseName(), pg.getUsername(),
            pg.getPassword(), pg::stop);
      }
      var pg = EmbeddedPostgres.builder()
          .setServerConfig("max_connections", "600")
          .setServerConfig("shared_buffers", "256MB")
          .setServerConfig("fsync", "off")
          .start();
      var db = new TestDatabase("127.0.0.1", pg.getPort(), "postgres", "postgres", "postgres", pg);
      Runtime.getRuntime().addShutdownHook(new Thread(() -> {
        try {
          pg.close();
        } catch (Exception ignored) {
          // the JVM is going away
        }
      }));
      return db;
    } catch (Exception e) {
      throw new IllegalStateException("could not start a PostgreSQL for the tests", e);
    }
  }

  private static boolean dockerAvailable() {
    if (!dockerConceivable()) return false;
    try {
      return org.testcontainers.DockerClientFactory.instance().isDockerAvailable();
    } catch (Throwable t) {
      return false;
    }
  }

  /**
   * Whether a Docker engine can be there at all: a {@code DOCKER_HOST}, a Testcontainers configuration file, or one of
   * the sockets Testcontainers looks for. Its own probe takes seconds of each test JVM's start (about 5 s, 1 s of CPU,
   * on a busy two-core machine) also where no engine exists, so it runs only when this finds a trace of one.
   */
  private static boolean dockerConceivable() {
    if (System.getenv("DOCKER_HOST") != null) return true;
    String home = System.getProperty("user.home", "");
    String runtime = System.getenv().getOrDefault("XDG_RUNTIME_DIR", "/nonexistent");
    return java.util.stream.Stream.of(Path.of(home, ".testcontainers.properties"), Path.of("/var/run/docker.sock"),
            Path.of("/run/docker.sock"), Path.of(runtime, "docker.sock"),
            Path.of(home, ".docker", "run", "docker.sock"), Path.of(home, ".docker", "desktop", "docker.sock"),
            Path.of(home, ".colima", "docker.sock"), Path.of(home, ".colima", "default", "docker.sock"),
            Path.of(home, ".rd", "docker.sock"))
        .anyMatch(Files::exists);
  }

  /**
   * The shared database every ordinary test uses; tests keep apart by unique queue names. Like {@link #fresh()} it
   * is a copy of the migrated template, made on first use.
   */
  public Config.Database shared() {
    return database(sharedName());
  }

  /**
   * A new database of its own holding the broker's schema exactly as a node's first boot leaves it, for tests that
   * need isolation (counting queries, switches shared by every node of a database). It is a copy ({@code CREATE
   * DATABASE ... TEMPLATE}) of a template this JVM migrated once with {@link Migrations#apply}, so no test pays for
   * the whole migration chain again.
   */
  public Config.Database fresh() {
    return database(copyOfTemplate(newName()));
  }

  /** A new database with nothing in it, for tests of the migrations themselves (a first boot, an upgrade). */
  public Config.Database empty() {
    String name = newName();
    execute(admin(), "CREATE DATABASE " + name);
    return database(name);
  }

  /**
   * Whether {@code db} is the shared database or one of {@link #fresh()}'s: migrated by this JVM with the migrations
   * of this build, so a node started on it has nothing to apply ({@link TestNode} then boots it with
   * {@code QUEEN_APPLY_SCHEMA=false}).
   */
  public static boolean migrated(Config.Database db) {
    TestDatabase t = instance;
    return t != null && db.host().equals(t.host) && db.port() == t.port && t.migrated.contains(db.database());
  }

  private synchronized String sharedName() {
    if (shared == null) shared = copyOfTemplate("shared_" + ProcessHandle.current().pid());
    return shared;
  }

  private synchronized String copyOfTemplate(String name) {
    if (template == null) {
      String t = "template_" + ProcessHandle.current().pid();
      execute(admin(), "CREATE DATABASE " + t);
      try {
        Migrations.apply(database(t));
      } catch (java.sql.SQLException e) {
        throw new IllegalStateException("could not migrate the template database", e);
      }
      template = t;
    }
    // nobody connects to the template after its migration: PostgreSQL copies a database no session is using
    execute(admin(), "CREATE DATABASE " + name + " TEMPLATE " + template);
    migrated.add(name);
    return name;
  }

  /** The server's maintenance database, where databases are created (never a test's own). */
  private Config.Database admin() {
    return database(adminDatabase);
  }

  private String newName() {
    return "t" + ProcessHandle.current().pid() + "_" + SEQ.incrementAndGet();
  }

  private Config.Database database(String name) {
    return new Config.Database(host, port, name, user, password, false);
  }

  private static java.sql.Connection connect(Config.Database db) throws java.sql.SQLException {
    return DriverManager.getConnection("jdbc:postgresql://" + db.host() + ":" + db.port() + "/" + db.database(),
        db.user(), db.password());
  }

  /** Runs one SQL statement through JDBC against {@code db} (test set-up and inspection only). */
  public static long queryLong(Config.Database db, String sql) {
    try (var c = connect(db); var st = c.createStatement(); var rs = st.executeQuery(sql)) {
      return rs.next() ? rs.getLong(1) : 0L;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** The first column of the first row as text, or null (test inspection only). */
  public static String queryString(Config.Database db, String sql) {
    try (var c = connect(db); var st = c.createStatement(); var rs = st.executeQuery(sql)) {
      return rs.next() ? rs.getString(1) : null;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * On one connection: runs {@code setup} (a session-level statement), then {@code statements} in one transaction,
   * commits, and returns the first column of each statement's first row (null when it has none), then the first
   * column of {@code after} run once the transaction has ended (test inspection only).
   */
  public static List<String> inTransaction(Config.Database db, String setup, List<String> statements, String after) {
    try (var c = connect(db)) {
      List<String> out = new ArrayList<>();
      try (var st = c.createStatement()) {
        st.execute(setup);
      }
      c.setAutoCommit(false);
      try (var st = c.createStatement()) {
        for (String sql : statements) {
          try (var rs = st.executeQuery(sql)) {
            out.add(rs.next() ? rs.getString(1) : null);
          }
        }
      }
      c.commit();
      c.setAutoCommit(true);
      try (var st = c.createStatement(); var rs = st.executeQuery(after)) {
        out.add(rs.next() ? rs.getString(1) : null);
      }
      return out;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  public static void execute(Config.Database db, String sql) {
    try (var c = connect(db); var st = c.createStatement()) {
      st.execute(sql);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
