package io.queenvertx.auth;

import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.security.PrivateKey;
import java.security.Signature;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/** Builds signed compact JWS tokens for tests. */
final class Tokens {
  private Tokens() {}

  static String b64(byte[] b) {
    return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
  }

  static String hs(String alg, String secret, JsonObject claims) {
    return hs(new JsonObject().put("alg", alg).put("typ", "JWT"), secret, claims);
  }

  static String hs(JsonObject header, String secret, JsonObject claims) {
    return hs(header.getString("alg"), secret, header.encode().getBytes(StandardCharsets.UTF_8),
        claims.encode().getBytes(StandardCharsets.UTF_8));
  }

  /** An HMAC-signed token over header and claims given as bytes (which need not be valid UTF-8). */
  static String hs(String alg, String secret, byte[] header, byte[] claims) {
    try {
      String signing = b64(header) + "." + b64(claims);
      String macAlg = "HmacSHA" + alg.substring(2);
      Mac mac = Mac.getInstance(macAlg);
      mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), macAlg));
      return signing + "." + b64(mac.doFinal(signing.getBytes(StandardCharsets.US_ASCII)));
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  static String signed(JsonObject header, PrivateKey key, String jcaAlg, JsonObject claims) {
    try {
      String signing = b64(header.encode().getBytes(StandardCharsets.UTF_8)) + "."
          + b64(claims.encode().getBytes(StandardCharsets.UTF_8));
      Signature s = Signature.getInstance(jcaAlg);
      s.initSign(key);
      s.update(signing.getBytes(StandardCharsets.US_ASCII));
      return signing + "." + b64(s.sign());
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
