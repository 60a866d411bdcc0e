package io.queenvertx.auth;

/** Why a token was refused: a 401 with one of the fixed messages, or a 500 for a key configuration fault. */
public final class TokenRejected extends Exception {
  private final int status;

  TokenRejected(int status, String message) {
    super(message, null, false, false);
    this.status = status;
  }

  static TokenRejected unauthorized(String message) {
    return new TokenRejected(401, message);
  }

  static TokenRejected misconfigured(String message) {
    return new TokenRejected(500, message);
  }

  public int status() {
    return status;
  }
}
