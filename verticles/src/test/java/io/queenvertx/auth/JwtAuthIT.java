package io.queenvertx.auth;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.security.KeyPairGenerator;
import java.util.Base64;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** JWT access levels over real HTTP (shared/seeds/status-codes-and-errors.txt "Authentication and authorization"). */
class JwtAuthIT {
  static final String SECRET = "test-secret-of-enough-length-0123456789";
  @NodeFixture(env = {"JWT_ENABLED=true", "JWT_SECRET=" + SECRET, "JWT_ISSUER=queen-tests", "JWT_AUDIENCE=queen"})
  static TestNode node;

  static long now() {
    return System.currentTimeMillis() / 1000;
  }

  static JsonObject claims(String role) {
    return new JsonObject().put("sub", "svc-" + role).put("role", role).put("iss", "queen-tests").put("aud", "queen")
        .put("iat", now()).put("exp", now() + 600);
  }

  static Map<String, String> bearer(String token) {
    return Map.of("Authorization", "Bearer " + token);
  }

  static String errorOf(TestNode.Reply r) {
    return r.json().getString("error");
  }

  static JsonObject pushBody(String queue) {
    return new JsonObject().put("items", new JsonArray().add(new JsonObject().put("queue", queue)
        .put("payload", new JsonObject().put("x", 1))));
  }

  @Test
  void noTokenIs401AuthenticationRequiredEvenOnAnUnknownRoute() {
    var r = node.get("/api/v1/resources/queues");
    assertThat(r.status()).isEqualTo(401);
    assertThat(r.json().getMap()).isEqualTo(Map.of("error", "Authentication required", "code", "unauthorized"));
    assertThat(node.get("/api/v1/nope").status()).isEqualTo(401);
  }

  @Test
  void publicRoutesNeverAnswer401Or403() {
    assertThat(node.get("/health").status()).isEqualTo(200);
    assertThat(node.get("/health", Map.of("Authorization", "Bearer garbage")).status()).isEqualTo(200);
  }

  @Test
  void eachRejectedTokenCarriesItsFixedMessage() {
    String q = "/api/v1/resources/queues";
    assertThat(errorOf(node.get(q, bearer("not-a-jwt")))).isEqualTo("Bad token header");
    assertThat(errorOf(node.get(q, bearer("a.b.c")))).isEqualTo("Bad token header");
    assertThat(errorOf(node.get(q, bearer(Tokens.hs("HS256", "wrong-secret", claims("admin"))))))
        .isEqualTo("Invalid token signature");
    assertThat(errorOf(node.get(q, bearer(Tokens.hs("HS256", SECRET, claims("admin").put("exp", now() - 3600))))))
        .isEqualTo("Token has expired");
    assertThat(errorOf(node.get(q, bearer(Tokens.hs("HS256", SECRET, claims("admin").put("nbf", now() + 3600))))))
        .isEqualTo("Token not yet valid");
    assertThat(errorOf(node.get(q, bearer(Tokens.hs("HS256", SECRET, claims("admin").put("iat", now() + 3600))))))
        .isEqualTo("Token issued in the future");
    assertThat(errorOf(node.get(q, bearer(Tokens.hs("HS256", SECRET, claims("admin").put("iss", "other"))))))
        .isEqualTo("Invalid token issuer");
    assertThat(errorOf(node.get(q, bearer(Tokens.hs("HS256", SECRET, claims("admin").put("aud", "other"))))))
        .isEqualTo("Invalid token audience");
    var none = new JsonObject().put("alg", "none").put("typ", "JWT");
    String unsigned = Tokens.b64(none.encode().getBytes()) + "." + Tokens.b64(claims("admin").encode().getBytes())
        + ".";
    assertThat(errorOf(node.get(q, bearer(unsigned)))).isEqualTo("Unsupported token algorithm");
  }

  @Test
  void clockSkewToleratesAFreshlyExpiredToken() {
    var r = node.get("/api/v1/resources/queues",
        bearer(Tokens.hs("HS256", SECRET, claims("read-only").put("exp", now() - 10))));
    assertThat(r.status()).isEqualTo(200);
  }

  @Test
  void audienceMayBeAnArray() {
    var r = node.get("/api/v1/resources/queues", bearer(Tokens.hs("HS256", SECRET,
        claims("read-only").put("aud", new JsonArray().add("x").add("queen")))));
    assertThat(r.status()).isEqualTo(200);
  }

  @Test
  void aWriteOnlyRoleMayPushButIsRefusedReadsPopsAndAcks() {
    String q = "auth-wo-" + UUID.randomUUID();
    var wo = bearer(Tokens.hs("HS256", SECRET, claims("write-only")));
    assertThat(node.post("/api/v1/push", pushBody(q), wo).status()).isEqualTo(201);
    for (String path : new String[] {"/api/v1/pop/queue/" + q, "/api/v1/resources/queues", "/api/v1/messages",
        "/api/v1/dlq"}) {
      var r = node.get(path, wo);
      assertThat(r.status()).as(path).isEqualTo(403);
      assertThat(r.json().getMap()).isEqualTo(Map.of("error", "Insufficient permissions", "code", "forbidden"));
    }
    assertThat(node.post("/api/v1/ack", new JsonObject().put("transactionId", "t")
        .put("partitionId", UUID.randomUUID().toString()), wo).status()).isEqualTo(403);
  }

  @Test
  void aReadOnlyRoleMayReadButNotPopOrPush() {
    String q = "auth-ro-" + UUID.randomUUID();
    var ro = bearer(Tokens.hs("HS256", SECRET, claims("read-only")));
    assertThat(node.get("/api/v1/resources/queues", ro).status()).isEqualTo(200);
    assertThat(node.get("/api/v1/pop/queue/" + q, ro).status()).isEqualTo(403);
    assertThat(node.post("/api/v1/push", pushBody(q), ro).status()).isEqualTo(403);
  }

  @Test
  void adminRoutesNeedTheAdminRoleAndRolesMayComeAsAnArray() {
    String q = "auth-adm-" + UUID.randomUUID();
    var rw = bearer(Tokens.hs("HS256", SECRET, claims("read-write")));
    assertThat(node.delete("/api/v1/resources/queues/" + q, rw).status()).isEqualTo(403);
    var admin = bearer(Tokens.hs("HS256", SECRET, claims("nobody").put("roles", new JsonArray().add("admin"))));
    assertThat(node.delete("/api/v1/resources/queues/" + q, admin).status()).isEqualTo(200);
  }

  @Test
  void theTokenSubjectIsStampedAsProducerSubAndABodyValueIsIgnored() {
    String q = "auth-sub-" + UUID.randomUUID();
    var rw = bearer(Tokens.hs("HS256", SECRET, claims("read-write").put("sub", "svc-billing")));
    var body = new JsonObject().put("items", new JsonArray().add(new JsonObject().put("queue", q)
        .put("payload", new JsonObject()).put("producerSub", "forged")));
    assertThat(node.post("/api/v1/push", body, rw).status()).isEqualTo(201);
    var pop = node.get("/api/v1/pop/queue/" + q, rw);
    assertThat(pop.status()).isEqualTo(200);
    assertThat(pop.json().getJsonArray("messages").getJsonObject(0).getString("producerSub")).isEqualTo("svc-billing");
  }

  @Test
  void aBearerPrefixIsOptionalAndCaseInsensitive() {
    String t = Tokens.hs("HS256", SECRET, claims("read-only"));
    assertThat(node.get("/api/v1/resources/queues", Map.of("Authorization", t)).status()).isEqualTo(200);
    assertThat(node.get("/api/v1/resources/queues", Map.of("Authorization", "bearer " + t)).status()).isEqualTo(200);
  }

  @Test
  void rs256AndEdDsaTokensVerifyAgainstAConfiguredPublicKey() throws Exception {
    var rsa = KeyPairGenerator.getInstance("RSA");
    rsa.initialize(2048);
    var rsaPair = rsa.generateKeyPair();
    String pem = "-----BEGIN PUBLIC KEY-----\n"
        + Base64.getMimeEncoder().encodeToString(rsaPair.getPublic().getEncoded()) + "\n-----END PUBLIC KEY-----";
    try (var rsNode = TestNode.start(Map.of("JWT_ENABLED", "true", "JWT_ALGORITHM", "RS256", "JWT_PUBLIC_KEY", pem))) {
      var hdr = new JsonObject().put("alg", "RS384").put("typ", "JWT");
      String good = Tokens.signed(hdr, rsaPair.getPrivate(), "SHA384withRSA", claims("read-only"));
      assertThat(rsNode.get("/api/v1/resources/queues", bearer(good)).status()).isEqualTo(200);
      var other = rsa.generateKeyPair();
      String bad = Tokens.signed(hdr, other.getPrivate(), "SHA384withRSA", claims("read-only"));
      assertThat(errorOf(rsNode.get("/api/v1/resources/queues", bearer(bad)))).isEqualTo("Invalid token signature");
      assertThat(errorOf(rsNode.get("/api/v1/resources/queues", bearer(Tokens.hs("HS256", "x", claims("admin"))))))
          .isEqualTo("Unsupported token algorithm");
    }
    var ed = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
    String edPem = "-----BEGIN PUBLIC KEY-----\n" + Base64.getMimeEncoder().encodeToString(ed.getPublic().getEncoded())
        + "\n-----END PUBLIC KEY-----";
    try (var edNode = TestNode.start(Map.of("JWT_ENABLED", "true", "JWT_ALGORITHM", "EdDSA", "JWT_PUBLIC_KEY", edPem))) {
      String good = Tokens.signed(new JsonObject().put("alg", "EdDSA"), ed.getPrivate(), "Ed25519", claims("admin"));
      assertThat(edNode.get("/api/v1/resources/queues", bearer(good)).status()).isEqualTo(200);
    }
  }

  @Test
  void anHsTokenWithNoConfiguredSecretIsA500ConfigurationFault() throws Exception {
    var rsa = KeyPairGenerator.getInstance("RSA");
    rsa.initialize(2048);
    String pem = "-----BEGIN PUBLIC KEY-----\n"
        + Base64.getMimeEncoder().encodeToString(rsa.generateKeyPair().getPublic().getEncoded())
        + "\n-----END PUBLIC KEY-----";
    try (var auto = TestNode.start(Map.of("JWT_ENABLED", "true", "JWT_ALGORITHM", "auto", "JWT_PUBLIC_KEY", pem))) {
      var r = auto.get("/api/v1/resources/queues", bearer(Tokens.hs("HS256", "whatever", claims("admin"))));
      assertThat(r.status()).isEqualTo(500);
      assertThat(errorOf(r)).isEqualTo("HS secret not configured");
    }
  }

  @Test
  void jwksKeysAreSelectedByKidAndAnUnknownKidIs401() throws Exception {
    var rsa = KeyPairGenerator.getInstance("RSA");
    rsa.initialize(2048);
    var pair = rsa.generateKeyPair();
    var pub = (java.security.interfaces.RSAPublicKey) pair.getPublic();
    var jwk = new JsonObject().put("kty", "RSA").put("kid", "k1")
        .put("n", Tokens.b64(unsigned(pub.getModulus().toByteArray())))
        .put("e", Tokens.b64(unsigned(pub.getPublicExponent().toByteArray())));
    var keys = new JsonArray().add(jwk);
    var vertx = io.vertx.core.Vertx.vertx();
    try {
      var server = vertx.createHttpServer()
          .requestHandler(req -> req.response().putHeader("content-type", "application/json")
              .end(new JsonObject().put("keys", keys).encode()))
          .listen(0, "127.0.0.1").toCompletionStage().toCompletableFuture().get();
      String url = "http://127.0.0.1:" + server.actualPort() + "/jwks.json";
      try (var n = TestNode.start(Map.of("JWT_ENABLED", "true", "JWT_ALGORITHM", "RS256", "JWT_JWKS_URL", url))) {
        String good = Tokens.signed(new JsonObject().put("alg", "RS256").put("kid", "k1"), pair.getPrivate(),
            "SHA256withRSA", claims("read-only"));
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
            .until(() -> n.get("/api/v1/resources/queues", bearer(good)).status() == 200);
        // the issuer rotates k2 in; the node, which fetched the set at boot, does not know it yet
        keys.add(jwk.copy().put("kid", "k2"));
        String unknown = Tokens.signed(new JsonObject().put("alg", "RS256").put("kid", "k2"), pair.getPrivate(),
            "SHA256withRSA", claims("read-only"));
        var r = n.get("/api/v1/resources/queues", bearer(unknown));
        assertThat(r.status()).isEqualTo(401);
        assertThat(errorOf(r)).isEqualTo("Unknown key ID");
        // the unknown kid made the node fetch the set again (its periodic refresh is an hour away)
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(15)).pollInterval(
                java.time.Duration.ofMillis(200))
            .until(() -> n.get("/api/v1/resources/queues", bearer(unknown)).status() == 200);
      }
    } finally {
      vertx.close();
    }
  }

  private static byte[] unsigned(byte[] b) {
    return b.length > 1 && b[0] == 0 ? java.util.Arrays.copyOfRange(b, 1, b.length) : b;
  }
}
