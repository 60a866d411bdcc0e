package io.queenvertx.auth;

import io.queenvertx.kernel.JwtSettings;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.math.BigInteger;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.MessageDigest;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.EdECPoint;
import java.security.spec.EdECPublicKeySpec;
import java.security.spec.NamedParameterSpec;
import java.security.spec.RSAPublicKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.util.Base64;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Verifies a compact JWS the way Queen's broker does (API.md §2), with one fixed message per failure so clients can
 * tell them apart: header and algorithm, key (HMAC secret, PEM public key, or JWKS by {@code kid}), signature, then
 * the time claims with clock skew, issuer and audience. The JCA verifies signatures; this class only decides which
 * failure a token has. Beyond Queen: the header and claims must be valid UTF-8, a {@code crit} header is refused
 * (RFC 7515 §4.1.11: no extension is understood here), and with {@code QUEEN_JWT_REQUIRE_EXP} (the default) a token
 * without {@code exp} is refused.
 */
public final class JwtVerifier {
  /** A verified token: its subject and role set. */
  public record Claims(String subject, Set<AccessLevel.Role> roles, JsonObject payload) {}

  private final JwtSettings cfg;
  private final Map<String, PublicKey> jwks = new ConcurrentHashMap<>();
  private volatile PublicKey pemKey;
  /** Fetches the JWKS again; called on an unknown {@code kid}, at most once per {@link #REFETCH_GAP_MS}. */
  private volatile Runnable jwksRefetch = () -> { };
  private final java.util.concurrent.atomic.AtomicLong lastRefetch = new java.util.concurrent.atomic.AtomicLong();
  static final long REFETCH_GAP_MS = 5000;
  private volatile String pemError;

  public JwtVerifier(JwtSettings cfg) {
    this.cfg = cfg;
    if (!cfg.publicKey().isBlank()) {
      try {
        pemKey = parsePem(cfg.publicKey());
      } catch (GeneralSecurityException | IllegalArgumentException e) {
        pemError = cfg.publicKey().contains("RSA") || !cfg.publicKey().contains("ED")
            ? "invalid RSA public key PEM" : "invalid Ed public key PEM";
      }
    }
  }

  /** Replaces the JWKS key set (boot fetch and periodic refresh). */
  public void setJwks(JsonObject set) {
    Map<String, PublicKey> next = new HashMap<>();
    for (Object o : set.getJsonArray("keys", new JsonArray())) {
      if (!(o instanceof JsonObject k)) continue;
      try {
        PublicKey key = jwk(k);
        if (key != null) next.put(k.getString("kid", ""), key);
      } catch (GeneralSecurityException | RuntimeException e) {
        // a key we cannot read is skipped; the others stay usable
      }
    }
    jwks.clear();
    jwks.putAll(next);
  }

  void onUnknownKid(Runnable refetch) {
    this.jwksRefetch = refetch;
  }

  public int jwksSize() {
    return jwks.size();
  }

  public Claims verify(String token, long nowSeconds) throws TokenRejected {
    String[] parts = token.split("\\.", -1);
    if (parts.length != 3) throw TokenRejected.unauthorized("Bad token header");
    JsonObject header;
    JsonObject payload;
    byte[] sig;
    try {
      header = new JsonObject(utf8(b64(parts[0])));
      payload = new JsonObject(utf8(b64(parts[1])));
      sig = b64(parts[2]);
    } catch (RuntimeException | CharacterCodingException e) {
      throw TokenRejected.unauthorized("Bad token header");
    }
    String alg = header.getValue("alg") instanceof String a ? a : "";
    if (!accepted(alg)) throw TokenRejected.unauthorized("Unsupported token algorithm");
    // RFC 7515 4.1.11: a recipient must refuse a JWS whose "crit" names an extension it does not understand, and
    // this verifier understands none
    if (header.containsKey("crit")) throw TokenRejected.unauthorized("Bad token header");
    byte[] signed = (parts[0] + "." + parts[1]).getBytes(StandardCharsets.US_ASCII);
    if (!signatureValid(alg, header.getString("kid", ""), signed, sig)) {
      throw TokenRejected.unauthorized("Invalid token signature");
    }
    long skew = cfg.clockSkewS();
    Long exp = numericDate(payload, "exp");
    Long nbf = numericDate(payload, "nbf");
    Long iat = numericDate(payload, "iat");
    if (exp == null && cfg.requireExp()) throw TokenRejected.unauthorized("Token has no expiry");
    if (exp != null && nowSeconds > sat(exp, skew)) throw TokenRejected.unauthorized("Token has expired");
    if (nbf != null && sat(nowSeconds, skew) < nbf) throw TokenRejected.unauthorized("Token not yet valid");
    if (iat != null && sat(nowSeconds, skew) < iat) throw TokenRejected.unauthorized("Token issued in the future");
    if (!cfg.issuer().isEmpty() && !cfg.issuer().equals(payload.getValue("iss"))) {
      throw TokenRejected.unauthorized("Invalid token issuer");
    }
    if (!cfg.audience().isEmpty() && !audienceMatches(payload.getValue("aud"))) {
      throw TokenRejected.unauthorized("Invalid token audience");
    }
    return new Claims(payload.getValue("sub") instanceof String s ? s : null, roles(payload), payload);
  }

  /**
   * A time claim as whole seconds: absent or JSON null is null; a number (RFC 7519 NumericDate, fractions allowed) is
   * floored and clamped to the long range; anything else (a string such as {@code "1700000000"}, a boolean, an
   * object) cannot be read, and the token is rejected as unparseable rather than treated as having no such claim.
   */
  static Long numericDate(JsonObject payload, String claim) throws TokenRejected {
    Object v = payload.getValue(claim);
    if (v == null) return null;
    if (v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte) {
      return ((Number) v).longValue();
    }
    if (v instanceof Number n) {
      double d = n.doubleValue();
      if (Double.isNaN(d)) throw TokenRejected.unauthorized("Bad token header");
      if (d >= 0x1p63) return Long.MAX_VALUE;
      if (d < -0x1p63) return Long.MIN_VALUE;
      return (long) Math.floor(d);
    }
    throw TokenRejected.unauthorized("Bad token header");
  }

  /** {@code a + b} saturated at the long range. */
  private static long sat(long a, long b) {
    long r = a + b;
    if (((a ^ r) & (b ^ r)) < 0) return a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
    return r;
  }

  private boolean audienceMatches(Object aud) {
    if (aud instanceof String s) return s.equals(cfg.audience());
    if (aud instanceof JsonArray a) return a.contains(cfg.audience());
    return false;
  }

  private Set<AccessLevel.Role> roles(JsonObject p) {
    Set<AccessLevel.Role> out = EnumSet.noneOf(AccessLevel.Role.class);
    if (p.getValue(cfg.rolesClaim()) instanceof String r) addRole(out, r);
    if (p.getValue(cfg.rolesArrayClaim()) instanceof JsonArray arr) {
      for (Object o : arr) if (o instanceof String r) addRole(out, r);
    }
    return out;
  }

  private void addRole(Set<AccessLevel.Role> out, String r) {
    if (r.equals(cfg.roleAdmin())) out.add(AccessLevel.Role.ADMIN);
    else if (r.equals(cfg.roleReadWrite())) out.add(AccessLevel.Role.READ_WRITE);
    else if (r.equals(cfg.roleReadOnly())) out.add(AccessLevel.Role.READ_ONLY);
    else if (r.equals(cfg.roleWriteOnly())) out.add(AccessLevel.Role.WRITE_ONLY);
  }

  /** The configured algorithm accepts its family; {@code auto} accepts HS*, RS* and EdDSA. ES* and PS* never. */
  boolean accepted(String alg) {
    String conf = cfg.algorithm().toUpperCase(Locale.ROOT);
    boolean hs = alg.equals("HS256") || alg.equals("HS384") || alg.equals("HS512");
    boolean rs = alg.equals("RS256") || alg.equals("RS384") || alg.equals("RS512");
    boolean ed = alg.equals("EdDSA");
    if (conf.equals("AUTO")) return hs || rs || ed;
    if (conf.startsWith("HS")) return hs;
    if (conf.startsWith("RS")) return rs;
    if (conf.equals("EDDSA")) return ed;
    return false;
  }

  private boolean signatureValid(String alg, String kid, byte[] signed, byte[] sig) throws TokenRejected {
    try {
      if (alg.startsWith("HS")) {
        if (cfg.secret().isEmpty()) throw TokenRejected.misconfigured("HS secret not configured");
        String macAlg = "Hmac" + "SHA" + alg.substring(2);
        Mac mac = Mac.getInstance(macAlg);
        mac.init(new SecretKeySpec(cfg.secret().getBytes(StandardCharsets.UTF_8), macAlg));
        return MessageDigest.isEqual(mac.doFinal(signed), sig);
      }
      PublicKey key = keyFor(alg, kid);
      Signature s = Signature.getInstance(alg.equals("EdDSA") ? "Ed25519" : "SHA" + alg.substring(2) + "withRSA");
      s.initVerify(key);
      s.update(signed);
      return s.verify(sig);
    } catch (GeneralSecurityException e) {
      return false;
    }
  }

  private PublicKey keyFor(String alg, String kid) throws TokenRejected {
    if (pemError != null) throw TokenRejected.misconfigured(pemError);
    if (pemKey != null) return pemKey;
    if (jwks.isEmpty() && cfg.jwksUrl().isEmpty()) {
      throw TokenRejected.misconfigured(alg.equals("EdDSA") ? "invalid Ed public key PEM" : "invalid RSA public key PEM");
    }
    PublicKey k = kid.isEmpty() && jwks.size() == 1 ? jwks.values().iterator().next() : jwks.get(kid);
    if (k == null) {
      // a key rotated in at the issuer: fetch the set again (rate-limited) so the next request can verify
      long now = System.currentTimeMillis();
      long last = lastRefetch.get();
      if (now - last >= REFETCH_GAP_MS && lastRefetch.compareAndSet(last, now)) jwksRefetch.run();
      throw TokenRejected.unauthorized("Unknown key ID");
    }
    return k;
  }

  static PublicKey parsePem(String pem) throws GeneralSecurityException {
    String body = pem.replaceAll("-----(BEGIN|END) [A-Z ]+-----", "").replaceAll("\\s", "");
    byte[] der = Base64.getDecoder().decode(body);
    var spec = new X509EncodedKeySpec(der);
    try {
      return KeyFactory.getInstance("RSA").generatePublic(spec);
    } catch (GeneralSecurityException e) {
      return KeyFactory.getInstance("Ed25519").generatePublic(spec);
    }
  }

  private static PublicKey jwk(JsonObject k) throws GeneralSecurityException {
    String kty = k.getString("kty", "");
    if (kty.equals("RSA")) {
      var spec = new RSAPublicKeySpec(new BigInteger(1, b64(k.getString("n"))), new BigInteger(1, b64(k.getString("e"))));
      return KeyFactory.getInstance("RSA").generatePublic(spec);
    }
    if (kty.equals("OKP") && "Ed25519".equals(k.getString("crv"))) {
      byte[] x = b64(k.getString("x"));
      // RFC 8032 encoding: little-endian y with the sign of x in the top bit of the last byte.
      boolean odd = (x[x.length - 1] & 0x80) != 0;
      x[x.length - 1] &= 0x7F;
      byte[] be = new byte[x.length];
      for (int i = 0; i < x.length; i++) be[i] = x[x.length - 1 - i];
      var spec = new EdECPublicKeySpec(NamedParameterSpec.ED25519, new EdECPoint(odd, new BigInteger(1, be)));
      return KeyFactory.getInstance("Ed25519").generatePublic(spec);
    }
    return null;
  }

  /** Strict UTF-8: a malformed sequence (an overlong form, a surrogate, a stray byte) is refused, not replaced. */
  private static String utf8(byte[] b) throws CharacterCodingException {
    return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
        .onUnmappableCharacter(CodingErrorAction.REPORT).decode(java.nio.ByteBuffer.wrap(b)).toString();
  }

  private static byte[] b64(String s) {
    return Base64.getUrlDecoder().decode(s.replace('+', '-').replace('/', '_').replace("=", ""));
  }
}
