package io.queenvertx.testing;

import io.queenvertx.kernel.Config;
import io.queenvertx.boot.Node;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A real broker node for integration tests: in this JVM, on a free port, against the shared test database (or the
 * database given), spoken to over real HTTP. On a database {@link TestDatabase} migrated it boots with
 * {@code QUEEN_APPLY_SCHEMA=false} unless the test says otherwise.
 */
public final class TestNode implements AutoCloseable {
  /** HTTP/1.1 like Queen's SDKs: the JDK client's default h2c upgrade is a path no client of ours takes. */
  public static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(5)).build();

  private final Node node;
  private final String base;

  private TestNode(Node node) {
    this.node = node;
    this.base = "http://127.0.0.1:" + node.config().http().port();
  }

  /** Members this node's cluster manager sees (0 when the node is not clustered). */
  public int clusterSize() {
    var cm = ((io.vertx.core.internal.VertxInternal) node.vertx()).clusterManager();
    return cm == null ? 0 : cm.getNodes().size();
  }

  /** Waits (at most 30 s) until every one of {@code nodes} sees exactly {@code members} cluster members. */
  public static void awaitMembers(int members, TestNode... nodes) {
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> {
      for (TestNode n : nodes) if (n.clusterSize() != members) return false;
      return true;
    });
  }

  public static TestNode start() {
    return start(Map.of());
  }

  public static TestNode start(Map<String, String> env) {
    return start(env, TestDatabase.get().shared());
  }

  public static TestNode start(Map<String, String> env, Config.Database db) {
    Map<String, String> all = new HashMap<>();
    all.put("PG_HOST", String.join(",", db.hosts().stream().map(Config.Host::host).toList()));
    all.put("PG_PORT", String.join(",", db.hosts().stream().map(h -> Integer.toString(h.port())).toList()));
    all.put("PG_TARGET_SESSION_ATTRS", db.target().spelling());
    all.put("PG_DATABASE", db.database());
    all.put("PG_USER", db.user());
    all.put("PG_PASSWORD", db.password());
    // a database this JVM migrated has nothing to apply: the node boots as one of a fleet whose schema is applied
    // once (the boot's own migration is tested on empty databases and embedded servers)
    if (TestDatabase.migrated(db)) all.put("QUEEN_APPLY_SCHEMA", "false");
    all.putAll(env);
    return startExternal(all);
  }

  /**
   * A node on the external PostgreSQL its {@code env} names ({@code PG_HOST}, {@code PG_URL}...), on a free port,
   * with a spool and data folder of its own, listening on loopback.
   */
  public static TestNode startExternal(Map<String, String> env) {
    Map<String, String> all = new HashMap<>();
    all.put("DB_POOL_SIZE", "16");
    all.put("QUEEN_HTTP_INSTANCES", "2");
    all.put("PORT", Integer.toString(freePort()));
    all.put("QUEEN_BIND_ADDR", "127.0.0.1"); // tests listen on loopback only (the product default is 0.0.0.0)
    try {
      all.put("FILE_BUFFER_DIR", Files.createTempDirectory("queen-spool").toString());
      all.put("QUEEN_DATA_DIR", Files.createTempDirectory("queen-data").toString());
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    all.putAll(env);
    try {
      return new TestNode(Node.start(Config.from(all)));
    } catch (Exception e) {
      throw new IllegalStateException("node did not start", e);
    }
  }

  /** Starts a node with no PG_HOST at all, so it embeds its own PostgreSQL under {@code QUEEN_DATA_DIR}. */
  public static TestNode startEmbedded(Map<String, String> env) {
    Map<String, String> all = new HashMap<>(env);
    all.putIfAbsent("PORT", Integer.toString(freePort()));
    all.putIfAbsent("DB_POOL_SIZE", "16");
    all.putIfAbsent("QUEEN_HTTP_INSTANCES", "1");
    all.putIfAbsent("QUEEN_BIND_ADDR", "127.0.0.1");
    try {
      return new TestNode(Node.start(Config.from(all)));
    } catch (Exception e) {
      throw new IllegalStateException("node did not start", e);
    }
  }

  public Node node() {
    return node;
  }

  public String baseUrl() {
    return base;
  }

  /** The node's HTTP port (for raw-socket tests). */
  public int port() {
    return node.config().http().port();
  }

  public Reply get(String path) {
    return send(HttpRequest.newBuilder(URI.create(base + path)).GET(), Map.of());
  }

  public Reply get(String path, Map<String, String> headers) {
    return send(HttpRequest.newBuilder(URI.create(base + path)).GET(), headers);
  }

  public Reply post(String path, Object body) {
    return post(path, body, Map.of());
  }

  /**
   * POSTs {@code body} (a String as is, anything else encoded as JSON) with {@code Content-Type: application/json},
   * as Queen's clients do, unless {@code headers} give their own Content-Type.
   */
  public Reply post(String path, Object body, Map<String, String> headers) {
    String text = body instanceof String s ? s : Json.encode(body);
    var b = HttpRequest.newBuilder(URI.create(base + path)).POST(HttpRequest.BodyPublishers.ofString(text));
    if (headers.keySet().stream().noneMatch("Content-Type"::equalsIgnoreCase)) {
      b.header("Content-Type", "application/json");
    }
    return send(b, headers);
  }

  public Reply delete(String path) {
    return send(HttpRequest.newBuilder(URI.create(base + path)).DELETE(), Map.of());
  }

  public Reply delete(String path, Map<String, String> headers) {
    return send(HttpRequest.newBuilder(URI.create(base + path)).DELETE(), headers);
  }

  public Reply send(HttpRequest.Builder b, Map<String, String> headers) {
    return exchange(b, headers);
  }

  /** One request with {@code headers}, answered within 60 s (headers) and 90 s (all); any node, in this JVM or not. */
  public static Reply exchange(HttpRequest.Builder b, Map<String, String> headers) {
    headers.forEach(b::header);
    b.timeout(Duration.ofSeconds(60));
    try {
      // The request timeout covers the wait for headers only; the outer deadline also bounds the body.
      var r = HTTP.sendAsync(b.build(), HttpResponse.BodyHandlers.ofString()).get(90, TimeUnit.SECONDS);
      return new Reply(r.statusCode(), r.body(), r.headers().map());
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * The value of one sample of the node's Prometheus exposition ({@code /metrics/prometheus}), e.g.
   * {@code queen_parked_long_polls}; the name must match the whole series (labels included). Fails when absent.
   */
  public double metric(String series) {
    Reply r = get("/metrics/prometheus");
    if (r.status() != 200) throw new IllegalStateException("metrics answered " + r.status() + ": " + r.body());
    for (String line : r.body().split("\n")) {
      if (line.startsWith(series + " ")) return Double.parseDouble(line.substring(series.length() + 1).trim());
    }
    throw new IllegalStateException("no sample " + series + " in the exposition");
  }

  @Override
  public void close() {
    node.close();
  }

  /**
   * A port free at the moment, chosen below Linux's ephemeral range (32768..60999): a port handed out by
   * {@code bind(0)} is an ephemeral one, which the many client sockets of a test (or of another test JVM) can take as
   * their local port between this call and the node's bind.
   */
  public static int freePort() {
    var random = java.util.concurrent.ThreadLocalRandom.current();
    for (int i = 0; i < 200; i++) {
      int port = 20_000 + random.nextInt(12_000);
      try (var s = new ServerSocket()) {
        s.setReuseAddress(false);
        s.bind(new java.net.InetSocketAddress("127.0.0.1", port));
        return port;
      } catch (IOException busy) {
        // taken: try another
      }
    }
    throw new IllegalStateException("no free port found in 20000..31999");
  }

  /** One HTTP answer. */
  public record Reply(int status, String body, Map<String, java.util.List<String>> headers) {
    public JsonObject json() {
      return new JsonObject(body);
    }

    public JsonArray array() {
      return new JsonArray(body);
    }

    public String header(String name) {
      for (var e : headers.entrySet()) {
        if (e.getKey().equalsIgnoreCase(name)) return e.getValue().isEmpty() ? null : e.getValue().get(0);
      }
      return null;
    }
  }
}
