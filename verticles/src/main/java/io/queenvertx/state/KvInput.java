package io.queenvertx.state;

import io.queenvertx.db.KvProcedures;
import io.queenvertx.kernel.StorableText;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;

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

  private KvInput() {}

  /** The operations of a {@code POST /api/v1/kv} body: {@code {"operations":[...]}} or a bare array. */
  public static JsonArray operations(Object body) {
    if (body instanceof JsonArray a) return a;
    if (body instanceof JsonObject o && o.getValue("operations") instanceof JsonArray a) return a;
    throw bad("kv_bad_request", "the body must be {\"operations\":[...]} or an array of operations");
  }

  /**
   * The operations; {@code raw}: each one's {@code value} as the request's text holds it ({@link RawValues}), stored
   * instead of a re-encoding of the decoded value (null: re-encode).
   */
  public static List<KvProcedures.Op> parse(JsonArray ops, List<String> raw) {
    boolean aligned = raw != null && raw.size() == ops.size();
    List<KvProcedures.Op> out = new ArrayList<>(ops.size());
    for (int i = 0; i < ops.size(); i++) {
      if (!(ops.getValue(i) instanceof JsonObject o)) throw bad("kv_bad_request", "kv operation " + i + " must be an object");
      out.add(parse(o, i, aligned ? raw.get(i) : null));
    }
    return out;
  }

  /** One operation; {@code i} names it in the errors; {@code raw} its value's text as sent, or null. */
  public static KvProcedures.Op parse(JsonObject o, int i, String raw) {
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
    String value = !o.containsKey("value") ? null : raw != null ? raw : Json.encode(o.getValue("value"));
    return new KvProcedures.Op(op, text(o, "ns", i), key, value, whole(o, "ttlSeconds", i, "kv_bad_ttl"),
        flag(o, "forever", i), whole(o, "expect", i, "kv_bad_expect"), number(o, "delta", i), number(o, "min", i),
        number(o, "max", i), flag(o, "required", i), integer(o, "limit", i), text(o, "after", i), flag(o, "keysOnly", i),
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

  private static String number(JsonObject o, String field, int i) {
    Object v = o.getValue(field);
    if (v == null) return null;
    // a literal beyond a double's range (1e400) decodes as an infinity, which has no decimal text
    if (v instanceof Number n && !(v instanceof Double d && d.isInfinite())
        && !(v instanceof Float f && f.isInfinite())) {
      return new BigDecimal(n.toString()).toString();
    }
    throw bad("kv_bad_request", at(i, field, "a finite number"));
  }

  private static String at(int i, String field, String what) {
    return "kv operation " + i + ": `" + field + "` must be " + what;
  }

  static StateRefused bad(String reason, String detail) {
    return new StateRefused(400, reason, detail);
  }
}
