package io.queenvertx.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.kernel.HttpSettings;
import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The body buffer of a route that reads a body is preallocated from the declared Content-Length, so a declared length
 * must never be trusted beyond the body limit: a request announcing far more than {@code QUEEN_MAX_BODY_BYTES} is
 * answered 413 from its headers alone, before any body byte is sent (so nothing of that size is buffered or
 * allocated), and a body that stays within the limit is still served whole.
 */
class RouteTableIT {
  @NodeFixture
  static TestNode node;

  /** Sends only the request head (no body byte) and answers the status line the broker replies with. */
  static String statusLineForHeadOnly(String target, long contentLength) throws IOException {
    int port = node.node().config().http().port();
    String head = "POST " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\n"
        + "Content-Type: application/json\r\nContent-Length: " + contentLength + "\r\n\r\n";
    try (var s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
      s.setSoTimeout(10_000); // a broker waiting for the announced body would make this read time out
      s.getOutputStream().write(head.getBytes(StandardCharsets.ISO_8859_1));
      s.getOutputStream().flush();
      return firstLine(s.getInputStream());
    }
  }

  private static String firstLine(InputStream in) throws IOException {
    var line = new ByteArrayOutputStream();
    for (int b; (b = in.read()) >= 0 && b != '\n'; ) if (b != '\r') line.write(b);
    return line.toString(StandardCharsets.ISO_8859_1);
  }

  @Test
  void aTerabyteContentLengthIs413FromTheHeadersAlone() throws IOException {
    assertThat(statusLineForHeadOnly("/api/v1/push", 1L << 40)).startsWith("HTTP/1.1 413");
    assertThat(statusLineForHeadOnly("/api/v1/ack", Long.MAX_VALUE)).startsWith("HTTP/1.1 413");
  }

  @Test
  void oneByteOverTheLimitIs413FromTheHeadersAlone() throws IOException {
    assertThat(statusLineForHeadOnly("/api/v1/push", HttpSettings.DEFAULT_MAX_BODY_BYTES + 1))
        .startsWith("HTTP/1.1 413");
  }

  @Test
  void aBodyLargerThanOnePreallocationStepIsReadWhole() {
    // 200 KiB of payload: above vertx-web's 64 KiB preallocation cap, so the buffer still grows past it
    String q = "route-table-" + System.nanoTime();
    String payload = "x".repeat(200 * 1024);
    String body = "{\"items\":[{\"queue\":\"" + q + "\",\"payload\":{\"p\":\"" + payload + "\"}}]}";
    var r = node.post("/api/v1/push", body);
    assertThat(r.status()).isEqualTo(201);
    assertThat(r.array().getJsonObject(0).getString("status")).isEqualTo("queued");
  }
}
