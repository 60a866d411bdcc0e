package io.queenvertx.http.server;

import io.queenvertx.kernel.ApiError;
import io.queenvertx.kernel.SecuritySettings;
import io.queenvertx.kernel.SecuritySettings.HostPort;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.RoutingContext;
import java.util.List;

/**
 * Who may drive the broker from a browser (issue 34): a router-wide layer after the path guard and before
 * authentication, so it holds with JWT on or off.
 *
 * <ul>
 *   <li><b>Host</b>: with {@code QUEEN_ALLOWED_HOSTS} set, a request whose {@code Host} header is absent or names
 *       another host is answered 421 Misdirected Request (the broker is not configured to answer for that name): a
 *       DNS-rebinding page reaches the broker under its own name, which is not on the list. Two {@code Host} headers
 *       are a 400 whatever the setting.</li>
 *   <li><b>Origin</b>: on every request that could change state or consume, that is every method but GET and HEAD,
 *       and every method under {@code /api/} and {@code /v1/} (pops lease messages on a GET), a browser-sent
 *       {@code Origin} must be the broker's own origin (its host and port are those of the {@code Host} header; a
 *       missing port is the origin scheme's default, and the scheme is not compared, since a TLS-terminating proxy
 *       in front changes it) or one of {@code QUEEN_ALLOWED_ORIGINS}; else 403. A request without {@code Origin}
 *       whose {@code Sec-Fetch-Site} says another site sent it ({@code cross-site} or {@code same-site}: an
 *       {@code <img>}, a link, a form GET) is 403 too, since its origin cannot be checked. Requests without either
 *       header (curl, SDKs, other servers) pass. {@code QUEEN_ALLOWED_ORIGINS=*} turns this check off.</li>
 * </ul>
 *
 * GET and HEAD outside {@code /api/} and {@code /v1/} (the dashboard, its assets, {@code /docs},
 * {@code /openapi.json}, health and metrics) read nothing a cross-site page could use and stay reachable from links.
 * Without CORS headers (the broker sends none) a browser lets no other origin read an answer; this layer stops the
 * requests whose effect is the harm.
 */
public final class OriginGuard {
  private final List<String> origins;
  private final boolean anyOrigin;
  private final List<String> hosts;

  public OriginGuard(SecuritySettings security) {
    this.origins = security.allowedOrigins();
    this.anyOrigin = origins.contains(SecuritySettings.ANY_ORIGIN);
    this.hosts = security.allowedHosts();
  }

  public void handle(RoutingContext ctx) {
    var headers = ctx.request().headers();
    List<String> hostHeaders = headers.getAll("Host");
    if (hostHeaders.size() > 1) {
      ctx.fail(ApiError.of(400, "request has more than one Host header"));
      return;
    }
    String host = hostHeaders.isEmpty() ? null : hostHeaders.get(0).trim();
    if (!hosts.isEmpty() && !hostAllowed(host)) {
      ctx.fail(ApiError.of(421, "Host header " + shown(host) + " is not one of QUEEN_ALLOWED_HOSTS"));
      return;
    }
    if (anyOrigin || !guarded(ctx)) {
      ctx.next();
      return;
    }
    String origin = headers.get("Origin");
    if (origin != null) {
      String canonical = SecuritySettings.canonicalOrigin(origin.trim());
      if (canonical == null || !sameOrigin(canonical, host) && !origins.contains(canonical)) {
        ctx.fail(ApiError.of(403, "cross-origin request refused: Origin header " + shown(origin)
            + " is neither this server's origin nor one of QUEEN_ALLOWED_ORIGINS"));
        return;
      }
    } else {
      String site = headers.get("Sec-Fetch-Site");
      if (site != null && (site.trim().equalsIgnoreCase("cross-site") || site.trim().equalsIgnoreCase("same-site"))) {
        ctx.fail(ApiError.of(403, "cross-site request refused: Sec-Fetch-Site header " + shown(site)
            + " without an Origin header this server allows (QUEEN_ALLOWED_ORIGINS)"));
        return;
      }
    }
    ctx.next();
  }

  /** Every method but GET and HEAD, and everything under /api/ and /v1/ (the routed, normalised path). */
  private static boolean guarded(RoutingContext ctx) {
    HttpMethod m = ctx.request().method();
    if (m != HttpMethod.GET && m != HttpMethod.HEAD) return true;
    String p = ErrorContract.routedPath(ctx);
    return p.startsWith("/api/") || p.equals("/api") || p.startsWith("/v1/") || p.equals("/v1");
  }

  /** The {@code Host} is on the list: an entry without a port accepts any port. */
  private boolean hostAllowed(String host) {
    HostPort hp = SecuritySettings.hostPort(host);
    if (hp == null) return false;
    return hosts.contains(hp.toString()) || hosts.contains(hp.host());
  }

  /**
   * The canonical origin's host and port are the {@code Host} header's (a port left out is the origin scheme's
   * default).
   */
  private static boolean sameOrigin(String canonical, String host) {
    HostPort h = SecuritySettings.hostPort(host);
    if (h == null) return false;
    int sep = canonical.indexOf("://");
    String scheme = canonical.substring(0, sep);
    HostPort o = SecuritySettings.hostPort(canonical.substring(sep + 3));
    int def = SecuritySettings.defaultPort(scheme);
    int originPort = o.port() < 0 ? def : o.port();
    int hostPort = h.port() < 0 ? def : h.port();
    return o.host().equals(h.host()) && originPort == hostPort;
  }

  /** A header value for an error message: quoted, at most 100 characters, "none" when absent. */
  private static String shown(String v) {
    if (v == null) return "(none)";
    return "'" + (v.length() > 100 ? v.substring(0, 100) + "..." : v) + "'";
  }
}
