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
      vertx.setPeriodic(Math.max(5, cfg.jwksRefreshIntervalS()) * 1000L, t -> fetch.run());
    }
    return v;
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
    String header = ctx.request().getHeader("Authorization");
    if (header == null || header.isBlank()) {
      ctx.fail(ApiError.of(401, "Authentication required"));
      return;
    }
    String token = header.strip();
    if (token.regionMatches(true, 0, "Bearer ", 0, 7)) token = token.substring(7).strip();
    try {
      var claims = verifier.verify(token, System.currentTimeMillis() / 1000);
      if (!level.satisfiedBy(claims.roles())) {
        ctx.fail(ApiError.of(403, "Insufficient permissions"));
        return;
      }
      if (claims.subject() != null && !claims.subject().isEmpty()) ctx.put(SUBJECT, claims.subject());
      ctx.next();
    } catch (TokenRejected r) {
      ctx.fail(ApiError.of(r.status(), r.getMessage()));
    }
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
