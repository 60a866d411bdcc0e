package io.queenvertx.http.routes;

import io.queenvertx.bus.PopCommand;
import io.queenvertx.consumer.Autopilot;
import io.queenvertx.node.NodeContext;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.UUID;

/**
 * The 2.x pop modes at the HTTP edge (queen2-contract.md §6): the sizing of an autopilot pop, and the bodies of the
 * answers that carry the conflation and autopilot echoes without messages (a conflating pop answers 200 instead of
 * 204, so the echo has somewhere to sit). The echoes of an answer with messages are written by the consumer's
 * {@code PopBody}.
 */
final class PopModes {
  private PopModes() {}

  /**
   * The autopilot sizing of a pop that asked for it and left {@code batch} or {@code partitions} unset (null when it
   * did not ask, set both, or the node's {@code QUEEN_POP_AUTOPILOT} is off). A conflating pop is sized by partitions.
   */
  static PopCommand.Autopilot sizing(NodeContext node, Autopilot controller, UUID tenant, String queue, String group,
                                     boolean asked, Integer batch, Integer partitions, int leaseSeconds) {
    if (!asked || !node.config().pop().autopilot() || (batch != null && partitions != null)) return null;
    return controller.decide(tenant, queue, group, leaseSeconds > 0 ? leaseSeconds : 60,
        batch == null ? 0 : batch, partitions == null ? 0 : partitions);
  }

  /**
   * The body of a pop that found nothing: null (a 204) unless it declared conflation, when it is 200 with the group's
   * stored policy echoed ({@code conflation}, or {@code conflationConflict} when the group is registered without it).
   */
  static Future<JsonObject> empty(NodeContext node, Autopilot controller, PopCommand c) {
    if (!c.conflation()) return Future.succeededFuture(null);
    Future<Boolean> stored = c.queue() == null ? Future.succeededFuture(true)
        : node.db().groups().conflation(c.tenant(), c.queue(), c.consumerGroup());
    return stored.map(policy -> {
      JsonObject body = new JsonObject().put("success", true).put("messages", new JsonArray());
      if (policy == null || policy) body.put("conflation", true);
      else body.put("conflationConflict", true);
      return echoAutopilot(body, controller, c);
    });
  }

  /** The body of a pop refused by pop maintenance: null (a 204), or 200 paused with the conflation echo. */
  static JsonObject paused(boolean conflation) {
    if (!conflation) return null;
    return new JsonObject().put("success", true).put("messages", new JsonArray()).put("paused", true)
        .put("conflation", true);
  }

  private static JsonObject echoAutopilot(JsonObject body, Autopilot controller, PopCommand c) {
    if (c.autopilot() == null) return body;
    return body.put("autopilot", new JsonObject().put("partitions", c.autopilot().partitions())
        .put("batch", c.autopilot().batch())
        .put("waitMs", controller.waitMs(c.tenant(), c.queue(), c.consumerGroup(), c.longPoll())));
  }
}
