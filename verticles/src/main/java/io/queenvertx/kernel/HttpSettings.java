package io.queenvertx.kernel;

/**
 * The HTTP server.
 *
 * @param port {@code PORT} (6632, 1..65535)
 * @param bindAddress {@code QUEEN_BIND_ADDR}, else {@code HOST} ("0.0.0.0"): a host or IP address; one with a port is
 *     fatal
 * @param maxBodyBytes {@code QUEEN_MAX_BODY_BYTES} (64 MiB, 1..2^31-1): a larger request body is answered 413
 * @param instances {@code QUEEN_HTTP_INSTANCES} (the number of cores; at least 1): instances of the HTTP verticle
 * @param accessLog {@code QUEEN_ACCESS_LOG} (off): log every request, not only the failed ones
 * @param eventLoops {@code QUEEN_EVENT_LOOPS} (twice the number of cores, Vert.x's default; at least 1): event-loop
 *     threads of the node; the consumer verticle runs one instance on each
 * @param maxPushItems {@code QUEEN_MAX_PUSH_ITEMS} (10000, at least 1): a push whose {@code items} hold more is
 *     answered 413 and nothing of it is stored
 */
public record HttpSettings(int port, String bindAddress, long maxBodyBytes, int instances, boolean accessLog,
                           int eventLoops, int maxPushItems) {
  public static final int DEFAULT_PORT = 6632;
  public static final String DEFAULT_BIND_ADDRESS = "0.0.0.0";
  public static final long DEFAULT_MAX_BODY_BYTES = 64L * 1024 * 1024;
  public static final int DEFAULT_MAX_PUSH_ITEMS = 10_000;

  static HttpSettings from(ConfigReader e) {
    String bind = e.str("QUEEN_BIND_ADDR", e.str("HOST", DEFAULT_BIND_ADDRESS));
    if (bind.contains(":") && !bind.startsWith("[") && bind.chars().filter(c -> c == ':').count() == 1) {
      throw ConfigException.of("QUEEN_BIND_ADDR", bind, "a host or IP address without a port");
    }
    return new HttpSettings(
        e.integer("PORT", DEFAULT_PORT, 1, 65535),
        bind,
        e.lng("QUEEN_MAX_BODY_BYTES", DEFAULT_MAX_BODY_BYTES, 1, Integer.MAX_VALUE),
        e.integer("QUEEN_HTTP_INSTANCES", Runtime.getRuntime().availableProcessors(), 1, Integer.MAX_VALUE),
        e.bool("QUEEN_ACCESS_LOG", false),
        e.integer("QUEEN_EVENT_LOOPS", 2 * Runtime.getRuntime().availableProcessors(), 1, Integer.MAX_VALUE),
        e.integer("QUEEN_MAX_PUSH_ITEMS", DEFAULT_MAX_PUSH_ITEMS, 1, Integer.MAX_VALUE));
  }

  /** The same settings on another port. */
  public HttpSettings withPort(int newPort) {
    return new HttpSettings(newPort, bindAddress, maxBodyBytes, instances, accessLog, eventLoops, maxPushItems);
  }
}
