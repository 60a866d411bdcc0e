package io.queenvertx.auth;

import io.queenvertx.kernel.JwtSettings;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import io.vertx.ext.web.handler.SecurityPolicyHandler;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The outermost layer of the router (API.md §1.1: auth, then tenant, then routes). With {@code JWT_ENABLED=false} it
 * passes everything through. Public routes and {@code JWT_SKIP_PATHS} skip the token entirely; otherwise the token
 * must verify and its role set satisfy the route's level ({@link AccessLevel}). The token's {@code sub} becomes the
 * request's producer subject.
 *
 * <p>Two checks see one path. The router-wide {@link #handle} judges the normalised path the router matches on (the
 * path guard in front of it has already refused every path that is not canonical), so an unknown path still answers
 * 401 before 404 as in Queen. Each declared route then runs {@link #forRoute}, whose level comes from the route's own
 * template and method: the level is that of the route that actually runs, whatever spelling reached it.
 */
public final class AuthHandler implements Handler<RoutingContext> {
  private static final Logger log = LoggerFactory.getLogger(AuthHandler.class);
  public static final String SUBJECT = "queen.subject";
  /** The verified token's role set, put by the router-wide check for the route-level one. */
  static final String ROLES = "queen.roles";

  private final boolean enabled;
  private final JwtVerifier verifier;
  private final List<String> skip;

  public AuthHandler(JwtSettings cfg, JwtVerifier verifier) {
    this.enabled = cfg.enabled();
    this.verifier = verifier;
    this.skip = Arrays.stream(cfg.skipPaths().split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList();
  }

  /** The verifier of a node, with its JWKS fetched now and refreshed periodically when a URL is configured. */
  public static JwtVerifier verifier(Vertx vertx, JwtSettings cfg) {
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

  /**
   * The outcome of an authorization: {@code status} 0 when allowed (then {@code subject} may be set, and
   * {@code roles} is the verified token's role set, or null when no token was needed).
   */
  public record Decision(int status, String error, String subject, Set<AccessLevel.Role> roles) {
    public boolean allowed() {
      return status == 0;
    }
  }

  /** The same checks for a caller that is not an HTTP request (the event-bus API). */
  public Decision authorize(AccessLevel level, String authorization) {
    if (!enabled || level == AccessLevel.PUBLIC) return new Decision(0, null, null, null);
    if (authorization == null || authorization.isBlank()) {
      return new Decision(401, "Authentication required", null, null);
    }
    String token = authorization.strip();
    if (token.regionMatches(true, 0, "Bearer ", 0, 7)) token = token.substring(7).strip();
    try {
      var claims = verifier.verify(token, System.currentTimeMillis() / 1000);
      if (!level.satisfiedBy(claims.roles())) return new Decision(403, "Insufficient permissions", null, null);
      return new Decision(0, null, claims.subject(), claims.roles());
    } catch (TokenRejected r) {
      return new Decision(r.status(), r.getMessage(), null, null);
    }
  }

  @Override
  public void handle(RoutingContext ctx) {
    if (!enabled) {
      ctx.next();
      return;
    }
    String path = routedPath(ctx);
    if (path == null) {
      ctx.fail(new AuthRefused(400, "path is not in canonical form"));
      return;
    }
    check(ctx, AccessLevel.of(ctx.request().method(), path), path);
  }

  /**
   * The route-level check installed as the first handler of a declared route: its level is computed once from the
   * route's template path and method. A token the router-wide check already verified is not verified again, only
   * held against this level; when that check let the request pass without a token (a public or skipped path), this
   * one asks for the token itself unless the route is public or its own path is skipped. It is a security-policy
   * handler for Vert.x, so it runs before the body is buffered.
   */
  public SecurityPolicyHandler forRoute(HttpMethod method, String template) {
    AccessLevel level = AccessLevel.of(method, template);
    return ctx -> {
      if (!enabled || level == AccessLevel.PUBLIC) {
        ctx.next();
        return;
      }
      Set<AccessLevel.Role> roles = ctx.get(ROLES);
      if (roles != null) {
        if (level.satisfiedBy(roles)) ctx.next();
        else ctx.fail(new AuthRefused(403, "Insufficient permissions"));
        return;
      }
      String path = routedPath(ctx);
      if (path == null) {
        ctx.fail(new AuthRefused(400, "path is not in canonical form"));
        return;
      }
      check(ctx, level, path);
    };
  }

  private void check(RoutingContext ctx, AccessLevel level, String path) {
    if (level == AccessLevel.PUBLIC || skipped(path)) {
      ctx.next();
      return;
    }
    Decision d = authorize(level, ctx.request().getHeader("Authorization"));
    if (!d.allowed()) {
      ctx.fail(new AuthRefused(d.status(), d.error()));
      return;
    }
    if (d.roles() != null) ctx.put(ROLES, d.roles());
    if (d.subject() != null && !d.subject().isEmpty()) ctx.put(SUBJECT, d.subject());
    ctx.next();
  }

  /**
   * The check of a batch route's operations beyond its route's level ({@link AccessLevel#ofOperation}): throws a 403
   * {@link AuthRefused} when the request's verified token does not satisfy every operation of {@code ops} on
   * {@code route}. A request whose route needed no token (auth off, a public or skipped path) passes, as it passed
   * the route's check.
   */
  public static void require(RoutingContext ctx, String route, Iterable<String> ops) {
    Set<AccessLevel.Role> roles = ctx.get(ROLES);
    if (roles == null) return;
    AccessLevel level = AccessLevel.PUBLIC;
    for (String op : ops) level = AccessLevel.both(level, AccessLevel.ofOperation(route, op));
    if (!level.satisfiedBy(roles)) throw new AuthRefused(403, "Insufficient permissions");
  }

  /** The path the router matches on; null when it cannot be normalised (a malformed escape). */
  private static String routedPath(RoutingContext ctx) {
    try {
      return ctx.normalizedPath();
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  /**
   * An entry matches exactly, or as a prefix when it ends in "/" and is longer than "/". The path given is always the
   * normalised one the router matches, so {@code /public/../api/...} cannot ride a {@code /public/} entry.
   */
  private boolean skipped(String path) {
    for (String s : skip) {
      if (path.equals(s)) return true;
      if (s.length() > 1 && s.endsWith("/") && path.startsWith(s)) return true;
    }
    return false;
  }
}
