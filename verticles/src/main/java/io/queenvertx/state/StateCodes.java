package io.queenvertx.state;

import io.queenvertx.db.SqlState;
import io.vertx.core.json.JsonObject;
import java.util.Map;

/**
 * What a QV8xx / QV9xx SQLSTATE of the key-value and lock procedures means on the wire (docs/design/queen2-contract.md
 * §1.3): the HTTP status, the {@code error} class and the {@code reason}. QV820 (a lost {@code required}
 * precondition) is not an error: {@link #verdict} reads its DETAIL.
 */
public final class StateCodes {
  /** One registry row. */
  public record Code(int status, String error, String reason) {}

  private static final Map<SqlState, Code> CODES = Map.ofEntries(
      kv(SqlState.KV_BAD_REQUEST, "kv_bad_request"),
      kv(SqlState.KV_UNKNOWN_OP, "kv_unknown_op"),
      kv(SqlState.KV_BAD_NAMESPACE, "kv_bad_namespace"),
      kv(SqlState.KV_BAD_KEY, "kv_bad_key"),
      Map.entry(SqlState.KV_KEY_TOO_LARGE, new Code(413, "payload_too_large", "kv_key_too_large")),
      Map.entry(SqlState.KV_VALUE_TOO_LARGE, new Code(413, "payload_too_large", "kv_value_too_large")),
      kv(SqlState.KV_EXPIRY_NOT_SPECIFIED, "kv_expiry_not_specified"),
      kv(SqlState.KV_BAD_TTL, "kv_bad_ttl"),
      kv(SqlState.KV_BAD_EXPECT, "kv_bad_expect"),
      kv(SqlState.KV_DUPLICATE_KEY_IN_CALL, "kv_duplicate_key_in_call"),
      kv(SqlState.KV_TOO_MANY_OPS, "kv_too_many_ops"),
      kv(SqlState.KV_TOO_MANY_KEYS, "kv_too_many_keys"),
      kv(SqlState.KV_PREFIX_REQUIRED, "kv_prefix_required"),
      kv(SqlState.KV_GET_PREFIX_IN_TRANSACTION, "kv_get_prefix_not_allowed_in_transaction"),
      kv(SqlState.KV_RESERVED_NAMESPACE, "kv_reserved_namespace"),
      Map.entry(SqlState.KV_MISALIGNED, new Code(500, "internal", "kv_misaligned")),
      locks(SqlState.LOCKS_UNKNOWN_OP, "locks_unknown_op"),
      locks(SqlState.LOCKS_BAD_NAME, "locks_bad_name"),
      locks(SqlState.LOCKS_TTL_REQUIRED, "locks_ttl_required"),
      locks(SqlState.LOCKS_BAD_TTL, "locks_bad_ttl"),
      locks(SqlState.LOCKS_BAD_OWNER, "locks_bad_owner"),
      locks(SqlState.LOCKS_BAD_LIMIT, "locks_bad_limit"),
      locks(SqlState.LOCKS_TOKEN_REQUIRED, "locks_token_required"),
      locks(SqlState.LOCKS_BAD_TOKEN, "locks_bad_token"),
      locks(SqlState.LOCKS_BAD_SLOT, "locks_bad_slot"),
      locks(SqlState.LOCKS_DUPLICATE_IN_CALL, "locks_duplicate_in_call"),
      locks(SqlState.LOCKS_TOO_MANY_OPS, "locks_too_many_ops"),
      locks(SqlState.LOCKS_TOO_MANY_KEYS, "locks_too_many_keys"),
      Map.entry(SqlState.LOCKS_MISALIGNED, new Code(500, "internal", "locks_misaligned")));

  private StateCodes() {}

  private static Map.Entry<SqlState, Code> kv(SqlState s, String reason) {
    return Map.entry(s, new Code(400, "kv_bad_request", reason));
  }

  private static Map.Entry<SqlState, Code> locks(SqlState s, String reason) {
    return Map.entry(s, new Code(400, "locks_bad_request", reason));
  }

  /** The registry row of a failure's SQLSTATE, or null when it is not one of these procedures' refusals. */
  public static Code of(Throwable t) {
    return CODES.get(SqlState.of(t));
  }

  /**
   * The verdict of a lost {@code required} precondition (QV820's DETAIL: {@code index, op, ns, key, reason, version,
   * value}), or null when {@code t} is not one.
   */
  public static JsonObject verdict(Throwable t) {
    if (!SqlState.KV_PRECONDITION.is(t)) return null;
    String detail = SqlState.detail(t);
    return detail == null ? new JsonObject() : new JsonObject(detail);
  }

  /** The 200 envelope of a lost precondition on the key-value routes (§2.6). */
  public static JsonObject preconditionEnvelope(JsonObject verdict, int failedIndex) {
    JsonObject out = new JsonObject().put("ok", false).put("reason", "kv_precondition")
        .put("failedIndex", failedIndex).put("kvReason", verdict.getValue("reason"))
        .put("version", verdict.getValue("version")).put("value", verdict.getValue("value"));
    if (verdict.containsKey("valueOmitted")) out.put("valueOmitted", verdict.getValue("valueOmitted"));
    return out;
  }
}
