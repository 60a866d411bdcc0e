package io.queenvertx.state;

import io.queenvertx.db.KvProcedures;
import io.queenvertx.kernel.StorableText;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Key-value operations as the wire sends them (docs/design/queen2-contract.md §2.2), their JSON types checked: a field
 * of the wrong type is a 400 naming the operation's index and the field, a tenant field is refused (the tenant is the
 * request's). The rules on values (namespace pattern, key and value sizes, TTL range, expect, ...) are the SQL's
 * (QV8xx), which no caller can get past.
 */
public final class KvInput {
  /** The fields a caller must never send: the tenant is the request's. */
  private static final List<String> TENANT_FIELDS = List.of("tenant", "tenantId", "_tenant");
  /** What a string PostgreSQL cannot store must be instead (NUL, a lone surrogate: {@link StorableText}). */
  public static final String UNSTORABLE = "text without NUL characters or unpaired surrogates";
  /** incr's numbers stay below this magnitude, with at most {@link #MAX_DECIMALS} decimals (the SQL's QV801 too). */
  private static final BigDecimal NUMBER_BOUND = new BigDecimal("1e300");
  private static final int MAX_DECIMALS = 100;

  private KvInput() {}

  /** The operations of a {@code POST /api/v1/kv} body: {@code {"operations":[...]}} or a bare array. */
  public static JsonArray operations(Object body) {
    if (body instanceof JsonArray a) return a;
    if (body instanceof JsonObject o && o.getValue("operations") instanceof JsonArray a) return a;
    throw bad("kv_bad_request", "the body must be {\"operations\":[...]} or an array of operations");
  }

  /**
   * The operations; {@code raw}: each one's {@code value} and incr numbers as the request's text holds them
   * ({@link RawValues}), used instead of the decoded values (null: the decoded ones).
   */
  public static List<KvProcedures.Op> parse(JsonArray ops, List<Map<String, String>> raw) {
    boolean aligned = raw != null && raw.size() == ops.size();
    List<KvProcedures.Op> out = new ArrayList<>(ops.size());
    for (int i = 0; i < ops.size(); i++) {
      if (!(ops.getValue(i) instanceof JsonObject o)) throw bad("kv_bad_request", "kv operation " + i + " must be an object");
      out.add(parse(o, i, aligned ? raw.get(i) : null));
    }
    return out;
  }

  /** One operation; {@code i} names it in the errors; {@code raw} its fields' text as sent ({@link RawValues}), or null. */
  public static KvProcedures.Op parse(JsonObject o, int i, Map<String, String> raw) {
    for (String f : TENANT_FIELDS) {
      if (o.containsKey(f)) {
        throw bad("kv_tenant_not_an_input", "kv operation " + i + ": `" + f
            + "` is not an input (the tenant is the request's)");
      }
    }
    if (!(o.getValue("op") instanceof String op)) throw bad("kv_unknown_op", "kv operation " + i + ": `op` must be a string");
    String key = text(o, op.equals("getPrefix") ? "prefix" : "key", i);
    List<String> keys = null;
    if (op.equals("getMany")) {
      if (!(o.getValue("keys") instanceof JsonArray a) || a.isEmpty()) {
        throw bad("kv_bad_key", at(i, "keys", "a non-empty array of strings"));
      }
      keys = new ArrayList<>(a.size());
      for (Object k : a) {
        if (!(k instanceof String s)) throw bad("kv_bad_key", at(i, "keys", "a non-empty array of strings"));
        if (!StorableText.storable(s)) throw bad("kv_bad_key", at(i, "keys", UNSTORABLE));
        keys.add(s);
      }
    }
    String rawValue = raw == null ? null : raw.get("value");
    String value = !o.containsKey("value") ? null : rawValue != null ? rawValue : Json.encode(o.getValue("value"));
    return new KvProcedures.Op(op, text(o, "ns", i), key, value, whole(o, "ttlSeconds", i, "kv_bad_ttl"),
        flag(o, "forever", i), whole(o, "expect", i, "kv_bad_expect"), number(o, "delta", i, raw),
        number(o, "min", i, raw), number(o, "max", i, raw), flag(o, "required", i), integer(o, "limit", i), text(o, "after", i), flag(o, "keysOnly", i),
        keys);
  }

  private static String text(JsonObject o, String field, int i) {
    Object v = o.getValue(field);
    if (v == null) return null;
    String reason = field.equals("ns") ? "kv_bad_namespace" : field.equals("after") ? "kv_bad_request" : "kv_bad_key";
    if (!(v instanceof String s)) throw bad(reason, at(i, field, "a string"));
    if (!StorableText.storable(s)) throw bad(reason, at(i, field, UNSTORABLE));
    return s;
  }

  private static boolean flag(JsonObject o, String field, int i) {
    Object v = o.getValue(field);
    if (v == null) return false;
    if (v instanceof Boolean b) return b;
    throw bad("kv_bad_request", at(i, field, "a boolean"));
  }

  private static Long whole(JsonObject o, String field, int i, String reason) {
    Object v = o.getValue(field);
    if (v == null) return null;
    if (v instanceof Integer || v instanceof Long) return ((Number) v).longValue();
    throw bad(reason, at(i, field, "an integer"));
  }

  private static Integer integer(JsonObject o, String field, int i) {
    Object v = o.getValue(field);
    if (v == null) return null;
    if (v instanceof Integer n) return n;
    if (v instanceof Long n) return n > 0 ? Integer.MAX_VALUE : Integer.MIN_VALUE; // clamped by the SQL
    throw bad("kv_bad_request", at(i, field, "an integer"));
  }

  /**
   * incr's {@code delta}, {@code min} or {@code max} as exact decimal text: from the request's literal when known (the
   * decoded body holds {@code 9007199254740993.0} or {@code 1e400} as a double, which would count a wrong amount),
   * refused naming the field beyond 1e300 in magnitude or 100 decimals, so no number is ever rounded or clipped.
   */
  private static String number(JsonObject o, String field, int i, Map<String, String> raw) {
    Object v = o.getValue(field);
    if (v == null) return null;
    if (!(v instanceof Number n)) throw bad("kv_bad_request", at(i, field, "a finite number"));
    String literal = raw == null ? null : raw.get(field);
    BigDecimal d;
    try {
      d = new BigDecimal(literal != null ? literal : n.toString());
    } catch (NumberFormatException e) { // an infinity decoded without its literal, or an exponent past an int's range
      throw bad("kv_bad_request", at(i, field, "a finite number below 1e300 in magnitude"));
    }
    if (d.abs().compareTo(NUMBER_BOUND) >= 0 || d.scale() > MAX_DECIMALS) {
      throw bad("kv_bad_request", at(i, field, "below 1e300 in magnitude with at most " + MAX_DECIMALS
          + " decimals, got " + (literal != null && literal.length() <= 40 ? literal : "a number beyond that")));
    }
    return d.toPlainString();
  }

  private static String at(int i, String field, String what) {
    return "kv operation " + i + ": `" + field + "` must be " + what;
  }

  static StateRefused bad(String reason, String detail) {
    return new StateRefused(400, reason, detail);
  }
}
