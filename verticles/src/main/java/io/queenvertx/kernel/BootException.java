package io.queenvertx.kernel;

/**
 * A boot failure that is fully described by its one-line message (a busy port, an unreachable PostgreSQL), with the
 * process exit code {@link Main} uses for it: 2 for a setting the operator must change, 1 otherwise.
 */
public final class BootException extends RuntimeException {
  private final int exitCode;

  public BootException(String message, int exitCode) {
    super(message);
    this.exitCode = exitCode;
  }

  public int exitCode() {
    return exitCode;
  }
}
