package io.queenvertx.security;

import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * HTTP/1.1 over a plain socket, so a request target reaches the broker byte for byte ({@code ..}, {@code //},
 * {@code %2e}): every JDK or Vert.x client would normalise it first. One request per connection, loopback only.
 * {@link #send} writes {@code Host: 127.0.0.1:<port>} and, with a body, {@code Content-Type: application/json},
 * unless the headers given name their own; {@link #exchange} writes exact bytes.
 */
final class RawHttp {
  /** One answer: the status of the status line and the body that followed the headers. */
  record Reply(int status, String body) {
    String error() {
      try {
        return new JsonObject(body).getString("error");
      } catch (RuntimeException e) {
        return body;
      }
    }
  }

  private RawHttp() {}

  static Reply send(int port, String method, String target, Map<String, String> headers, String body) {
    byte[] payload = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
    StringBuilder head = new StringBuilder().append(method).append(' ').append(target).append(" HTTP/1.1\r\n");
    if (!named(headers, "Host")) head.append("Host: 127.0.0.1:").append(port).append("\r\n");
    head.append("Connection: close\r\n");
    headers.forEach((k, v) -> head.append(k).append(": ").append(v).append("\r\n"));
    if (body != null) {
      if (!named(headers, "Content-Type")) head.append("Content-Type: application/json\r\n");
      head.append("Content-Length: ").append(payload.length).append("\r\n");
    }
    head.append("\r\n");
    try (var s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
      s.setSoTimeout(20_000);
      var out = s.getOutputStream();
      out.write(head.toString().getBytes(StandardCharsets.ISO_8859_1));
      out.write(payload);
      out.flush();
      return parse(readAll(s.getInputStream()));
    } catch (IOException e) {
      throw new IllegalStateException(method + " " + target + ": " + e, e);
    }
  }

  private static boolean named(Map<String, String> headers, String name) {
    return headers.keySet().stream().anyMatch(name::equalsIgnoreCase);
  }

  /**
   * What one connection answered to {@code request}: every byte read (ISO-8859-1) and whether the broker closed the
   * connection ({@code closed}), or left it open for {@code waitMs} after its last byte.
   */
  record Conversation(String text, boolean closed) {
    /** The status codes of the answers in order, from each status line (a body need not end in a newline). */
    java.util.List<Integer> statuses() {
      var out = new java.util.ArrayList<Integer>();
      var m = java.util.regex.Pattern.compile("HTTP/1\\.[01] (\\d{3}) ").matcher(text);
      while (m.find()) out.add(Integer.parseInt(m.group(1)));
      return out;
    }
  }

  /** Writes {@code request} as is on a new connection and reads until the broker closes it or is silent. */
  static Conversation exchange(int port, byte[] request, int waitMs) {
    try (var s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
      s.setSoTimeout(waitMs);
      s.getOutputStream().write(request);
      s.getOutputStream().flush();
      var buf = new ByteArrayOutputStream();
      byte[] chunk = new byte[8192];
      boolean closed;
      try {
        for (int n; (n = s.getInputStream().read(chunk)) >= 0; ) buf.write(chunk, 0, n);
        closed = true;
      } catch (java.net.SocketTimeoutException open) {
        closed = false;
      } catch (java.net.SocketException reset) {
        closed = true;
      }
      return new Conversation(buf.toString(StandardCharsets.ISO_8859_1), closed);
    } catch (IOException e) {
      throw new IllegalStateException("exchange: " + e, e);
    }
  }

  private static byte[] readAll(InputStream in) throws IOException {
    var buf = new ByteArrayOutputStream();
    byte[] chunk = new byte[8192];
    for (int n; (n = in.read(chunk)) > 0; ) buf.write(chunk, 0, n);
    return buf.toByteArray();
  }

  private static Reply parse(byte[] raw) {
    String text = new String(raw, StandardCharsets.UTF_8);
    int end = text.indexOf("\r\n\r\n");
    if (!text.startsWith("HTTP/1.1 ") || end < 0) throw new IllegalStateException("not an HTTP answer: " + text);
    int status = Integer.parseInt(text.substring(9, 12));
    String headers = text.substring(0, end).toLowerCase(java.util.Locale.ROOT);
    String body = text.substring(end + 4);
    if (headers.contains("transfer-encoding: chunked")) body = unchunk(body);
    return new Reply(status, body);
  }

  private static String unchunk(String body) {
    var out = new StringBuilder();
    int i = 0;
    while (i < body.length()) {
      int eol = body.indexOf("\r\n", i);
      int size = Integer.parseInt(body.substring(i, eol).trim(), 16);
      if (size == 0) break;
      out.append(body, eol + 2, eol + 2 + size);
      i = eol + 2 + size + 2;
    }
    return out.toString();
  }

  /** An HS256 compact JWS over {@code claims}. */
  static String hs256(String secret, JsonObject claims) {
    try {
      var b64 = Base64.getUrlEncoder().withoutPadding();
      String signing = b64.encodeToString("{\"alg\":\"HS256\",\"typ\":\"JWT\"}".getBytes(StandardCharsets.UTF_8))
          + "." + b64.encodeToString(claims.encode().getBytes(StandardCharsets.UTF_8));
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
      return signing + "." + b64.encodeToString(mac.doFinal(signing.getBytes(StandardCharsets.US_ASCII)));
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
