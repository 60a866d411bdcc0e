package io.queenvertx.auth;

import io.vertx.core.http.HttpMethod;
import java.util.EnumSet;
import java.util.Set;

/**
 * A route's required level, and which roles satisfy it (API.md §2.3): sets, not a ladder. A write-only role may push
 * and nothing else; a read-only role may read and not consume.
 */
public enum AccessLevel {
  PUBLIC(EnumSet.noneOf(Role.class)),
  READ_ONLY(EnumSet.of(Role.READ_ONLY, Role.READ_WRITE, Role.ADMIN)),
  WRITE_ONLY(EnumSet.of(Role.WRITE_ONLY, Role.READ_WRITE, Role.ADMIN)),
  READ_WRITE(EnumSet.of(Role.READ_WRITE, Role.ADMIN)),
  ADMIN(EnumSet.of(Role.ADMIN));

  /** The four roles a token can carry. */
  public enum Role { ADMIN, READ_WRITE, READ_ONLY, WRITE_ONLY }

  private final Set<Role> allowed;

  AccessLevel(Set<Role> allowed) {
    this.allowed = allowed;
  }

  public boolean satisfiedBy(Set<Role> roles) {
    if (this == PUBLIC) return true;
    for (Role r : roles) if (allowed.contains(r)) return true;
    return false;
  }

  /** The route table of API.md §2.4, evaluated in its order; anything not listed (unknown paths too) is ReadWrite. */
  public static AccessLevel of(HttpMethod method, String path) {
    if (path.equals("/health") || path.equals("/health/live") || path.equals("/health/ready")
        || path.equals("/metrics") || path.equals("/metrics/prometheus") || path.equals("/")
        || path.startsWith("/assets/") || path.startsWith("/favicon") || path.equals("/auth/me")
        || path.equals("/auth/login") || path.equals("/auth/logout")
        // the API document and its Swagger UI describe the surface, they hold no data
        || path.equals("/openapi.json") || path.equals("/docs") || path.startsWith("/docs/")
        // the webhook API under /v1/ authenticates with its own Bearer API keys (QUEEN_WEBHOOK_API_KEYS)
        || path.startsWith("/v1/")) {
      return PUBLIC;
    }
    boolean get = method == HttpMethod.GET || method == HttpMethod.HEAD;
    boolean delete = method == HttpMethod.DELETE;
    if (get && path.equals("/api/v1/system/nodes")) return READ_ONLY; // node health, beyond Queen
    if (path.startsWith("/api/v1/system/") || path.equals("/api/v1/system") || path.startsWith("/internal/")
        || (delete && path.startsWith("/api/v1/consumer-groups/"))
        || (delete && path.startsWith("/api/v1/resources/queues/"))
        || (delete && path.equals("/api/v1/dlq"))
        || path.equals("/api/v1/stats/refresh")
        || path.startsWith("/api/v1/dlq/redrive")) {
      return ADMIN;
    }
    if (get && (path.equals("/status") || path.startsWith("/api/v1/status") || path.startsWith("/api/v1/analytics")
        || path.startsWith("/api/v1/resources/") || path.startsWith("/api/v1/messages")
        || path.startsWith("/api/v1/consumer-groups") || path.startsWith("/api/v1/dlq")
        || path.startsWith("/api/v1/traces") || path.startsWith("/api/v1/kv/") || path.startsWith("/api/v1/timers/"))) {
      return READ_ONLY;
    }
    if (method == HttpMethod.POST && (path.equals("/api/v1/fetch") || path.equals("/api/v1/partitions/changed")
        || path.equals("/api/v1/resources/kv/list"))) {
      return READ_ONLY;
    }
    // batch routes: the least level of their operations; each call is then held to its operations' (ofOperation)
    if (method == HttpMethod.POST && (path.equals("/api/v1/kv") || path.equals("/api/v1/locks"))) return READ_ONLY;
    if (path.equals("/streams/v1/state/get")) return READ_ONLY;
    if (path.startsWith("/streams/")) return READ_WRITE;
    // scheduling a timer is a deferred push (queen2-contract.md §3.1); cancelling one is read-write (ofOperation)
    if (path.equals("/api/v1/push") || method == HttpMethod.POST && path.equals("/api/v1/timers")) return WRITE_ONLY;
    return READ_WRITE;
  }

  /** The key-value operations that change nothing. */
  private static final Set<String> KV_READS = Set.of("get", "getMany", "getPrefix", "check");

  /**
   * The level one operation of a batch route needs (docs/design/queen2-contract.md §2.1, §3.1, §4.1). The route's own
   * level ({@link #of}) is the least of its operations', and its handler holds each call to all of its operations'
   * ({@link #both}). An operation that changes nothing is ReadOnly; one that writes state is ReadWrite; scheduling a
   * timer is a deferred push, WriteOnly. {@code /api/v1/kv}: get, getMany, getPrefix, check ReadOnly, the rest
   * ReadWrite; {@code /api/v1/timers}: schedule, reschedule WriteOnly, cancel (it removes a message before its
   * delivery, as DELETE does) ReadWrite; {@code /api/v1/locks}: get ReadOnly, the rest ReadWrite. An unknown
   * operation is ReadWrite.
   */
  public static AccessLevel ofOperation(String route, String op) {
    return switch (route) {
      case "/api/v1/kv" -> KV_READS.contains(op) ? READ_ONLY : READ_WRITE;
      case "/api/v1/timers" -> "schedule".equals(op) || "reschedule".equals(op) ? WRITE_ONLY : READ_WRITE;
      case "/api/v1/locks" -> "get".equals(op) ? READ_ONLY : READ_WRITE;
      default -> READ_WRITE;
    };
  }

  /** The level satisfied exactly by the roles that satisfy both {@code a} and {@code b} (their role sets' meet). */
  public static AccessLevel both(AccessLevel a, AccessLevel b) {
    if (a == b || b == PUBLIC) return a;
    if (a == PUBLIC) return b;
    if (a == ADMIN || b == ADMIN) return ADMIN;
    return READ_WRITE; // ReadOnly and WriteOnly meet in ReadWrite, and ReadWrite with either is ReadWrite
  }
}
