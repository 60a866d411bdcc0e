package io.queenvertx.kernel;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;

/**
 * The one error model of the HTTP surface: a status and the exact body the contract wants for it. Handlers fail
 * their routing context (or a Future) with an {@code ApiError}; {@link ErrorContract} renders it. Handlers never write
 * error JSON themselves.
 */
public final class ApiError extends RuntimeException {
  private final int status;
  private final Buffer body;
  private final String contentType;

  private ApiError(int status, Buffer body, String contentType, String message) {
    this(status, body, contentType, message, null);
  }

  private ApiError(int status, Buffer body, String contentType, String message, Throwable cause) {
    super(message, cause, false, false);
    this.status = status;
    this.body = body;
    this.contentType = contentType;
  }

  /** The generic envelope {@code {"error":"<text>"}} (shared/seeds/status-codes-and-errors.txt). */
  public static ApiError of(int status, String text) {
    return new ApiError(status, new JsonObject().put("error", text).toBuffer(), "application/json", text);
  }

  /** {@code {"error":"<text>","code":"<code>"}}: an error whose 2.x machine code is not its status's own. */
  public static ApiError coded(int status, String code, String text) {
    return new ApiError(status, new JsonObject().put("error", text).put("code", code).toBuffer(), "application/json",
        text);
  }

  /**
   * {@code {"error":"<prefix><cause text>"}}, as Queen's {@code json_err(prefix, e)} builds it; the cause is kept
   * (never sent) so a 5xx log line can show where it came from.
   */
  public static ApiError prefixed(int status, String prefix, Throwable cause) {
    String text = prefix + describe(cause);
    return new ApiError(status, new JsonObject().put("error", text).toBuffer(), "application/json", text, cause);
  }

  /** A contract body with more keys than the envelope (replay verdicts, delete 404s, pop 400s ...). */
  public static ApiError withBody(int status, JsonObject body) {
    return new ApiError(status, body.toBuffer(), "application/json", body.encode());
  }

  /** Bytes passed through verbatim (a stored procedure's own JSON). */
  public static ApiError raw(int status, Buffer body, String contentType) {
    return new ApiError(status, body, contentType, body.toString());
  }

  public int status() {
    return status;
  }

  public Buffer body() {
    return body;
  }

  public String contentType() {
    return contentType;
  }

  /** The real error text of a failure, never "null". */
  public static String describe(Throwable t) {
    if (t == null) return "unknown error";
    String m = t.getMessage();
    return m == null || m.isBlank() ? t.getClass().getSimpleName() : m;
  }
}
