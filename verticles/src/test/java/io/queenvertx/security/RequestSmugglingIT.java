package io.queenvertx.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.Wire;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Issue 34 item 11: a request whose body framing two HTTP parsers could read differently (a proxy in front, this node
 * behind) is a 400 after which the connection is closed, so the bytes after the body are never served as a second
 * request. Each request is written byte for byte on a raw socket: a configure of one queue with a chunked body,
 * followed on the same connection by a second configure that a proxy reading the other framing would not have seen.
 * Neither queue may exist afterwards; the same two requests well framed are both served (the control).
 */
class RequestSmugglingIT {
  @NodeFixture
  static TestNode node;

  /** The first request's head up to its framing headers. */
  static String head(String version) {
    return "POST /api/v1/configure " + version + "\r\nHost: 127.0.0.1:" + node.port()
        + "\r\nContent-Type: application/json\r\n";
  }

  static String json(String queue) {
    return "{\"queue\":\"" + queue + "\"}";
  }

  /** {@code json} as one chunk and the last chunk. */
  static String chunked(String json) {
    return Integer.toHexString(json.length()) + "\r\n" + json + "\r\n0\r\n\r\n";
  }

  /** The request a proxy would not have seen: creates {@code queue}, then asks the broker to close. */
  static String smuggled(String queue) {
    String body = json(queue);
    return "POST /api/v1/configure HTTP/1.1\r\nHost: 127.0.0.1:" + node.port()
        + "\r\nContent-Type: application/json\r\nContent-Length: " + body.length()
        + "\r\nConnection: close\r\n\r\n" + body;
  }

  static boolean queueExists(String queue) {
    return node.get("/api/v1/resources/queues/" + queue).status() == 200;
  }

  @Test
  void wellFramedRequestsOnOneConnectionAreBothServed() {
    String first = Wire.queue("framed-first");
    String second = Wire.queue("framed-second");
    String bytes = head("HTTP/1.1") + "Transfer-Encoding: chunked\r\n\r\n" + chunked(json(first))
        + smuggled(second);
    var c = RawHttp.exchange(node.port(), bytes.getBytes(StandardCharsets.ISO_8859_1), 5000);
    assertThat(c.statuses()).as(c.text()).containsExactly(200, 200);
    assertThat(queueExists(first)).isTrue();
    assertThat(queueExists(second)).as("the control's second request is served, so the checks below can see one")
        .isTrue();
  }

  @Test
  void ambiguousFramingIsA400ThatClosesTheConnection() {
    Map<String, String> variants = new LinkedHashMap<>();
    // name -> the framing headers (each line ending in CRLF) of the first request
    variants.put("Transfer-Encoding and Content-Length", "Transfer-Encoding: chunked\r\nContent-Length: %d\r\n");
    variants.put("Content-Length and Transfer-Encoding", "Content-Length: %d\r\nTransfer-Encoding: chunked\r\n");
    variants.put("chunked, identity", "Transfer-Encoding: chunked, identity\r\n");
    variants.put("identity folded onto chunked", "Transfer-Encoding: identity,\r\n chunked\r\n");
    variants.put("chunked folded onto an empty line", "Transfer-Encoding:\r\n chunked\r\n");
    variants.put("Transfer-Encoding twice", "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n");
    variants.put("an unknown coding", "Transfer-Encoding: gzip\r\n");
    variants.put("HTTP/1.0", "Connection: keep-alive\r\nTransfer-Encoding: chunked\r\n");
    Map<String, String> queues = new LinkedHashMap<>();
    for (var v : variants.entrySet()) {
      String first = Wire.queue("framing-first");
      String second = Wire.queue("framing-smuggled");
      String body = chunked(json(first));
      String rest = body + smuggled(second);
      String framing = v.getValue().contains("%d") ? String.format(v.getValue(), rest.length()) : v.getValue();
      String version = v.getKey().equals("HTTP/1.0") ? "HTTP/1.0" : "HTTP/1.1";
      String bytes = head(version) + framing + "\r\n" + rest;
      var c = RawHttp.exchange(node.port(), bytes.getBytes(StandardCharsets.ISO_8859_1), 5000);
      assertThat(c.statuses()).as(v.getKey() + ": " + c.text()).containsExactly(400);
      assertThat(c.text()).as(v.getKey()).contains("ambiguous request framing");
      assertThat(c.closed()).as(v.getKey() + ": the broker closes the connection (read gives -1)").isTrue();
      queues.put(first, v.getKey());
      queues.put(second, v.getKey());
    }
    queues.forEach((queue, variant) ->
        assertThat(queueExists(queue)).as(variant + ": no request of that connection ran (" + queue + ")").isFalse());
  }
}
