package io.queenvertx.http.server;

import io.queenvertx.kernel.ApiError;
import io.queenvertx.kernel.StorableText;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.SecurityPolicyHandler;
import java.util.Locale;

/**
 * Request bodies are JSON; a bad one is 400 {@code bad body: …}. Beyond Queen (which parses a body whatever its
 * Content-Type, API.md §1.1), a body must be declared as JSON ({@link #declaredJson}: 415 otherwise, so a cross-site
 * form or {@code text/plain} fetch cannot post one) and be UTF-8 ({@link #requireUtf8}). Also the checks that keep
 * names and text the database cannot store out of SQL, so they are a 400 naming the field rather than a 500 carrying
 * PostgreSQL's text.
 */
public final class Bodies {
  /** {@code queen.queues.name} is {@code varchar(255)}: at most 255 characters. */
  public static final int MAX_QUEUE_NAME_CHARS = 255;
  /** Partition and consumer-group names are indexed text; kept well under a btree entry's size limit. */
  public static final int MAX_NAME_BYTES = 1024;

  private Bodies() {}

  /**
   * Before the body is buffered: a request that carries one (a Content-Length other than 0, or a chunked body) must
   * say {@code Content-Type: application/json} or a {@code +json} type, parameters allowed, a charset only if UTF-8;
   * else 415 naming the header. A request without a body needs no Content-Type.
   */
  public static final SecurityPolicyHandler DECLARED_JSON = Bodies::declaredJson;

  public static void declaredJson(RoutingContext ctx) {
    var h = ctx.request().headers();
    String length = h.get(HttpHeaders.CONTENT_LENGTH);
    boolean body = length != null ? !length.trim().equals("0") : h.contains(HttpHeaders.TRANSFER_ENCODING);
    String problem = body ? contentTypeProblem(h.get(HttpHeaders.CONTENT_TYPE)) : null;
    if (problem != null) ctx.fail(ApiError.of(415, problem));
    else ctx.next();
  }

  /** Why {@code type} is not a JSON media type with a UTF-8 charset (if any), or null when it is one. */
  public static String contentTypeProblem(String type) {
    if (type == null) return "a request body must be sent with Content-Type: application/json (there is none)";
    String[] parts = type.split(";", -1);
    String media = parts[0].trim().toLowerCase(Locale.ROOT);
    int slash = media.indexOf('/');
    if (!media.equals("application/json") && !(media.startsWith("application/") && media.endsWith("+json")
        && slash == media.lastIndexOf('/') && media.length() > "application/+json".length())) {
      return "a request body must be sent with Content-Type: application/json (not "
          + (type.length() > 100 ? type.substring(0, 100) + "..." : type) + ")";
    }
    for (int i = 1; i < parts.length; i++) {
      String p = parts[i].trim();
      int eq = p.indexOf('=');
      if (eq < 0 || !p.substring(0, eq).trim().equalsIgnoreCase("charset")) continue;
      String cs = p.substring(eq + 1).trim();
      if (cs.length() >= 2 && cs.startsWith("\"") && cs.endsWith("\"")) cs = cs.substring(1, cs.length() - 1);
      if (!cs.equalsIgnoreCase("utf-8") && !cs.equalsIgnoreCase("utf8")) {
        return "a request body must be UTF-8 JSON: Content-Type charset " + cs + " is not accepted";
      }
    }
    return null;
  }

  /** After the body is buffered: 400 unless it is UTF-8 JSON text ({@link Utf8}: strict, and no NUL byte). */
  public static void requireUtf8(RoutingContext ctx) {
    Buffer b = ctx.body().buffer();
    int at = b == null ? -1 : Utf8.invalidAt(b, true);
    if (at >= 0) ctx.fail(ApiError.of(400, "bad body: not UTF-8 JSON text (invalid byte at offset " + at + ")"));
    else ctx.next();
  }

  /** A queue name PostgreSQL can store (else 400) and {@code varchar(255)} can hold (else 413), naming {@code field}. */
  public static String queueName(String field, String name) {
    requireText(field, name);
    if (name.codePointCount(0, name.length()) > MAX_QUEUE_NAME_CHARS) {
      throw tooLong(field + " must be at most " + MAX_QUEUE_NAME_CHARS + " characters");
    }
    return name;
  }

  /** A partition or consumer-group name of at most {@link #MAX_NAME_BYTES} UTF-8 bytes, else 413 naming it. */
  public static String name(String field, String name) {
    requireText(field, name);
    if (name.length() > MAX_NAME_BYTES
        || name.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > MAX_NAME_BYTES) {
      throw tooLong(field + " must be at most " + MAX_NAME_BYTES + " bytes of UTF-8");
    }
    return name;
  }

  /** A name over its limit: 413 {@code name_too_long} (queen2-contract.md §1.1), the text naming the field. */
  public static ApiError tooLong(String text) {
    return ApiError.coded(413, "name_too_long", text);
  }

  /** 400 naming {@code field} when {@code s} holds a NUL or an unpaired surrogate (text PostgreSQL refuses). */
  public static void requireText(String field, String s) {
    if (!storable(s)) throw ApiError.of(400, field + " must be valid text without NUL characters");
  }

  /**
   * The dotted path of the first key or string inside a JSON value that PostgreSQL could not store, or null. Used
   * for whole bags (configure options) that are sent to SQL as one jsonb.
   */
  public static String unstorable(String path, Object v) {
    if (v instanceof String s) return storable(s) ? null : path;
    if (v instanceof JsonObject o) {
      for (var e : o) {
        String p = path.isEmpty() ? e.getKey() : path + "." + e.getKey();
        if (!storable(e.getKey())) return p;
        String bad = unstorable(p, e.getValue());
        if (bad != null) return bad;
      }
    } else if (v instanceof JsonArray a) {
      for (int i = 0; i < a.size(); i++) {
        String bad = unstorable(path + "[" + i + "]", a.getValue(i));
        if (bad != null) return bad;
      }
    }
    return null;
  }

  /** No NUL (PostgreSQL text cannot hold it) and no unpaired UTF-16 surrogate (not encodable as UTF-8). */
  public static boolean storable(String s) {
    return StorableText.storable(s);
  }

  /** The body as a JSON object; a non-object or unparseable body is 400. */
  public static JsonObject object(RoutingContext ctx) {
    return object(ctx.body().buffer());
  }

  /** {@code b} as a JSON object; a non-object or unparseable body is 400 (no routing context: any thread). */
  public static JsonObject object(Buffer b) {
    Object v = value(b);
    if (v instanceof JsonObject o) return o;
    throw ApiError.of(400, "bad body: expected a JSON object");
  }

  /** The body as a JSON object, or {@code null} when the body is absent, empty or whitespace. */
  public static JsonObject optionalObject(RoutingContext ctx) {
    Buffer b = ctx.body().buffer();
    if (b == null || b.toString().isBlank()) return null;
    return object(ctx);
  }

  public static Object value(Buffer b) {
    if (b == null || b.length() == 0) throw ApiError.of(400, "bad body: EOF while parsing a value at line 1 column 0");
    try {
      Object v = Json.decodeValue(b);
      if (v instanceof java.util.Map<?, ?> m) return new JsonObject((java.util.Map<String, Object>) m);
      if (v instanceof java.util.List<?> l) return new JsonArray(l);
      return v;
    } catch (DecodeException e) {
      throw ApiError.of(400, "bad body: " + ApiError.describe(e));
    }
  }
}
