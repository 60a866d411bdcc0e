package io.queenvertx.auth;

/**
 * A request the auth layer refuses: a status (400 for a path not in canonical form, 401 for a missing or bad token,
 * 403 for too low a role, 500 for a key configuration fault) and the contract's error text as the message.
 * {@link AuthHandler} fails the routing context with it; the HTTP layer's failure handler renders it as the error
 * envelope, so this package needs nothing from the HTTP package.
 */
public final class AuthRefused extends RuntimeException {
  private final int status;

  AuthRefused(int status, String message) {
    super(message, null, false, false);
    this.status = status;
  }

  public int status() {
    return status;
  }
}
