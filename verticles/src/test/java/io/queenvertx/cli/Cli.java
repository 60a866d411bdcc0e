package io.queenvertx.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Runs qvctl for the tests: in this JVM through {@link Qvctl#run} with captured streams, or as the real
 * {@code bin/qvctl} script in a child process. Neither reads the user's config or {@code QVCTL_*} variables: the home
 * folder is an empty temporary one and the environment holds only what a test gives.
 */
final class Cli {
  private static final Path HOME;

  static {
    try {
      HOME = Files.createTempDirectory("qvctl-home");
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private Cli() {}

  /** What one run printed and its exit code; its output parsed back with Vert.x's JSON, not the CLI's. */
  record Result(int code, String out, String err) {
    JsonObject object() {
      return new JsonObject(out);
    }

    JsonArray array() {
      return new JsonArray(out);
    }

    /** One JSON object per output line (the streams of {@code tail --output json}). */
    List<JsonObject> lines() {
      return out.lines().filter(l -> !l.isBlank()).map(JsonObject::new).toList();
    }

    @Override
    public String toString() {
      return "exit " + code + "\n--- stdout\n" + out + "--- stderr\n" + err;
    }
  }

  /** qvctl in this JVM, with {@code args} and {@code stdin}. */
  static Result run(String stdin, Map<String, String> env, String... args) {
    var out = new ByteArrayOutputStream();
    var err = new ByteArrayOutputStream();
    var in = new ByteArrayInputStream((stdin == null ? "" : stdin).getBytes(StandardCharsets.UTF_8));
    int code = Qvctl.run(args, in, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8), env, HOME.toString(), false);
    return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  /** qvctl in this JVM against {@code url}. */
  static Result at(String url, String... args) {
    List<String> all = new ArrayList<>(List.of(args));
    all.add("--url=" + url);
    return run(null, Map.of(), all.toArray(String[]::new));
  }

  /** The same, in a background thread (tail, watch). */
  static CompletableFuture<Result> background(String url, String... args) {
    return CompletableFuture.supplyAsync(() -> at(url, args));
  }

  /** The checkout: the folder holding {@code bin/qvctl} above the working directory. */
  static Path root() {
    for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
      if (Files.isRegularFile(p.resolve("bin/qvctl")) && Files.isRegularFile(p.resolve("pom.xml"))) return p;
    }
    throw new IllegalStateException("no checkout with bin/qvctl above " + Path.of("").toAbsolutePath());
  }

  /** Runs {@code script} (bin/qvctl of a checkout or of a release layout) as a child process. */
  static Result script(Path script, Map<String, String> env, String stdin, String... args) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(script.toString());
    cmd.addAll(List.of(args));
    var pb = new ProcessBuilder(cmd);
    Map<String, String> e = pb.environment();
    e.keySet().removeIf(k -> k.startsWith("QVCTL_") || k.equals("XDG_CONFIG_HOME"));
    e.put("HOME", HOME.toString());
    e.put("JAVA_HOME", System.getProperty("java.home"));
    e.putAll(env);
    Process p = pb.start();
    try (var in = p.getOutputStream()) {
      if (stdin != null) in.write(stdin.getBytes(StandardCharsets.UTF_8));
    }
    var out = CompletableFuture.supplyAsync(() -> read(p.getInputStream()));
    var err = CompletableFuture.supplyAsync(() -> read(p.getErrorStream()));
    assertThat(p.waitFor(90, TimeUnit.SECONDS)).as("%s finished within 90 s", cmd).isTrue();
    return new Result(p.exitValue(), out.get(10, TimeUnit.SECONDS), err.get(10, TimeUnit.SECONDS));
  }

  /** bin/qvctl of this checkout. */
  static Result script(Map<String, String> env, String stdin, String... args) throws Exception {
    return script(root().resolve("bin/qvctl"), new HashMap<>(env), stdin, args);
  }

  private static String read(java.io.InputStream s) {
    try {
      return new String(s.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }
}
