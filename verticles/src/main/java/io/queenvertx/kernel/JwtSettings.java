package io.queenvertx.kernel;

import java.util.Locale;
import java.util.Set;

/**
 * JWT access levels (API.md §2.1); everything but {@code enabled} is only read when it is on. Auth on with an unknown
 * algorithm or without key material is a configuration error, so the node stops before anything starts.
 *
 * @param enabled {@code JWT_ENABLED} (off: no 401/403 ever)
 * @param algorithm {@code JWT_ALGORITHM} ("HS256"): {@code HS256/384/512}, {@code RS256/384/512}, {@code EdDSA} or
 *     {@code auto}
 * @param secret {@code JWT_SECRET} (empty; taken as given): the HMAC secret
 * @param publicKey {@code JWT_PUBLIC_KEY} (empty; taken as given): a PEM public key (RSA or Ed25519)
 * @param jwksUrl {@code JWT_JWKS_URL} (empty): a JWKS set, keys chosen by {@code kid}
 * @param jwksRefreshIntervalS {@code JWT_JWKS_REFRESH_INTERVAL} (3600, 5..2^31-1)
 * @param jwksTimeoutMs {@code JWT_JWKS_TIMEOUT_MS} (5000, 1..2^31-1)
 * @param issuer {@code JWT_ISSUER} (empty: not checked)
 * @param audience {@code JWT_AUDIENCE} (empty: not checked)
 * @param clockSkewS {@code JWT_CLOCK_SKEW} (30, at least 0): allowed skew for {@code exp}, {@code nbf}, {@code iat}
 * @param requireExp {@code QUEEN_JWT_REQUIRE_EXP} (on): a token without an {@code exp} claim is 401
 *     {@code Token has no expiry}. On by default although Queen accepts such tokens: the broker keeps no revocation
 *     list, so a token without {@code exp} that leaks stays valid for as long as its key does. Off restores Queen's
 *     behaviour for deployments whose tokens carry no {@code exp}.
 * @param skipPaths {@code JWT_SKIP_PATHS} ("/health,/metrics/prometheus,/metrics,/"): paths that need no token
 *     (exact, or a prefix when ending in {@code /})
 * @param rolesClaim {@code JWT_ROLES_CLAIM} ("role")
 * @param rolesArrayClaim {@code JWT_ROLES_ARRAY_CLAIM} ("roles")
 * @param roleAdmin {@code JWT_ROLE_ADMIN} ("admin")
 * @param roleReadWrite {@code JWT_ROLE_READ_WRITE} ("read-write")
 * @param roleReadOnly {@code JWT_ROLE_READ_ONLY} ("read-only")
 * @param roleWriteOnly {@code JWT_ROLE_WRITE_ONLY} ("write-only")
 */
public record JwtSettings(
    boolean enabled,
    String algorithm,
    String secret,
    String publicKey,
    String jwksUrl,
    long jwksRefreshIntervalS,
    long jwksTimeoutMs,
    String issuer,
    String audience,
    long clockSkewS,
    boolean requireExp,
    String skipPaths,
    String rolesClaim,
    String rolesArrayClaim,
    String roleAdmin,
    String roleReadWrite,
    String roleReadOnly,
    String roleWriteOnly) {
  public static final String DEFAULT_ALGORITHM = "HS256";
  public static final long DEFAULT_JWKS_REFRESH_INTERVAL_S = 3600;
  public static final long DEFAULT_JWKS_TIMEOUT_MS = 5000;
  public static final long DEFAULT_CLOCK_SKEW_S = 30;
  public static final String DEFAULT_SKIP_PATHS = "/health,/metrics/prometheus,/metrics,/";

  private static final Set<String> ALGORITHMS =
      Set.of("HS256", "HS384", "HS512", "RS256", "RS384", "RS512", "EDDSA", "AUTO");

  static JwtSettings from(ConfigReader e) {
    return checked(new JwtSettings(
        e.bool("JWT_ENABLED", false),
        e.str("JWT_ALGORITHM", DEFAULT_ALGORITHM),
        e.untrimmed("JWT_SECRET", ""),
        e.untrimmed("JWT_PUBLIC_KEY", ""),
        e.str("JWT_JWKS_URL", ""),
        e.lng("JWT_JWKS_REFRESH_INTERVAL", DEFAULT_JWKS_REFRESH_INTERVAL_S, 5, Integer.MAX_VALUE),
        e.lng("JWT_JWKS_TIMEOUT_MS", DEFAULT_JWKS_TIMEOUT_MS, 1, Integer.MAX_VALUE),
        e.str("JWT_ISSUER", ""),
        e.str("JWT_AUDIENCE", ""),
        e.lng("JWT_CLOCK_SKEW", DEFAULT_CLOCK_SKEW_S, 0, Long.MAX_VALUE),
        e.bool("QUEEN_JWT_REQUIRE_EXP", true),
        e.str("JWT_SKIP_PATHS", DEFAULT_SKIP_PATHS),
        e.str("JWT_ROLES_CLAIM", "role"),
        e.str("JWT_ROLES_ARRAY_CLAIM", "roles"),
        e.str("JWT_ROLE_ADMIN", "admin"),
        e.str("JWT_ROLE_READ_WRITE", "read-write"),
        e.str("JWT_ROLE_READ_ONLY", "read-only"),
        e.str("JWT_ROLE_WRITE_ONLY", "write-only")));
  }

  private static JwtSettings checked(JwtSettings jwt) {
    if (!jwt.enabled()) return jwt;
    if (!ALGORITHMS.contains(jwt.algorithm().toUpperCase(Locale.ROOT))) {
      throw ConfigException.of("JWT_ALGORITHM", jwt.algorithm(),
          "one of HS256, HS384, HS512, RS256, RS384, RS512, EdDSA, auto");
    }
    if (jwt.secret().isEmpty() && jwt.publicKey().isBlank() && jwt.jwksUrl().isEmpty()) {
      throw new ConfigException("JWT_ENABLED=true needs JWT_SECRET, JWT_PUBLIC_KEY or JWT_JWKS_URL (all are empty)");
    }
    return jwt;
  }
}
