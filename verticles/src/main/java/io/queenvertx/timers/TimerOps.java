package io.queenvertx.timers;

import io.queenvertx.codec.EnvelopeCipher;
import io.queenvertx.codec.UuidV7;
import io.queenvertx.db.PushProcedures;
import io.queenvertx.db.SqlState;
import io.queenvertx.db.TimerProcedures.Op;
import io.queenvertx.kernel.ApiError;
import io.queenvertx.kernel.StorableText;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

/**
 * Timer operations as the wire sends them (docs/design/queen2-contract.md §3.2), for {@code POST /api/v1/timers} and a
 * transaction's {@code timers} rider: parsing to {@link Op}s (the broker mints each schedule's message id), the
 * refusals in the KV/timer envelope ({@code {"error","code","reason","detail"}}, §1.2) for Java's checks and for the
 * SQLSTATEs of {@code timers_apply} (§1.3), and the local wake-up of the timer sweep after a schedule commits.
 */
public final class TimerOps {
  /** Local (never clustered) address: a timer was armed; body {@code {"delayMs"}}, the earliest of the call. */
  public static final String ARMED = "queen.timers.armed";
  /** The most operations in one call (QV912 in SQL as well). */
  public static final int MAX_OPS = 256;
  /** The most payload bytes of one timer, decoded (QV910 in SQL as well). */
  public static final int MAX_PAYLOAD_BYTES = 1 << 20;
  private static final Set<String> SERVER_OWNED = Set.of("producerSub", "messageId", "deliverAt", "delaySeconds",
      "attempts", "claimToken");
  private static final DeliveryOptions LOCAL = new DeliveryOptions().setLocalOnly(true);

  private TimerOps() {}

  /** The operations of a body: {@code {"operations":[...]}} or a bare array; 400 naming the field otherwise. */
  public static List<Op> parseBody(Object body) {
    JsonArray ops;
    if (body instanceof JsonArray a) ops = a;
    else if (body instanceof JsonObject o && o.getValue("operations") instanceof JsonArray a) ops = a;
    else throw bad("timers_bad_request", "operations is required: {\"operations\":[...]} or an array of operations");
    return parse(ops);
  }

  /** Each element of {@code ops} as an {@link Op}, in order; 400/403/413 naming the operation's index and field. */
  public static List<Op> parse(JsonArray ops) {
    if (ops.isEmpty()) throw bad("timers_bad_request", "operations must hold at least one operation");
    if (ops.size() > MAX_OPS) {
      throw bad("timers_too_many_ops", ops.size() + " timer operations in one call, the most is " + MAX_OPS);
    }
    List<Op> out = new ArrayList<>(ops.size());
    for (int i = 0; i < ops.size(); i++) {
      if (!(ops.getValue(i) instanceof JsonObject op)) throw bad("timers_bad_request", at(i) + "must be an object");
      out.add(parse(op, i));
    }
    return out;
  }

  private static Op parse(JsonObject o, int i) {
    for (String f : o.fieldNames()) {
      if (f.startsWith("_") || f.startsWith("tenant") || SERVER_OWNED.contains(f)) {
        throw bad("timers_server_owned_field", at(i) + f + " is set by the broker, never by a client");
      }
    }
    String op = text(o, "op", i);
    if (op == null || !(op.equals("schedule") || op.equals("reschedule") || op.equals("cancel"))) {
      throw bad("timers_unknown_op", at(i) + "op must be schedule, reschedule or cancel, got "
          + Json.encode(o.getValue("op")));
    }
    String queue = text(o, "queue", i);
    if (queue == null || queue.isEmpty() || queue.codePointCount(0, queue.length()) > 255) {
      throw bad("timers_queue_required", at(i) + "queue must be a non-empty name of at most 255 characters");
    }
    String key = text(o, "timerKey", i);
    if (key == null || key.isEmpty()) throw bad("timers_key_required", at(i) + "timerKey must be a non-empty string");
    if (key.getBytes(StandardCharsets.UTF_8).length > 512) {
      throw ApiError.withBody(413, envelope("name_too_long", "timers_key_too_long",
          at(i) + "timerKey is over 512 bytes"));
    }
    String txn = text(o, "txn", i);
    if (op.equals("cancel")) return Op.cancel(queue, key, txn);
    String partition = o.containsKey("partition") ? text(o, "partition", i) : "Default";
    if (partition == null || partition.isEmpty() || partition.codePointCount(0, partition.length()) > 255) {
      throw bad("timers_bad_partition", at(i) + "partition must be a non-empty name of at most 255 characters");
    }
    Long delay = delay(o.getValue("delayMs"), i);
    if (delay > 7_776_000_000L) {
      throw ApiError.withBody(403, envelope("timer_horizon_exceeded", "timers_horizon",
          at(i) + "delayMs " + delay + " is beyond the 7776000000 ms (90 days) horizon"));
    }
    if (txn == null || txn.isEmpty() || txn.getBytes(StandardCharsets.UTF_8).length > 65_535) {
      throw bad("timers_txn_required", at(i) + "txn must be a non-empty transaction id of at most 65535 bytes");
    }
    return new Op(op, queue, key, partition, delay, txn, UuidV7.next(), payload(o, i), false);
  }

  private static Long delay(Object v, int i) {
    if (v == null) {
      throw bad("timers_delay_required", at(i) + "delayMs (milliseconds from now, negative fires at once) is required");
    }
    if (v instanceof Integer || v instanceof Long) return ((Number) v).longValue();
    if (v instanceof Number n && Double.isFinite(n.doubleValue()) && Math.abs(n.doubleValue()) < 1e15) {
      return Math.round(n.doubleValue());
    }
    throw bad("timers_delay_required", at(i) + "delayMs must be a number of milliseconds, got " + Json.encode(v));
  }

  private static byte[] payload(JsonObject o, int i) {
    if (!(o.getValue("payload") instanceof String b64)) {
      throw bad("timers_payload_required", at(i) + "payload (base64 of the message's JSON) is required");
    }
    byte[] bytes;
    try {
      bytes = Base64.getDecoder().decode(b64);
    } catch (IllegalArgumentException e) {
      throw bad("timers_payload_not_base64", at(i) + "payload must be base64");
    }
    if (bytes.length > MAX_PAYLOAD_BYTES) {
      throw ApiError.withBody(413, envelope("payload_too_large", "timers_payload_too_large",
          at(i) + "payload is " + bytes.length + " bytes, the most is " + MAX_PAYLOAD_BYTES));
    }
    try {
      String text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
      if (text.indexOf('\u0000') >= 0) throw new DecodeException("NUL");
      Json.decodeValue(text);
    } catch (CharacterCodingException | DecodeException e) {
      throw bad("timers_payload_not_json", at(i) + "payload must be base64 of UTF-8 JSON text");
    }
    return bytes;
  }

  private static String text(JsonObject o, String field, int i) {
    Object v = o.getValue(field);
    if (v == null) return null;
    if (!(v instanceof String s)) {
      throw bad("timers_bad_request", at(i) + field + " must be a string, got " + Json.encode(v));
    }
    if (!StorableText.storable(s)) {
      throw bad("timers_bad_request", at(i) + field + " must be valid text without NUL characters");
    }
    return s;
  }

  private static String at(int i) {
    return "timer operation " + i + ": ";
  }

  /** {@code {"error","code","reason","detail"}}: on the timer routes {@code error} is the code (§1.2). */
  public static JsonObject envelope(String error, String reason, String detail) {
    return new JsonObject().put("error", error).put("code", error).put("reason", reason).put("detail", detail);
  }

  private static ApiError bad(String reason, String detail) {
    return ApiError.withBody(400, envelope("timers_bad_request", reason, detail));
  }

  /**
   * The refusal of a failed {@code timers_apply} (§1.3): its QV9xx as 400/403/413, database trouble as 503
   * {@code timers_unavailable} (the caller adds {@code Retry-After}), anything else 500 {@code internal}.
   */
  public static ApiError refusal(Throwable e) {
    SqlState s = SqlState.of(e);
    String detail = SqlState.errorText(e) != null ? SqlState.errorText(e) : ApiError.describe(e);
    return switch (s) {
      case TIMER_UNKNOWN_OP -> bad("timers_unknown_op", detail);
      case TIMER_QUEUE_REQUIRED -> bad("timers_queue_required", detail);
      case TIMER_KEY_REQUIRED -> bad("timers_key_required", detail);
      case TIMER_KEY_TOO_LONG -> ApiError.withBody(413, envelope("name_too_long", "timers_key_too_long", detail));
      case TIMER_DELAY_REQUIRED -> bad("timers_delay_required", detail);
      case TIMER_HORIZON -> ApiError.withBody(403, envelope("timer_horizon_exceeded", "timers_horizon", detail));
      case TIMER_TXN_REQUIRED -> bad("timers_txn_required", detail);
      case TIMER_PAYLOAD_REQUIRED -> bad("timers_payload_required", detail);
      case TIMER_PAYLOAD_TOO_LARGE ->
          ApiError.withBody(413, envelope("payload_too_large", "timers_payload_too_large", detail));
      case TIMER_DUPLICATE_KEY -> bad("timers_duplicate_key_in_call", detail);
      case TIMER_TOO_MANY_OPS -> bad("timers_too_many_ops", detail);
      case TIMER_BAD_PARTITION -> bad("timers_bad_partition", detail);
      case CONNECTION_EXCEPTION, SERIALIZATION_FAILURE, ADMIN_SHUTDOWN, CRASH_SHUTDOWN, CANNOT_CONNECT_NOW,
           READ_ONLY_SQL_TRANSACTION, NONE ->
          ApiError.withBody(503, envelope("timers_unavailable", "timers_unavailable", detail));
      default -> ApiError.withBody(500, envelope("internal",
          s == SqlState.TIMER_MISALIGNED ? "timers_misaligned" : "internal", detail));
    };
  }

  /**
   * The operations with each schedule's payload encrypted when the node has a key and its queue is encrypted now
   * (contract §3.2: a timer of an encrypted queue never waits in clear); the flags are read with {@code pushes}. A
   * failed lookup fails the call (never a silent plaintext). Large payloads are encrypted on a worker.
   */
  public static Future<List<Op>> sealed(Vertx vertx, PushProcedures pushes, Optional<EnvelopeCipher> cipher,
                                        UUID tenant, List<Op> ops) {
    if (cipher.isEmpty()) return Future.succeededFuture(ops);
    Map<String, Future<Boolean>> flags = new HashMap<>();
    for (Op o : ops) if (o.payload() != null) flags.computeIfAbsent(o.queue(), q -> pushes.encryptionEnabled(tenant, q));
    if (flags.isEmpty()) return Future.succeededFuture(ops);
    return Future.all(List.copyOf(flags.values())).compose(x -> {
      long bytes = 0;
      for (Op o : ops) if (o.payload() != null) bytes += o.payload().length;
      java.util.concurrent.Callable<List<Op>> work = () -> {
        List<Op> out = new ArrayList<>(ops.size());
        for (Op o : ops) {
          boolean enc = o.payload() != null && !o.encrypted() && flags.get(o.queue()).result();
          out.add(!enc ? o : new Op(o.op(), o.queue(), o.timerKey(), o.partition(), o.delayMs(), o.txn(),
              o.messageId(), cipher.get().encryptToBytes(o.payload()), true));
        }
        return out;
      };
      if (bytes <= 64 * 1024) {
        try {
          return Future.succeededFuture(work.call());
        } catch (Exception e) {
          return Future.failedFuture(e);
        }
      }
      return vertx.executeBlocking(work, false);
    });
  }

  /** Wakes this node's timer sweep after a commit that armed timers: {@code delayMs} the earliest of them. */
  public static void armed(Vertx vertx, List<Op> ops) {
    long earliest = Long.MAX_VALUE;
    for (Op o : ops) if (o.delayMs() != null) earliest = Math.min(earliest, o.delayMs());
    if (earliest != Long.MAX_VALUE) {
      vertx.eventBus().publish(ARMED, new JsonObject().put("delayMs", Math.max(0, earliest)), LOCAL);
    }
  }
}
