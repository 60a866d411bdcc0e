package io.queenvertx.boot;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * Secrets and trust: the payload encryption key, whether a header selects the tenant, and the webhook API's keys.
 * JWT access levels are {@link JwtSettings}.
 *
 * @param encryptionKeyHex {@code QUEEN_ENCRYPTION_KEY} (unset): 64 hexadecimal characters, the AES-256 key of queues
 *     with {@code encryptionEnabled}; a malformed key stops the boot
 * @param tenancyHeader {@code QUEEN_TENANCY_HEADER} (off): the tenant comes from the {@code x-queen-tenant} header
 * @param webhookApiKeys {@code QUEEN_WEBHOOK_API_KEYS} (none): comma-separated {@code key} or
 *     {@code key=<tenant uuid>} entries, the Bearer credentials of the webhook API under {@code /v1/}; a key without
 *     a tenant is the default tenant's
 */
public record SecuritySettings(Optional<String> encryptionKeyHex, boolean tenancyHeader,
                               Map<String, UUID> webhookApiKeys) {
  /** The tenant of a webhook API key given without one. */
  public static final UUID DEFAULT_TENANT = UUID.fromString("00000000-0000-0000-0000-000000000001");

  static SecuritySettings from(ConfigReader e) {
    String key = e.str("QUEEN_ENCRYPTION_KEY", "");
    return new SecuritySettings(
        key.isEmpty() ? Optional.empty() : Optional.of(checkKey(key)),
        e.bool("QUEEN_TENANCY_HEADER", false),
        apiKeys(e.str("QUEEN_WEBHOOK_API_KEYS", "")));
  }

  /**
   * {@code QUEEN_ENCRYPTION_KEY} must be 64 hexadecimal characters. The message gives the length and the first
   * offending position, never the key itself (it is a secret).
   */
  static String checkKey(String key) {
    String accepted = "64 hexadecimal characters [0-9a-fA-F] (a 32-byte AES-256 key)";
    if (key.length() != 64) {
      throw new ConfigException("QUEEN_ENCRYPTION_KEY (a value of " + key.length() + " characters, not shown) is not"
          + " accepted: " + accepted);
    }
    for (int i = 0; i < key.length(); i++) {
      if (Character.digit(key.charAt(i), 16) < 0) {
        throw new ConfigException("QUEEN_ENCRYPTION_KEY (64 characters, not shown; character " + i
            + " is not hexadecimal) is not accepted: " + accepted);
      }
    }
    return key;
  }

  /** Parses {@code QUEEN_WEBHOOK_API_KEYS}; a bad tenant names the entry by its key's first character only. */
  static Map<String, UUID> apiKeys(String spec) {
    Map<String, UUID> keys = new LinkedHashMap<>();
    for (String part : spec.split(",")) {
      String p = part.trim();
      if (p.isEmpty()) continue;
      int eq = p.indexOf('=');
      String key = eq < 0 ? p : p.substring(0, eq).trim();
      UUID tenant;
      try {
        tenant = eq < 0 ? DEFAULT_TENANT : UUID.fromString(p.substring(eq + 1).trim());
      } catch (IllegalArgumentException e) {
        throw new ConfigException("QUEEN_WEBHOOK_API_KEYS: the tenant of entry "
            + (key.isEmpty() ? "''" : "'" + key.charAt(0) + "...'")
            + " is not accepted ('" + p.substring(eq + 1).trim() + "'): a tenant UUID after '='");
      }
      if (!key.isEmpty()) keys.put(key, tenant);
    }
    return Collections.unmodifiableMap(keys);
  }
}
