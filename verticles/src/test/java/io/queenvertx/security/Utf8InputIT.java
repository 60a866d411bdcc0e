package io.queenvertx.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Issue 34 item 12, text: whatever the broker reads as text must be valid UTF-8, never decoded into other characters.
 * An overlong {@code /} ({@code C0 AF}), an encoded surrogate ({@code ED A0 80}), a code point past U+10FFFF
 * ({@code F4 90 80 80}) and a stray continuation byte are refused in the path, in a query parameter and in a JSON
 * body; a raw non-ASCII byte in the request target and a non-ASCII value of a header the broker reads are refused;
 * well-formed UTF-8 names still work and come back as sent.
 */
class Utf8InputIT {
  static final String[] BAD = {"%C0%AF", "%ED%A0%80", "%F4%90%80%80", "%80", "%E2%82"};

  @NodeFixture
  static TestNode node;

  /** The bytes of a percent-encoded string. */
  static byte[] bytes(String escaped) {
    var out = new ByteArrayOutputStream();
    for (int i = 0; i < escaped.length(); i++) {
      if (escaped.charAt(i) == '%') {
        out.write(Integer.parseInt(escaped.substring(i + 1, i + 3), 16));
        i += 2;
      } else {
        out.write(escaped.charAt(i));
      }
    }
    return out.toByteArray();
  }

  static TestNode.Reply postBytes(String path, byte[] body) {
    return node.send(HttpRequest.newBuilder(URI.create(node.baseUrl() + path))
        .POST(HttpRequest.BodyPublishers.ofByteArray(body)).header("Content-Type", "application/json"), Map.of());
  }

  /** {@code json} with {@code bad} (escaped bytes) in place of the marker {@code @}. */
  static byte[] json(String json, String bad) {
    int at = json.indexOf('@');
    var out = new ByteArrayOutputStream();
    out.writeBytes(json.substring(0, at).getBytes(StandardCharsets.UTF_8));
    out.writeBytes(bytes(bad));
    out.writeBytes(json.substring(at + 1).getBytes(StandardCharsets.UTF_8));
    return out.toByteArray();
  }

  @Test
  void malformedUtf8InThePathOrAQueryParameterIs400() {
    for (String bad : BAD) {
      var path = node.get("/api/v1/resources/queues/a" + bad);
      assertThat(path.status()).as(bad).isEqualTo(400);
      assertThat(path.json().getString("error")).as(bad).isEqualTo("path is not valid UTF-8 once percent-decoded");
      var query = node.get("/api/v1/pop/queue/" + Wire.queue("utf8") + "?wait=false&consumerGroup=g" + bad);
      assertThat(query.status()).as(bad).isEqualTo(400);
      assertThat(query.json().getString("error")).as(bad).contains("consumerGroup").contains("UTF-8");
    }
    var raw = RawHttp.send(node.port(), "GET", "/api/v1/resources/queues/caf\u00c3\u00a9", Map.of(), null);
    assertThat(raw.status()).as("raw UTF-8 bytes in the target").isEqualTo(400);
    assertThat(raw.error()).contains("percent-encode");
    assertThat(RawHttp.send(node.port(), "GET", "/api/v1/status/queues?queue=caf\u00c3\u00a9", Map.of(), null)
        .status()).isEqualTo(400);
  }

  @Test
  void malformedUtf8InAJsonBodyIs400AndCreatesNothing() {
    for (String bad : BAD) {
      String name = Wire.queue("utf8-body");
      var configure = postBytes("/api/v1/configure", json("{\"queue\":\"" + name + "@\"}", bad));
      assertThat(configure.status()).as(bad + ": " + configure.body()).isEqualTo(400);
      assertThat(configure.json().getString("error")).as(bad).startsWith("bad body: not UTF-8 JSON text");
      var push = postBytes("/api/v1/push", json("{\"items\":[{\"queue\":\"" + name + "\",\"payload\":\"x@\"}]}",
          bad));
      assertThat(push.status()).as(bad + ": " + push.body()).isEqualTo(400);
      assertThat(node.get("/api/v1/resources/queues/" + name).status()).as(bad).isEqualTo(404);
      // the overlong '/' must not have become the queue "<name>/"
      assertThat(node.get("/api/v1/resources/queues/" + name + "%2F").status()).as(bad).isEqualTo(404);
    }
    String name = Wire.queue("utf16");
    byte[] utf16 = ("{\"queue\":\"" + name + "\"}").getBytes(StandardCharsets.UTF_16LE);
    assertThat(postBytes("/api/v1/configure", utf16).status()).as("UTF-16, which Jackson would detect")
        .isEqualTo(400);
    assertThat(node.get("/api/v1/resources/queues/" + name).status()).isEqualTo(404);
  }

  @Test
  void aNonAsciiValueOfAHeaderTheBrokerReadsIs400() {
    for (String header : new String[] {"Origin", "Authorization", "x-queen-tenant", "Content-Type",
        "Sec-Fetch-Site"}) {
      var r = RawHttp.send(node.port(), "GET", "/api/v1/status", Map.of(header, "caf\u00c3\u00a9"), null);
      assertThat(r.status()).as(header).isEqualTo(400);
      assertThat(r.error()).as(header).isEqualTo("header " + header + " must be ASCII text");
    }
    // Vert.x itself refuses a Host it cannot parse, before any handler
    assertThat(RawHttp.send(node.port(), "GET", "/api/v1/status", Map.of("Host", "caf\u00c3\u00a9"), null)
        .status()).isEqualTo(400);
  }

  @Test
  void wellFormedUtf8NamesWorkAndComeBackAsSent() {
    String name = Wire.queue("caf\u00e9-\u00fc-\ud83d\ude00");
    assertThat(node.post("/api/v1/configure", new JsonObject().put("queue", name)).status()).isEqualTo(200);
    String encoded = java.net.URLEncoder.encode(name, StandardCharsets.UTF_8);
    var r = node.get("/api/v1/resources/queues/" + encoded);
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    assertThat(r.body()).contains(name);
  }
}
