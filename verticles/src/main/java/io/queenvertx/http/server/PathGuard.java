package io.queenvertx.http.server;

import io.queenvertx.kernel.ApiError;
import io.vertx.core.MultiMap;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.RoutingContext;
import java.util.List;

/**
 * The first word on every request, before authentication and routing: a request target that is not canonical is a 400
 * in the API's error envelope and reaches no other handler (issue 18). Vert.x routes on {@code normalizedPath()}
 * (dot segments resolved, {@code //} collapsed, {@code %2e} and other unreserved escapes decoded), so a path that
 * normalises to something else than itself could be judged by one path and served by another. Refused:
 * <ul>
 *   <li>{@code .} and {@code ..} segments, literal or percent-encoded ({@code %2e});
 *   <li>empty segments ({@code //}); a single trailing slash is left to the router's exact-match 404 (API.md §1.5);
 *   <li>a literal backslash, which some front ends read as a separator;
 *   <li>NUL and control characters, literal or encoded, and malformed percent escapes;
 *   <li>a percent-encoded unreserved character ({@code %41}), which Vert.x would decode before routing.
 * </ul>
 * Other percent-encodings stay valid (a queue named {@code "a b:c"} is {@code a%20b%3Ac}, either hex case). That
 * includes {@code %2F} and {@code %5C}: Vert.x never decodes them before routing (they stay inside one segment, and
 * only the path parameter is decoded), and Queen accepts queue and partition names holding {@code /}, which its
 * clients send as {@code %2F}. In the query string, a NUL (which PostgreSQL text cannot hold) and a malformed escape
 * are refused, naming the parameter.
 *
 * <p>Text is UTF-8 (issue 34): a raw non-ASCII byte in the request target, and percent-escapes that do not decode as
 * strict UTF-8 ({@link Utf8}: {@code %C0%AF}, an overlong {@code /}, is not one), are refused in the path and in each
 * query parameter. The request headers the broker reads ({@link #READ_HEADERS}) must be ASCII text, which every one of
 * their grammars is (a token, a UUID, a media type, an origin, a host).
 */
public final class PathGuard {
  private PathGuard() {}

  public static void handle(RoutingContext ctx) {
    String raw = ctx.request().path();
    String problem = pathProblem(raw);
    if (problem == null) {
      String normalized;
      try {
        normalized = ctx.normalizedPath();
      } catch (IllegalArgumentException e) {
        normalized = null;
      }
      // A backstop for whatever the rules above might miss: the router must see exactly what the checks saw.
      if (!raw.equals(normalized)) problem = "path is not in canonical form";
    }
    if (problem == null) problem = queryProblem(ctx.request().query());
    if (problem == null) problem = headerProblem(ctx.request().headers());
    if (problem != null) {
      ctx.fail(ApiError.of(400, problem));
      return;
    }
    ctx.next();
  }

  /** Why {@code raw} is not a canonical absolute path, or null when it is. */
  public static String pathProblem(String raw) {
    if (raw == null || raw.isEmpty() || raw.charAt(0) != '/') return "path must start with /";
    int len = raw.length();
    int segStart = 1;
    for (int i = 1; i <= len; i++) {
      char c = i < len ? raw.charAt(i) : '/';
      if (c == '/') {
        String seg = raw.substring(segStart, i);
        if (seg.isEmpty() && i < len) return "path must not contain empty segments (//)";
        if (seg.equals(".") || seg.equals("..")) return "path must not contain . or .. segments";
        segStart = i + 1;
        continue;
      }
      if (c < 0x20 || c == 0x7f) return "path must not contain NUL or control characters";
      if (c > 0x7f) return "path must percent-encode its non-ASCII characters (as UTF-8)";
      if (c == '\\') return "path must not contain a backslash";
      if (c == '%') {
        int b = escaped(raw, i);
        if (b < 0) return "path has a malformed percent-encoding at offset " + i;
        if (b < 0x20 || b == 0x7f) return "path must not contain NUL or control characters";
        if (unreserved(b)) return "path must not percent-encode the character '" + (char) b + "'";
        i += 2;
      }
    }
    return utf8(raw) ? null : "path is not valid UTF-8 once percent-decoded";
  }

  /** Why the raw query string cannot be served, naming the parameter, or null. */
  public static String queryProblem(String query) {
    if (query == null || query.isEmpty()) return null;
    for (String pair : query.split("&", -1)) {
      int eq = pair.indexOf('=');
      String name = eq < 0 ? pair : pair.substring(0, eq);
      String shown = name.length() > 64 ? name.substring(0, 64) + "..." : name;
      for (int i = 0; i < pair.length(); i++) {
        char c = pair.charAt(i);
        if (c == 0) return "query parameter " + shown + " must not contain NUL characters";
        if (c > 0x7f) return "query parameter " + shown + " must percent-encode its non-ASCII characters (as UTF-8)";
        if (c != '%') continue;
        int b = escaped(pair, i);
        if (b < 0) return "query string has a malformed percent-encoding in parameter " + shown;
        if (b == 0) return "query parameter " + shown + " must not contain NUL characters";
        i += 2;
      }
      if (!utf8(pair)) return "query parameter " + shown + " is not valid UTF-8 once percent-decoded";
    }
    return null;
  }

  /** The request headers the broker reads: each must be ASCII text when present. */
  public static final List<String> READ_HEADERS = List.of("Host", "Origin", "Sec-Fetch-Site", "Content-Type",
      "Authorization", Tenancy.HEADER);

  /** Why a header the broker reads cannot be read as text (a byte outside visible ASCII, space and tab), or null. */
  public static String headerProblem(MultiMap headers) {
    for (String name : READ_HEADERS) {
      if (!headers.contains(name)) continue;
      for (String v : headers.getAll(name)) {
        for (int i = 0; i < v.length(); i++) {
          char c = v.charAt(i);
          if (c > 0x7e || c < 0x20 && c != '\t') return "header " + name + " must be ASCII text";
        }
      }
    }
    return null;
  }

  /** Whether the ASCII text {@code s}, its percent-escapes decoded (already checked well-formed), is UTF-8. */
  private static boolean utf8(String s) {
    if (s.indexOf('%') < 0) return true;
    Buffer bytes = Buffer.buffer(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '%') {
        bytes.appendByte((byte) escaped(s, i));
        i += 2;
      } else {
        bytes.appendByte((byte) c);
      }
    }
    return Utf8.invalidAt(bytes, false) < 0;
  }

  /** The byte of the escape at {@code s[i] == '%'}, or -1 when two hex digits do not follow. */
  private static int escaped(String s, int i) {
    if (i + 2 >= s.length()) return -1;
    int hi = Character.digit(s.charAt(i + 1), 16);
    int lo = Character.digit(s.charAt(i + 2), 16);
    if (hi < 0 || lo < 0 || s.charAt(i + 1) > 0x7f || s.charAt(i + 2) > 0x7f) return -1;
    return hi << 4 | lo;
  }

  /** RFC 3986 unreserved: ALPHA / DIGIT / "-" / "." / "_" / "~". */
  private static boolean unreserved(int b) {
    return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '.' || b == '_'
        || b == '~';
  }
}
