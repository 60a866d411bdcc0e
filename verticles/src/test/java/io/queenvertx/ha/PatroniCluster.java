package io.queenvertx.ha;

import io.queenvertx.kernel.Config;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;

/**
 * A real replicated PostgreSQL for the failover tests: one etcd and three PostgreSQL 15 servers under Patroni on
 * loopback, started and stopped through the repository's own {@code deploy/ha/local-ha.sh} (so the script is tested
 * too) in a temporary folder and on a free port range. Members are {@code pg1}, {@code pg2}, {@code pg3}; their roles
 * come from Patroni's REST API.
 */
final class PatroniCluster implements AutoCloseable {
  static final Path SCRIPT = Path.of("..", "deploy", "ha", "local-ha.sh").toAbsolutePath().normalize();
  static final List<String> MEMBERS = List.of("pg1", "pg2", "pg3");
  private static final Duration SCRIPT_LIMIT = Duration.ofMinutes(4);

  private final Path dir;
  private final int base;
  private final Map<String, String> env = new HashMap<>();
  private Thread reaper;

  private PatroniCluster(Path dir, int base) {
    this.dir = dir;
    this.base = base;
  }

  /** Whether Patroni, etcd and PostgreSQL 15 are installed (Debian packages patroni, etcd-server, postgresql-15). */
  static boolean installed() {
    return Files.isExecutable(Path.of("/usr/bin/patroni")) && Files.isExecutable(Path.of("/usr/bin/etcd"))
        && Files.isExecutable(Path.of("/usr/lib/postgresql/15/bin/postgres"));
  }

  /**
   * Skips the calling test class when the packages are missing on a developer's machine; under CI (environment
   * variable {@code CI} set), where .ci/run installs them, their absence fails instead.
   */
  static void assumeInstalled() {
    if (installed()) return;
    String ci = System.getenv("CI");
    String what = "Patroni, etcd and PostgreSQL 15 are not installed (apt-get install patroni etcd-server "
        + "postgresql-15; .ci/run installs them)";
    if (ci != null && !ci.isBlank() && !ci.equalsIgnoreCase("false")) throw new IllegalStateException(what);
    org.junit.jupiter.api.Assumptions.abort(what + ": the failover tests are skipped");
  }

  /** Starts a cluster ({@code local-ha.sh up}): a primary and a synchronous standby exist when this returns. */
  static PatroniCluster up() throws Exception {
    Path dir = Files.createTempDirectory(Path.of("/tmp"), "queen-ha-");
    var c = new PatroniCluster(dir, freeRange(22));
    // a test JVM stopped from outside must not leave etcd, Patroni and PostgreSQL running
    c.reaper = new Thread(c::close, "patroni-cluster-reaper");
    Runtime.getRuntime().addShutdownHook(c.reaper);
    try {
      for (String line : c.script("up").split("\n")) {
        int eq = line.indexOf('=');
        if (line.startsWith("PG_") && eq > 0) c.env.put(line.substring(0, eq), line.substring(eq + 1).trim());
      }
    } catch (Exception e) {
      c.close();
      throw e;
    }
    return c;
  }

  /** The broker's {@code PG_*} lines printed by {@code up}. */
  Map<String, String> env() {
    return Map.copyOf(env);
  }

  Path dir() {
    return dir;
  }

  String password() {
    return env.get("PG_PASSWORD");
  }

  int port(String member) {
    return base + MEMBERS.indexOf(member);
  }

  Config.Host host(String member) {
    return new Config.Host("127.0.0.1", port(member));
  }

  /** {@code PG_HOST}/{@code PG_PORT} listing the members in the given order. */
  Map<String, String> envListing(String... members) {
    List<String> hosts = new ArrayList<>();
    List<String> ports = new ArrayList<>();
    for (String m : members) {
      hosts.add("127.0.0.1");
      ports.add(Integer.toString(port(m)));
    }
    Map<String, String> e = new HashMap<>(env);
    e.put("PG_HOST", String.join(",", hosts));
    e.put("PG_PORT", String.join(",", ports));
    e.putIfAbsent("PG_USER", "postgres");
    return e;
  }

  /** A broker node on this cluster, given the members in this order (and {@code extra} settings). */
  io.queenvertx.testing.TestNode node(Map<String, String> extra, String... order) {
    Map<String, String> e = new HashMap<>(envListing(order));
    e.put("FILE_BUFFER_FLUSH_MS", "100");
    e.putAll(extra);
    return io.queenvertx.testing.TestNode.startExternal(e);
  }

  /** Runs {@code local-ha.sh <command>}; its output, or an exception with it when it fails. */
  String script(String command) throws Exception {
    var pb = new ProcessBuilder("bash", SCRIPT.toString(), command).redirectErrorStream(true);
    pb.environment().put("HA_DIR", dir.toString());
    pb.environment().put("HA_BASE_PORT", Integer.toString(base));
    Process p = pb.start();
    var out = new java.io.ByteArrayOutputStream();
    Thread reader = new Thread(() -> {
      try {
        p.getInputStream().transferTo(out);
      } catch (IOException ignored) {
        // the process ended
      }
    });
    reader.start();
    if (!p.waitFor(SCRIPT_LIMIT.toSeconds(), TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IllegalStateException("local-ha.sh " + command + " did not finish within " + SCRIPT_LIMIT);
    }
    reader.join(10_000);
    String text = out.toString(StandardCharsets.UTF_8);
    if (p.exitValue() != 0) {
      throw new IllegalStateException("local-ha.sh " + command + " exited " + p.exitValue() + ":\n" + text);
    }
    return text;
  }

  /** Member name to {@code role/state} as Patroni's REST API of any member answers now (empty map if none does). */
  Map<String, String> roles() {
    for (int i = 0; i < MEMBERS.size(); i++) {
      try {
        var r = io.queenvertx.testing.TestNode.HTTP.send(java.net.http.HttpRequest.newBuilder(
                java.net.URI.create("http://127.0.0.1:" + (base + 10 + i) + "/cluster")).timeout(Duration.ofSeconds(2))
            .build(), java.net.http.HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) continue;
        Map<String, String> out = new HashMap<>();
        JsonArray members = new JsonObject(r.body()).getJsonArray("members", new JsonArray());
        for (int m = 0; m < members.size(); m++) {
          JsonObject o = members.getJsonObject(m);
          out.put(o.getString("name"), o.getString("role") + "/" + o.getString("state"));
        }
        return out;
      } catch (Exception e) {
        // try the next member's API
      }
    }
    return Map.of();
  }

  /** The member that is the running primary now, or null. */
  String leader() {
    for (var e : roles().entrySet()) if (e.getValue().equals("leader/running")) return e.getKey();
    return null;
  }

  /** Waits (at most {@code limit}) for a running primary other than {@code not} (null: any); returns it. */
  String awaitLeader(String not, Duration limit) {
    String[] found = {null};
    Awaitility.await("a running primary other than " + not).atMost(limit).pollInterval(Duration.ofMillis(200))
        .until(() -> {
          found[0] = leader();
          return found[0] != null && !found[0].equals(not);
        });
    return found[0];
  }

  /** Waits for a running primary and a synchronous standby (the cluster healthy again). */
  void awaitHealthy(Duration limit) {
    Awaitility.await("a primary and a synchronous standby").atMost(limit).pollInterval(Duration.ofMillis(300))
        .until(() -> {
          var r = roles();
          return r.containsValue("leader/running") && (r.containsValue("sync_standby/running")
              || r.containsValue("sync_standby/streaming"));
        });
  }

  /** The pid of the member's postmaster (from its data folder). */
  long postmasterPid(String member) throws IOException {
    return Long.parseLong(Files.readAllLines(dir.resolve(member).resolve("data").resolve("postmaster.pid")).get(0)
        .trim());
  }

  /** The pid of the member's Patroni. */
  long patroniPid(String member) throws IOException {
    return Long.parseLong(Files.readString(dir.resolve(member + ".pid")).trim());
  }

  /**
   * Sends {@code signal} (STOP, CONT, KILL) to a whole member as a machine would feel it: its Patroni, its postmaster
   * and every process of that PostgreSQL.
   */
  void signalMember(String member, String signal) throws Exception {
    List<String> pids = new ArrayList<>();
    pids.add(Long.toString(patroniPid(member)));
    long pm = postmasterPid(member);
    pids.add(Long.toString(pm));
    ProcessHandle.of(pm).ifPresent(h -> h.descendants().forEach(d -> pids.add(Long.toString(d.pid()))));
    List<String> cmd = new ArrayList<>(List.of("kill", "-" + signal));
    cmd.addAll(pids);
    new ProcessBuilder(cmd).inheritIO().start().waitFor(10, TimeUnit.SECONDS);
  }

  /** Runs one SQL statement as the superuser on a member; the first column of the first row, as text. */
  String sql(String member, String statement) throws Exception {
    var props = new java.util.Properties();
    props.setProperty("user", env.getOrDefault("PG_USER", "postgres"));
    props.setProperty("password", password());
    props.setProperty("connectTimeout", "5");
    props.setProperty("socketTimeout", "15");
    try (var c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + port(member) + "/postgres", props);
         var st = c.createStatement(); var rs = st.executeQuery(statement)) {
      return rs.next() ? rs.getString(1) : null;
    }
  }

  /**
   * Stops a standby's WAL replay by stopping (SIGSTOP) its startup process, which replays WAL; the standby keeps
   * receiving WAL and answering queries. (pg_wal_replay_pause() would not do: Patroni resumes a paused replay of
   * PostgreSQL 14+ on its next loop.) {@link #resumeReplay} continues it.
   */
  void stopReplay(String member) throws Exception {
    new ProcessBuilder("kill", "-STOP", Long.toString(startupPid(member))).inheritIO().start()
        .waitFor(10, TimeUnit.SECONDS);
  }

  void resumeReplay(String member) throws Exception {
    new ProcessBuilder("kill", "-CONT", Long.toString(startupPid(member))).inheritIO().start()
        .waitFor(10, TimeUnit.SECONDS);
  }

  /** The pid of a standby's startup (recovery) process. */
  private long startupPid(String member) throws IOException {
    long pm = postmasterPid(member);
    for (ProcessHandle h : ProcessHandle.of(pm).orElseThrow().children().toList()) {
      String cmd = Files.readString(Path.of("/proc", Long.toString(h.pid()), "cmdline")).replace('\0', ' ');
      if (cmd.contains("startup")) return h.pid();
    }
    throw new IllegalStateException(member + " has no startup process: not a standby");
  }

  /** Stops and removes the cluster ({@code local-ha.sh down}); never throws. */
  @Override
  public synchronized void close() {
    if (reaper != null && Thread.currentThread() != reaper) {
      try {
        Runtime.getRuntime().removeShutdownHook(reaper);
      } catch (IllegalStateException shuttingDown) {
        // the hook runs (or ran) this
      }
    }
    if (!Files.isDirectory(dir)) return;
    keepLogs();
    try {
      // a member left frozen by a failed test would keep down from stopping it
      for (String m : MEMBERS) {
        try {
          signalMember(m, "CONT");
        } catch (Exception ignored) {
          // not running
        }
      }
      script("down");
    } catch (Exception e) {
      System.out.println("[ha] local-ha.sh down failed: " + e.getMessage());
    }
  }

  /** Copies the etcd and Patroni (with PostgreSQL) logs to target/ha-logs/, the evidence when a scenario failed. */
  private void keepLogs() {
    try {
      Path to = Path.of("target", "ha-logs", dir.getFileName().toString());
      Files.createDirectories(to);
      try (var logs = Files.list(dir)) {
        for (Path f : logs.filter(p -> p.getFileName().toString().endsWith(".log")).toList()) {
          Files.copy(f, to.resolve(f.getFileName()), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
      }
      System.out.println("[ha] cluster logs kept in " + to.toAbsolutePath());
    } catch (IOException e) {
      System.out.println("[ha] cluster logs not kept: " + e);
    }
  }

  /** A base port with {@code count} free ports after it, below the ephemeral range. */
  private static int freeRange(int count) {
    var random = java.util.concurrent.ThreadLocalRandom.current();
    for (int attempt = 0; attempt < 200; attempt++) {
      int base = 20_000 + random.nextInt(12_000 - count);
      boolean free = true;
      for (int p = base; p < base + count && free; p++) {
        try (var s = new ServerSocket()) {
          s.setReuseAddress(false);
          s.bind(new java.net.InetSocketAddress("127.0.0.1", p));
        } catch (IOException busy) {
          free = false;
        }
      }
      if (free) return base;
    }
    throw new IllegalStateException("no " + count + " free ports in a row in 20000..31999");
  }
}
