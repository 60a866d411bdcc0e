package io.queenvertx.cli;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The broker's HTTP API as the CLI speaks it: HTTP/1.1 (as Queen's clients), bodies as {@code application/json},
 * {@code Authorization: Bearer <token>} and {@code x-queen-tenant} when set. A status outside 2xx becomes an
 * {@link Exit.Failure} with the broker's error text and the exit code of {@link Exit#ofStatus}; no connection at all
 * is {@link Exit#UNREACHABLE}.
 */
final class Broker {
  static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);
  static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(60);

  private final Settings settings;
  private final HttpClient http;

  Broker(Settings settings) {
    this.settings = settings;
    this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(CONNECT_TIMEOUT).build();
  }

  /** One answer of the broker. */
  record Answer(int status, String body, Map<String, List<String>> headers) {
    Object json() {
      return body == null || body.isBlank() ? null : Json.parse(body);
    }

    String header(String name) {
      for (var e : headers.entrySet()) {
        if (e.getKey().equalsIgnoreCase(name) && !e.getValue().isEmpty()) return e.getValue().get(0);
      }
      return null;
    }

    boolean ok() {
      return status >= 200 && status < 300;
    }
  }

  Answer get(String path) {
    return send("GET", path, null, REQUEST_TIMEOUT);
  }

  Answer get(String path, Duration timeout) {
    return send("GET", path, null, timeout);
  }

  Answer post(String path, Object body) {
    return send("POST", path, body, REQUEST_TIMEOUT);
  }

  Answer delete(String path) {
    return send("DELETE", path, null, REQUEST_TIMEOUT);
  }

  /** GET whose answer must be 2xx; its JSON. */
  Object getJson(String path) {
    return check("GET", path, get(path)).json();
  }

  Object postJson(String path, Object body) {
    return check("POST", path, post(path, body)).json();
  }

  Object deleteJson(String path) {
    return check("DELETE", path, delete(path)).json();
  }

  Answer send(String method, String path, Object body, Duration timeout) {
    var b = HttpRequest.newBuilder(URI.create(settings.url() + path)).timeout(timeout)
        .header("Accept", "application/json");
    if (body != null) {
      b.header("Content-Type", "application/json");
      b.method(method, HttpRequest.BodyPublishers.ofString(Json.write(body), StandardCharsets.UTF_8));
    } else {
      b.method(method, HttpRequest.BodyPublishers.noBody());
    }
    if (settings.token() != null) b.header("Authorization", "Bearer " + settings.token());
    if (settings.tenant() != null) b.header("x-queen-tenant", settings.tenant());
    try {
      HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
      return new Answer(r.statusCode(), r.body(), r.headers().map());
    } catch (HttpConnectTimeoutException e) {
      throw unreachable("no connection within " + CONNECT_TIMEOUT.toSeconds() + " s");
    } catch (HttpTimeoutException e) {
      throw new Exit.Failure(Exit.UNREACHABLE, method + " " + path + ": no answer within " + timeout.toSeconds()
          + " s from " + settings.url());
    } catch (java.net.ConnectException e) {
      throw unreachable("connection refused" + (e.getMessage() == null ? "" : " (" + e.getMessage() + ")"));
    } catch (IOException e) {
      throw unreachable(e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new Exit.Failure(Exit.ERROR, "interrupted");
    } catch (IllegalArgumentException e) {
      throw new Exit.Failure(Exit.USAGE, "bad url " + settings.url() + path + ": " + e.getMessage());
    }
  }

  private Exit.Failure unreachable(String why) {
    return new Exit.Failure(Exit.UNREACHABLE, "cannot reach " + settings.url() + ": " + why);
  }

  /** The answer when it is 2xx, else the failure naming the request, the status and the broker's error text. */
  static Answer check(String method, String path, Answer a) {
    if (a.ok()) return a;
    throw new Exit.Failure(Exit.ofStatus(a.status()), method + " " + path + " answered " + a.status() + ": "
        + errorText(a));
  }

  /** The broker's {@code error} (and {@code message}) text, else the start of the body. */
  static String errorText(Answer a) {
    boolean[] ok = {false};
    Object j = a.body() == null ? null : Json.tryParse(a.body(), ok);
    if (ok[0] && Json.get(j, "error") != null) {
      Object e = Json.get(j, "error");
      String text = e instanceof String s ? s : Json.string(e, "message") != null ? Json.string(e, "message")
          : Json.write(e);
      String more = Json.string(j, "message");
      return more == null || more.equals(text) ? text : text + " (" + more + ")";
    }
    String body = a.body() == null ? "" : a.body().strip();
    return body.isEmpty() ? "(no body)" : body.length() > 300 ? body.substring(0, 300) + "…" : body;
  }

  /** One path segment, percent-encoded as the broker wants it: unreserved characters as they are, the rest escaped. */
  static String seg(String s) {
    StringBuilder b = new StringBuilder();
    for (byte x : s.getBytes(StandardCharsets.UTF_8)) {
      char c = (char) (x & 0xff);
      if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || "-._~".indexOf(c) >= 0) {
        b.append(c);
      } else {
        b.append('%').append(String.format("%02X", x & 0xff));
      }
    }
    return b.toString();
  }

  /** {@code ?a=1&b=2} of the non-null values, or "" when none. */
  static String query(Object... keyValues) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i + 1 < keyValues.length; i += 2) {
      if (keyValues[i + 1] != null) m.put((String) keyValues[i], keyValues[i + 1]);
    }
    StringBuilder b = new StringBuilder();
    for (var e : m.entrySet()) {
      b.append(b.length() == 0 ? '?' : '&').append(e.getKey()).append('=').append(seg(String.valueOf(e.getValue())));
    }
    return b.toString();
  }
}
