package io.queenvertx.state;

/**
 * A key-value or lock request refused before it reaches the database: the HTTP status, the {@code reason} of the
 * contract's registry (docs/design/queen2-contract.md §1.3) and the human {@code detail} naming the operation's index
 * and the field. The routes render it as their family's envelope, a transaction as its 400 {@code bad_request}.
 */
public final class StateRefused extends RuntimeException {
  private final int status;
  private final String reason;

  public StateRefused(int status, String reason, String detail) {
    super(detail, null, false, false);
    this.status = status;
    this.reason = reason;
  }

  public int status() {
    return status;
  }

  public String reason() {
    return reason;
  }
}
