package io.queenvertx.kernel;

/**
 * A configuration value that is not accepted: its one-line message names the variable, the value and what is
 * accepted. {@link Main} prints the message alone (no stack trace) and exits with code 2, before anything starts.
 */
public final class ConfigException extends IllegalArgumentException {
  public ConfigException(String message) {
    super(message);
  }

  /** "{@code VAR='value' is not accepted: what}" */
  static ConfigException of(String variable, String value, String accepted) {
    return new ConfigException(variable + "='" + value + "' is not accepted: " + accepted);
  }
}
