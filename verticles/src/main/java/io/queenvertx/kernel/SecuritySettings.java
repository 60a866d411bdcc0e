package io.queenvertx.kernel;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * Secrets and trust: the payload encryption key, whether a header selects the tenant, the webhook API's keys, and
 * which browser origins and {@code Host} names the HTTP surface answers. JWT access levels are {@link JwtSettings}.
 *
 * @param encryptionKeyHex {@code QUEEN_ENCRYPTION_KEY} (unset): 64 hexadecimal characters, the AES-256 key of queues
 *     with {@code encryptionEnabled}; a malformed key stops the boot
 * @param tenancyHeader {@code QUEEN_TENANCY_HEADER} (off): the tenant comes from the {@code x-queen-tenant} header
 * @param webhookApiKeys {@code QUEEN_WEBHOOK_API_KEYS} (none): comma-separated {@code key} or
 *     {@code key=<tenant uuid>} entries, the Bearer credentials of the webhook API under {@code /v1/}; a key without
 *     a tenant is the default tenant's
 * @param allowedOrigins {@code QUEEN_ALLOWED_ORIGINS} (none: same origin only): comma-separated origins
 *     ({@code scheme://host[:port]}, http or https, no path) whose browser pages may call the API besides the
 *     broker's own; {@code *} alone accepts any origin (unsafe: any web page the operator visits can then drive the
 *     broker). Kept canonical: lower case, without the scheme's default port.
 * @param allowedHosts {@code QUEEN_ALLOWED_HOSTS} (none: any {@code Host}): comma-separated {@code host} (any port)
 *     or {@code host:port} entries, lower case; another {@code Host} header is answered 421 (DNS rebinding).
 */
public record SecuritySettings(Optional<String> encryptionKeyHex, boolean tenancyHeader,
                               Map<String, UUID> webhookApiKeys, List<String> allowedOrigins,
                               List<String> allowedHosts) {
  /** The tenant of a webhook API key given without one. */
  public static final UUID DEFAULT_TENANT = Defaults.DEFAULT_TENANT;
  /** The {@code QUEEN_ALLOWED_ORIGINS} entry that accepts every origin. */
  public static final String ANY_ORIGIN = "*";

  static SecuritySettings from(ConfigReader e) {
    String key = e.str("QUEEN_ENCRYPTION_KEY", "");
    return new SecuritySettings(
        key.isEmpty() ? Optional.empty() : Optional.of(checkKey(key)),
        e.bool("QUEEN_TENANCY_HEADER", false),
        apiKeys(e.str("QUEEN_WEBHOOK_API_KEYS", "")),
        origins(e.str("QUEEN_ALLOWED_ORIGINS", "")),
        hosts(e.str("QUEEN_ALLOWED_HOSTS", "")));
  }

  /** A host and its port as written; {@code port} is -1 when none was. The host is lower case. */
  public record HostPort(String host, int port) {
    @Override
    public String toString() {
      return port < 0 ? host : host + ":" + port;
    }
  }

  /**
   * {@code host[:port]} as in a {@code Host} header or an origin: a name or IPv4 address (letters, digits, {@code -},
   * {@code .}, {@code _}) or a bracketed IPv6 address, then an optional port 1..65535; null when {@code s} is not one.
   */
  public static HostPort hostPort(String s) {
    if (s == null || s.isEmpty()) return null;
    int end;
    if (s.charAt(0) == '[') {
      end = s.indexOf(']');
      if (end < 2 || !s.substring(1, end).chars().allMatch(c -> Character.digit(c, 16) >= 0 || c == ':' || c == '.')) {
        return null;
      }
      end++;
    } else {
      end = s.indexOf(':');
      if (end < 0) end = s.length();
      if (end == 0 || !s.substring(0, end).chars().allMatch(c -> c < 0x80 && (Character.isLetterOrDigit(c)
          || c == '-' || c == '.' || c == '_'))) {
        return null;
      }
    }
    String host = s.substring(0, end).toLowerCase(Locale.ROOT);
    if (end == s.length()) return new HostPort(host, -1);
    String port = s.substring(end + 1);
    if (s.charAt(end) != ':' || port.isEmpty() || port.length() > 5
        || !port.chars().allMatch(c -> c >= '0' && c <= '9')) {
      return null;
    }
    int p = Integer.parseInt(port);
    return p >= 1 && p <= 65535 ? new HostPort(host, p) : null;
  }

  /** The default port of an origin's scheme: 80 for http, 443 for https, -1 for any other scheme. */
  public static int defaultPort(String scheme) {
    return scheme.equals("http") ? 80 : scheme.equals("https") ? 443 : -1;
  }

  /**
   * An origin ({@code scheme://host[:port]}, http or https, no path) in canonical form: lower case and without the
   * scheme's default port, as browsers send it; null when {@code s} is not one.
   */
  public static String canonicalOrigin(String s) {
    int sep = s == null ? -1 : s.indexOf("://");
    if (sep < 0) return null;
    String scheme = s.substring(0, sep).toLowerCase(Locale.ROOT);
    int def = defaultPort(scheme);
    HostPort hp = def < 0 ? null : hostPort(s.substring(sep + 3));
    if (hp == null) return null;
    return scheme + "://" + hp.host() + (hp.port() < 0 || hp.port() == def ? "" : ":" + hp.port());
  }

  /** Parses {@code QUEEN_ALLOWED_ORIGINS}: canonical origins, or {@link #ANY_ORIGIN} alone. */
  static List<String> origins(String spec) {
    List<String> out = new ArrayList<>();
    for (String part : spec.split(",")) {
      String p = part.trim();
      if (p.isEmpty()) continue;
      String o = p.equals(ANY_ORIGIN) ? ANY_ORIGIN : canonicalOrigin(p);
      if (o == null) {
        throw ConfigException.of("QUEEN_ALLOWED_ORIGINS", spec, "comma-separated origins such as "
            + "https://app.example.com or http://10.0.0.5:8080 (http or https, no path), or * for any; '" + p
            + "' is not one");
      }
      if (!out.contains(o)) out.add(o);
    }
    if (out.contains(ANY_ORIGIN)) return List.of(ANY_ORIGIN);
    return List.copyOf(out);
  }

  /** Parses {@code QUEEN_ALLOWED_HOSTS}: {@code host} or {@code host:port} entries, lower case. */
  static List<String> hosts(String spec) {
    List<String> out = new ArrayList<>();
    for (String part : spec.split(",")) {
      String p = part.trim();
      if (p.isEmpty()) continue;
      HostPort hp = hostPort(p);
      if (hp == null) {
        throw ConfigException.of("QUEEN_ALLOWED_HOSTS", spec, "comma-separated host names or addresses, each "
            + "with an optional :port (queen.example.com, 10.0.0.5:6632, [::1]); '" + p + "' is not one");
      }
      if (!out.contains(hp.toString())) out.add(hp.toString());
    }
    return List.copyOf(out);
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
