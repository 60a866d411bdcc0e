package io.queenvertx.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/**
 * The real {@code bin/qvctl} (a POSIX sh script finding {@code cli/target/qvctl.jar}, or {@code lib/qvctl.jar} in the
 * release layout) as a child process against real nodes: stdin pushes, the exit codes scripts rely on, settings from
 * the environment and the config file, and the completion script in bash.
 */
class QvctlScriptIT {
  static final String SECRET = "qvctl-script-test-secret-0123456789abcdef";

  @NodeFixture
  static TestNode node;

  @NodeFixture(env = {"JWT_ENABLED=true", "JWT_SECRET=" + SECRET})
  static TestNode secured;

  @Test
  void pushFromStandardInputSendsOneMessagePerLine() throws Exception {
    String q = Wire.queue("cli-stdin");
    var r = Cli.script(Map.of(), "{\"n\":1}\nplain text\n\n[2,3]\n\"quoted\"\n", "push", q, "--url",
        node.baseUrl(), "--output", "json");
    assertThat(r.code()).as(r.toString()).isZero();
    assertThat(r.array()).hasSize(4);
    assertThat(r.array().stream().map(o -> ((JsonObject) o).getString("status"))).containsOnly("queued");

    var popped = Wire.popSome(node, q, "batch=10&wait=false&autoAck=true");
    List<Object> data = new ArrayList<>();
    for (JsonObject m : Wire.messages(popped)) data.add(m.getValue("data"));
    assertThat(data).containsExactly(new JsonObject().put("n", 1), "plain text",
        new io.vertx.core.json.JsonArray().add(2).add(3), "quoted");
  }

  @Test
  void exitCodesNameWhatWentWrong() throws Exception {
    String url = "--url=" + node.baseUrl();
    var missing = Cli.script(Map.of(), null, "queues", "describe", Wire.queue("cli-none"), url);
    assertThat(missing.code()).as(missing.toString()).isEqualTo(3);
    assertThat(missing.err()).contains("404", "Queue not found");

    var badFlag = Cli.script(Map.of(), null, "queues", "list", "--no-such-flag", url);
    assertThat(badFlag.code()).as(badFlag.toString()).isEqualTo(2);

    var unconfirmed = Cli.script(Map.of(), null, "queues", "delete", "some-queue", url);
    assertThat(unconfirmed.code()).as(unconfirmed.toString()).isEqualTo(2);
    assertThat(unconfirmed.err()).contains("--yes");

    var badBody = Cli.script(Map.of(), null, "queues", "configure", Wire.queue("cli-bad"), "--set",
        "retryLimit=lots", url);
    assertThat(badBody.code()).as(badBody.toString()).isEqualTo(2);
    assertThat(badBody.err()).contains("400", "retryLimit");

    var down = Cli.script(Map.of(), null, "queues", "list", "--url=http://127.0.0.1:" + TestNode.freePort());
    assertThat(down.code()).as(down.toString()).isEqualTo(5);
    assertThat(down.err()).contains("cannot reach");

    var noToken = Cli.script(Map.of(), null, "queues", "list", "--url=" + secured.baseUrl());
    assertThat(noToken.code()).as(noToken.toString()).isEqualTo(4);
    assertThat(noToken.err()).contains("401");

    var ok = Cli.script(Map.of("QVCTL_TOKEN", token("admin")), null, "queues", "list",
        "--url=" + secured.baseUrl());
    assertThat(ok.code()).as(ok.toString()).isZero();
    var readOnly = Cli.script(Map.of(), null, "queues", "delete", "x", "--yes", "--token=" + token("read-only"),
        "--url=" + secured.baseUrl());
    assertThat(readOnly.code()).as(readOnly.toString()).isEqualTo(4);
    assertThat(readOnly.err()).contains("403");
  }

  @Test
  void settingsComeFromFlagsThenEnvironmentThenConfigFile() throws Exception {
    String q = Wire.queue("cli-settings");
    Wire.pushQueued(node, q, null, 1, null);
    Path cfg = Files.createTempFile("qvctl", ".config");
    Files.writeString(cfg, "# qvctl settings\nurl = " + node.baseUrl() + "\noutput=json\n");
    var fromFile = Cli.script(Map.of("QVCTL_CONFIG", cfg.toString()), null, "queues", "list");
    assertThat(fromFile.code()).as(fromFile.toString()).isZero();
    assertThat(fromFile.object().getJsonArray("queues").stream()
        .map(o -> ((JsonObject) o).getString("name"))).contains(q);

    String nowhere = "http://127.0.0.1:" + TestNode.freePort();
    var envWins = Cli.script(Map.of("QVCTL_CONFIG", cfg.toString(), "QVCTL_URL", nowhere), null, "queues", "list");
    assertThat(envWins.code()).as(envWins.toString()).isEqualTo(5);
    var flagWins = Cli.script(Map.of("QVCTL_CONFIG", cfg.toString(), "QVCTL_URL", nowhere), null, "queues", "list",
        "--url", node.baseUrl(), "--output", "table");
    assertThat(flagWins.code()).as(flagWins.toString()).isZero();
    assertThat(flagWins.out()).startsWith("QUEUE").contains(q);

    Path xdg = Files.createTempDirectory("qvctl-xdg");
    Files.createDirectories(xdg.resolve("qvctl"));
    Files.writeString(xdg.resolve("qvctl/config"), "url=" + node.baseUrl() + "\n");
    var defaultFile = Cli.script(Map.of("XDG_CONFIG_HOME", xdg.toString()), null, "status");
    assertThat(defaultFile.code()).as(defaultFile.toString()).isZero();
    assertThat(defaultFile.out()).contains("healthy");
  }

  @Test
  void theReleaseLayoutFindsItsJarInLib() throws Exception {
    Path rel = Files.createTempDirectory("qvctl-release");
    Files.createDirectories(rel.resolve("bin"));
    Files.createDirectories(rel.resolve("lib"));
    Files.copy(Cli.root().resolve("bin/qvctl"), rel.resolve("bin/qvctl"));
    Files.setPosixFilePermissions(rel.resolve("bin/qvctl"), PosixFilePermissions.fromString("rwxr-xr-x"));
    Path jar = Cli.root().resolve("cli/target/qvctl.jar");
    assertThat(jar).as("mvn builds cli/target/qvctl.jar before the tests").isRegularFile();
    Files.copy(jar, rel.resolve("lib/qvctl.jar"));
    var r = Cli.script(rel.resolve("bin/qvctl"), Map.of(), null, "--url=" + node.baseUrl(), "status", "-o", "json");
    assertThat(r.code()).as(r.toString()).isZero();
    assertThat(r.object().getJsonObject("health").getString("version")).isEqualTo(Qvctl.version());

    Files.delete(rel.resolve("lib/qvctl.jar"));
    var none = Cli.script(rel.resolve("bin/qvctl"), Map.of(), null, "status");
    assertThat(none.code()).as(none.toString()).isEqualTo(1);
    assertThat(none.err()).contains("lib/qvctl.jar", "mvn package");
  }

  @Test
  void theCompletionScriptCompletesCommandsInBash() throws Exception {
    var r = Cli.script(Map.of(), null, "completion");
    assertThat(r.code()).as(r.toString()).isZero();
    Path script = Files.createTempFile("qvctl-completion", ".bash");
    Files.writeString(script, r.out());
    // what bash offers after "qvctl re" and after "qvctl dlq "
    String probe = "source " + script + "\n"
        + "COMP_WORDS=(qvctl re); COMP_CWORD=1; COMP_LINE='qvctl re'; COMP_POINT=${#COMP_LINE}\n"
        + "_complete_qvctl qvctl re qvctl; echo \"first: ${COMPREPLY[*]}\"\n"
        + "COMP_WORDS=(qvctl dlq ''); COMP_CWORD=2; COMP_LINE='qvctl dlq '; COMP_POINT=${#COMP_LINE}\n"
        + "_complete_qvctl qvctl '' dlq; echo \"dlq: ${COMPREPLY[*]}\"\n";
    Process p = new ProcessBuilder("bash", "-c", probe).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(out).contains("first: redrive").containsPattern("dlq: .*list.*replay.*purge");
  }

  /** An HS256 token for the secured node, valid for an hour, with {@code role}. */
  static String token(String role) throws Exception {
    var b64 = Base64.getUrlEncoder().withoutPadding();
    String head = b64.encodeToString("{\"alg\":\"HS256\",\"typ\":\"JWT\"}".getBytes(StandardCharsets.UTF_8));
    String claims = b64.encodeToString(new JsonObject().put("sub", "qvctl-test").put("role", role)
        .put("exp", System.currentTimeMillis() / 1000 + 3600).encode().getBytes(StandardCharsets.UTF_8));
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(SECRET.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
    return head + "." + claims + "." + b64.encodeToString(mac.doFinal((head + "." + claims)
        .getBytes(StandardCharsets.US_ASCII)));
  }
}
