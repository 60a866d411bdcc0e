package io.queenvertx.kernel;

import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import java.util.Locale;

/**
 * How a stored procedure's JSON text becomes an HTTP status (API.md §1.4, seed "How a stored-procedure error becomes
 * a status code"): a top-level non-null {@code error} whose text contains "not found" (any case) is a 404, any other
 * error a 500; no error is a 200; a body that is not JSON is a 200, unchanged. The bytes are never rewritten.
 */
public final class ProcedureResult {
  private ProcedureResult() {}

  public static int statusOf(String body) {
    if (body == null) return 200;
    String trimmed = body.strip();
    if (!trimmed.startsWith("{")) return 200;
    JsonObject json;
    try {
      json = new JsonObject(trimmed);
    } catch (DecodeException | ClassCastException e) {
      return 200;
    }
    Object error = json.getValue("error");
    if (error == null) return 200;
    String text = error instanceof String s ? s : String.valueOf(error);
    return text.toLowerCase(Locale.ROOT).contains("not found") ? 404 : 500;
  }
}
