package io.queenvertx.http;

import io.vertx.ext.web.RoutingContext;

/** The authenticated caller of a request; the JWT {@code sub} is the only source of {@code producerSub}. */
final class Identity {
  static final String SUBJECT = io.queenvertx.auth.AuthHandler.SUBJECT;

  private Identity() {}

  static String subject(RoutingContext ctx) {
    String s = ctx.get(SUBJECT);
    return s == null || s.isEmpty() ? null : s;
  }
}
