package io.queenvertx.cli;

/**
 * qvctl's exit codes, the table in the README: scripts may rely on them.
 *
 * <ul>
 *   <li>0 ok;</li>
 *   <li>1 error: the broker failed (5xx, a 503 maintenance refusal) or answered something unexpected;</li>
 *   <li>2 usage: a bad flag or argument, a missing {@code --yes}, or a request the broker refused as malformed
 *       (400, 413, 415);</li>
 *   <li>3 not found (404: no such queue, dead letter, redrive task, route);</li>
 *   <li>4 auth: 401 or 403;</li>
 *   <li>5 unreachable: no connection to the broker (refused, unknown host, timed out);</li>
 *   <li>6 conflict (409: a redrive already runs for the queue);</li>
 *   <li>7 partial: the broker took only part of the work (a pushed item {@code failed}, an ack not taken, a dead
 *       letter gone, a redrive cancelled or with failed rows).</li>
 * </ul>
 */
final class Exit {
  static final int OK = 0;
  static final int ERROR = 1;
  static final int USAGE = 2;
  static final int NOT_FOUND = 3;
  static final int AUTH = 4;
  static final int UNREACHABLE = 5;
  static final int CONFLICT = 6;
  static final int PARTIAL = 7;

  private Exit() {}

  /** The exit code for an HTTP status that is not a success. */
  static int ofStatus(int status) {
    return switch (status) {
      case 400, 413, 415, 422 -> USAGE;
      case 401, 403 -> AUTH;
      case 404 -> NOT_FOUND;
      case 409 -> CONFLICT;
      default -> ERROR;
    };
  }

  /** A failure that ends the command with {@code code} and one line on standard error. */
  static final class Failure extends RuntimeException {
    final int code;

    Failure(int code, String message) {
      super(message);
      this.code = code;
    }
  }
}
