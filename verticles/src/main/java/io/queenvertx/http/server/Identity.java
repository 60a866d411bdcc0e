package io.queenvertx.http.server;

import io.vertx.ext.web.RoutingContext;

/** The authenticated caller of a request; the JWT {@code sub} is the only source of {@code producerSub}. */
public final class Identity {
  public static final String SUBJECT = io.queenvertx.auth.AuthHandler.SUBJECT;

  private Identity() {}

  public static String subject(RoutingContext ctx) {
    String s = ctx.get(SUBJECT);
    return s == null || s.isEmpty() ? null : s;
  }
}
