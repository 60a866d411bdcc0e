package io.queenvertx.auth;

import io.queenvertx.boot.Config;
import io.queenvertx.http.ApiError;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import java.util.Arrays;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The outermost layer of the router (API.md §1.1: auth, then tenant, then routes). With {@code JWT_ENABLED=false} it
 * passes everything through. Public routes and {@code JWT_SKIP_PATHS} skip the token entirely; otherwise the token
 * must verify and its role set satisfy the route's level ({@link AccessLevel}). The token's {@code sub} becomes the
 * request's producer subject.
 */
public final class AuthHandler implements Handler<RoutingContext> {
  private static final Logger log = LoggerFactory.getLogger(AuthHandler.class);
  public static final String SUBJECT = "queen.subject";

  private final boolean enabled;
  private final JwtVerifier verifier;
  private final List<String> skip;

  public AuthHandler(Config.Jwt cfg, JwtVerifier verifier) {
    this.enabled = cfg.enabled();
    this.verifier = verifier;
    this.skip = Arrays.stream(cfg.skipPaths().split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList();
  }

  /** The verifier of a node, with its JWKS fetched now and refreshed periodically when a URL is configured. */
  public static JwtVerifier verifier(Vertx vertx, Config.Jwt cfg) {
    var v = new JwtVerifier(cfg);
    if (cfg.enabled() && !cfg.jwksUrl().isEmpty()) {
      var client = WebClient.create(vertx, new WebClientOptions().setConnectTimeout((int) cfg.jwksTimeoutMs()));
      Runnable fetch = () -> client.getAbs(cfg.jwksUrl()).timeout(cfg.jwksTimeoutMs()).send()
          .onSuccess(r -> {
            try {
              v.setJwks(new JsonObject(r.bodyAsString()));
            } catch (RuntimeException e) {
              log.warn("JWKS at {} is not a key set: {}", cfg.jwksUrl(), e.getMessage());
            }
          })
          .onFailure(e -> log.warn("JWKS fetch from {} failed: {}", cfg.jwksUrl(), e.getMessage()));
      fetch.run();
      v.onUnknownKid(() -> vertx.runOnContext(x -> fetch.run()));
      vertx.setPeriodic(Math.max(5, cfg.jwksRefreshIntervalS()) * 1000L, t -> fetch.run());
    }
    return v;
  }

  /** The outcome of an authorization: {@code status} 0 when allowed (then {@code subject} may be set). */
  public record Decision(int status, String error, String subject) {
    public boolean allowed() {
      return status == 0;
    }
  }

  /** The same checks for a caller that is not an HTTP request (the event-bus API). */
  public Decision authorize(AccessLevel level, String authorization) {
    if (!enabled || level == AccessLevel.PUBLIC) return new Decision(0, null, null);
    if (authorization == null || authorization.isBlank()) return new Decision(401, "Authentication required", null);
    String token = authorization.strip();
    if (token.regionMatches(true, 0, "Bearer ", 0, 7)) token = token.substring(7).strip();
    try {
      var claims = verifier.verify(token, System.currentTimeMillis() / 1000);
      if (!level.satisfiedBy(claims.roles())) return new Decision(403, "Insufficient permissions", null);
      return new Decision(0, null, claims.subject());
    } catch (TokenRejected r) {
      return new Decision(r.status(), r.getMessage(), null);
    }
  }

  @Override
  public void handle(RoutingContext ctx) {
    if (!enabled) {
      ctx.next();
      return;
    }
    String path = ctx.request().path();
    AccessLevel level = AccessLevel.of(ctx.request().method(), path);
    if (level == AccessLevel.PUBLIC || skipped(path)) {
      ctx.next();
      return;
    }
    Decision d = authorize(level, ctx.request().getHeader("Authorization"));
    if (!d.allowed()) {
      ctx.fail(ApiError.of(d.status(), d.error()));
      return;
    }
    if (d.subject() != null && !d.subject().isEmpty()) ctx.put(SUBJECT, d.subject());
    ctx.next();
  }

  /** An entry matches exactly, or as a prefix when it ends in "/" and is longer than "/". */
  private boolean skipped(String path) {
    for (String s : skip) {
      if (path.equals(s)) return true;
      if (s.length() > 1 && s.endsWith("/") && path.startsWith(s)) return true;
    }
    return false;
  }
}
