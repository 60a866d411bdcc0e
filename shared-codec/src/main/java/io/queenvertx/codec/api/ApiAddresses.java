package io.queenvertx.codec.api;

/**
 * The event-bus API of a queen-vertx cluster, for Vert.x services that join it: send a request to one of these
 * addresses (any broker node answers) and get an {@link ApiReply}. Credentials travel as message headers, with the
 * same rules as the HTTP headers of the same names.
 */
public final class ApiAddresses {
  private ApiAddresses() {}

  /** {@link PushRequest} → reply body: the push result array of {@code POST /api/v1/push}. */
  public static final String PUSH = "queen.api.push";
  /** {@link PopRequest} → reply body: the pop document of {@code GET /api/v1/pop/...}, status 204 with no body. */
  public static final String POP = "queen.api.pop";
  /** {@link AckRequest} → reply body: the per-item array of {@code POST /api/v1/ack/batch}. */
  public static final String ACK = "queen.api.ack";

  /** Header with the JWT ({@code Bearer } optional), required when the brokers run with {@code JWT_ENABLED}. */
  public static final String AUTHORIZATION = "authorization";
  /** Header with the tenant uuid, read when the brokers run with {@code QUEEN_TENANCY_HEADER}. */
  public static final String TENANT = "x-queen-tenant";
}
