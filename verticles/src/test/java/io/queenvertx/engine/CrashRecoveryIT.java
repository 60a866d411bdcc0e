package io.queenvertx.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node killed with SIGKILL loses nothing it answered for: a separate broker JVM on its own embedded PostgreSQL is
 * killed after a {@code queued} push and an ack, and a new JVM on the same data folder serves both facts.
 */
class CrashRecoveryIT {
  static final Duration BOOT = Duration.ofSeconds(90);
  static final HttpClient HTTP = io.queenvertx.testing.TestNode.HTTP;

  @TempDir
  Path dataDir;

  @Test
  void whatANodeAnsweredBeforeAKill9SurvivesARestart() throws Exception {
    String q = Wire.queue("crash");
    String classpath = snapshotClasspath(dataDir.resolve("cp"));
    try {
      recoverAfterKill9(q, classpath);
    } finally {
      Broker.stopOrphanPostgres(dataDir); // a failed step must not leave a PostgreSQL running on a deleted folder
    }
  }

  private void recoverAfterKill9(String q, String classpath) throws Exception {
    Broker first = Broker.start(dataDir, "first", classpath);
    String messageId;
    try {
      var r = first.post("/api/v1/push", new JsonObject().put("items", new JsonArray()
          .add(Wire.item(q, null, new JsonObject().put("n", 0), "acked-before-crash"))
          .add(Wire.item(q, null, new JsonObject().put("n", 1), "queued-before-crash"))));
      assertThat(r.statusCode()).isEqualTo(201);
      JsonArray res = new JsonArray(r.body());
      assertThat(res.getJsonObject(0).getString("status")).isEqualTo("queued");
      assertThat(res.getJsonObject(1).getString("status")).isEqualTo("queued");
      messageId = res.getJsonObject(1).getString("message_id");

      var p = first.get("/api/v1/pop/queue/" + q + "?batch=1");
      assertThat(p.statusCode()).isEqualTo(200);
      JsonObject pop = new JsonObject(p.body());
      var a = first.post("/api/v1/ack", Wire.ack("acked-before-crash", pop.getString("partitionId"), "completed",
          pop.getString("leaseId")));
      assertThat(new JsonArray(a.body()).getJsonObject(0).getBoolean("success")).isTrue();
    } finally {
      first.kill9();
    }

    Broker second = Broker.start(dataDir, "second", classpath);
    try {
      var p = second.get("/api/v1/pop/queue/" + q + "?batch=10");
      assertThat(p.statusCode()).as("pop after restart: %s", p.body()).isEqualTo(200);
      var msgs = new JsonObject(p.body()).getJsonArray("messages");
      assertThat(msgs).hasSize(1);
      JsonObject m = msgs.getJsonObject(0);
      assertThat(m.getString("transactionId")).as("the acked message stays acked").isEqualTo("queued-before-crash");
      assertThat(m.getString("id")).isEqualTo(messageId);
      assertThat(m.getJsonObject("data")).isEqualTo(new JsonObject().put("n", 1));
    } finally {
      second.stop();
    }
  }

  /**
   * The test classpath with every directory entry (target/classes of the modules) copied aside first: the child JVM
   * loads classes lazily for seconds, and a rebuild of the working tree meanwhile must not pull them from under it.
   */
  private static String snapshotClasspath(Path into) throws IOException {
    List<String> out = new ArrayList<>();
    int n = 0;
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      Path src = Path.of(entry);
      if (!Files.isDirectory(src)) {
        out.add(entry);
        continue;
      }
      Path dst = into.resolve(Integer.toString(n++));
      try (var walk = Files.walk(src)) {
        for (Path p : walk.toList()) {
          Path target = dst.resolve(src.relativize(p).toString());
          if (Files.isDirectory(p)) Files.createDirectories(target);
          else Files.copy(p, target);
        }
      }
      out.add(dst.toString());
    }
    return String.join(File.pathSeparator, out);
  }

  /** One broker JVM: {@code java -cp <test classpath> io.queenvertx.boot.Main}, embedding its own PostgreSQL. */
  private record Broker(Process process, String base, Path dataDir) {
    static Broker start(Path dataDir, String name, String classpath) throws Exception {
      int port = TestNode.freePort();
      List<String> cmd = new ArrayList<>();
      cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      cmd.add("-Xmx512m");
      cmd.add("-cp");
      cmd.add(classpath);
      cmd.add("io.queenvertx.boot.Main");
      var pb = new ProcessBuilder(cmd).redirectErrorStream(true)
          .redirectOutput(dataDir.resolve(name + ".log").toFile());
      Map<String, String> env = pb.environment();
      env.keySet().removeIf(k -> k.startsWith("PG_") || k.startsWith("QUEEN_") || k.startsWith("JWT_"));
      env.put("PORT", Integer.toString(port));
      env.put("QUEEN_BIND_ADDR", "127.0.0.1");
      env.put("QUEEN_DATA_DIR", dataDir.resolve("data").toString());
      env.put("FILE_BUFFER_DIR", dataDir.resolve("spool").toString());
      env.put("DB_POOL_SIZE", "8");
      env.put("QUEEN_HTTP_INSTANCES", "1");
      Process process = pb.start();
      var broker = new Broker(process, "http://127.0.0.1:" + port, dataDir);
      broker.awaitHealthy(name);
      return broker;
    }

    private void awaitHealthy(String name) throws Exception {
      try {
        org.awaitility.Awaitility.await().atMost(BOOT).pollInterval(java.time.Duration.ofMillis(250))
            .until(() -> !process.isAlive() || healthy());
      } catch (org.awaitility.core.ConditionTimeoutException e) {
        stop();
        throw new AssertionError(name + " broker was not healthy within " + BOOT + ":\n" + log(name));
      }
      if (!process.isAlive()) {
        stop();
        throw new AssertionError(name + " broker exited with " + process.exitValue() + ":\n" + log(name));
      }
    }

    private boolean healthy() {
      try {
        return get("/health").statusCode() == 200;
      } catch (IOException e) {
        return false; // not listening yet
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }

    private String log(String name) {
      try {
        String s = Files.readString(dataDir.resolve(name + ".log"));
        return s.length() > 8000 ? s.substring(s.length() - 8000) : s;
      } catch (IOException e) {
        return "(no log)";
      }
    }

    HttpResponse<String> get(String path) throws Exception {
      return HTTP.send(HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30)).GET().build(),
          HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> post(String path, JsonObject body) throws Exception {
      return HTTP.send(HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30))
          .header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString(body.encode())).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** SIGKILL: no shutdown hook runs; the embedded PostgreSQL's watchdog stops it (the next node stops any survivor). */
    void kill9() throws InterruptedException {
      process.destroyForcibly();
      process.waitFor();
    }

    /** SIGTERM: the shutdown hook stops the node and its embedded PostgreSQL; any orphan is stopped by pid. */
    void stop() throws IOException, InterruptedException {
      process.destroy();
      if (!process.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)) {
        process.destroyForcibly();
        process.waitFor();
      }
      stopOrphanPostgres(dataDir);
    }

    /** Stops the embedded PostgreSQL a killed broker left on {@code dataDir}, by the pid in its postmaster.pid. */
    static void stopOrphanPostgres(Path dataDir) throws IOException, InterruptedException {
      File pidFile = dataDir.resolve("data/pg/postmaster.pid").toFile();
      if (pidFile.exists()) {
        long pid = Long.parseLong(Files.readAllLines(pidFile.toPath()).get(0).trim());
        var orphan = ProcessHandle.of(pid).filter(ProcessHandle::isAlive)
            .filter(h -> h.info().command().orElse("").contains("postgres"));
        if (orphan.isPresent()) {
          orphan.get().destroy();
          try {
            orphan.get().onExit().get(30, java.util.concurrent.TimeUnit.SECONDS);
          } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            orphan.get().destroyForcibly();
          }
        }
      }
    }
  }
}
