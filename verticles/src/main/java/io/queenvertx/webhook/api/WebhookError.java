package io.queenvertx.webhook.api;

import io.queenvertx.auth.AuthRefused;
import io.queenvertx.kernel.ApiError;
import io.vertx.core.json.DecodeException;

/**
 * The webhook API's one error model (shared/seeds/webhook-dlq-listing.txt): a status, a machine code of the seed's
 * enum and a human message, rendered as {@code {error:{code,message}, meta:{request_id}}} by
 * {@link WebhookApi#onFailure}. Failures of other kinds that reach the API (the router's own, Queen's
 * {@link ApiError} of a shared layer, an unparseable body) are translated by {@link #of} and {@link #ofStatus}.
 */
final class WebhookError extends RuntimeException {
  final int status;
  final String code;

  WebhookError(int status, String code, String message) {
    super(message, null, false, false);
    this.status = status;
    this.code = code;
  }

  static WebhookError invalid(String message) {
    return new WebhookError(400, "INVALID_REQUEST", message);
  }

  static WebhookError notFound(String message) {
    return new WebhookError(404, "NOT_FOUND", message);
  }

  static WebhookError unauthorized() {
    return new WebhookError(401, "UNAUTHORIZED", "Invalid or missing API key");
  }

  static WebhookError unavailable(String message) {
    return new WebhookError(503, "SERVICE_UNAVAILABLE", message);
  }

  static WebhookError internal(String message) {
    return new WebhookError(500, "INTERNAL_ERROR", message);
  }

  /** Any failure as this API's error; what is not a known client error is a 500 that shows nothing inside. */
  static WebhookError of(Throwable e) {
    if (e instanceof WebhookError w) return w;
    if (e instanceof DecodeException) return invalid("request body must be a JSON object");
    int status = e instanceof ApiError a ? a.status() : e instanceof AuthRefused r ? r.status() : 500;
    if (status == 503) return unavailable("service unavailable, retry later");
    if (status >= 400 && status < 500) return new WebhookError(status, codeOf(status), e.getMessage());
    return internal("internal error");
  }

  /**
   * A bare status the router set without an error of its own (no such route or method, the body-limit layer); the
   * route is named in the message.
   */
  static WebhookError ofStatus(int status, String method, String path) {
    if (status == 404 || status == 405) return notFound("no such route: " + method + " " + path);
    if (status == 413) return new WebhookError(413, "PAYLOAD_TOO_LARGE", "request body too large");
    if (status >= 400 && status < 500) {
      return new WebhookError(status, codeOf(status), "request refused (HTTP " + status + ")");
    }
    return internal("internal error");
  }

  private static String codeOf(int status) {
    return switch (status) {
      case 401 -> "UNAUTHORIZED";
      case 403 -> "FORBIDDEN";
      case 404 -> "NOT_FOUND";
      case 409 -> "CONFLICT";
      case 413 -> "PAYLOAD_TOO_LARGE";
      default -> "INVALID_REQUEST";
    };
  }
}
