package io.queenvertx.http.routes;

import io.queenvertx.auth.AuthHandler;
import io.queenvertx.auth.AuthRefused;
import io.queenvertx.db.LockProcedures;
import io.queenvertx.http.server.Bodies;
import io.queenvertx.http.server.ErrorContract;
import io.queenvertx.http.server.RouteTable;
import io.queenvertx.http.server.Tenancy;
import io.queenvertx.kernel.StorableText;
import io.queenvertx.metrics.StateMetrics;
import io.queenvertx.node.NodeContext;
import io.queenvertx.state.KvInput;
import io.queenvertx.state.StateRefused;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;

/**
 * Locks and semaphores (docs/design/queen2-contract.md §4): {@code POST /api/v1/locks}, answered
 * {@code {"results":[...]}} in request order, each result the object {@code locks_apply} built (§4.2). A permit is a
 * key-value entry of the namespace {@code queen-locks}; its version is the fencing token, which only grows per lock.
 */
final class LockRoutes {
  static final String FAMILY = "locks";
  private static final List<String> TENANT_FIELDS = List.of("tenant", "tenantId", "_tenant");

  private LockRoutes() {}

  static void mount(RouteTable routes, NodeContext node) {
    LockProcedures locks = node.db().locks();
    StateMetrics metrics = node.metrics().state();
    routes.post("/api/v1/locks", ctx -> {
      List<LockProcedures.Op> ops;
      try {
        ops = parse(Bodies.value(ctx.body().buffer()));
        // get needs a read token, acquire/renew/release a read-write one
        AuthHandler.require(ctx, "/api/v1/locks", ops.stream().map(LockProcedures.Op::op).toList());
      } catch (StateRefused e) {
        StateErrors.fail(ctx, FAMILY, e);
        return;
      } catch (AuthRefused e) {
        ctx.fail(e);
        return;
      }
      locks.apply(Tenancy.of(ctx), ops).onSuccess(results -> {
        for (JsonObject r : results) metrics.lockOp(r.getString("op"), outcome(r));
        ErrorContract.send(ctx, 200, new JsonObject().put("results", new JsonArray(new ArrayList<Object>(results))));
      }).onFailure(e -> {
        for (LockProcedures.Op o : ops) metrics.lockOp(o.op(), "error");
        StateErrors.fail(ctx, FAMILY, e);
      });
    });
  }

  /** acquired / held, renewed / released / lost, read (get). */
  static String outcome(JsonObject r) {
    return switch (String.valueOf(r.getString("op"))) {
      case "acquire" -> Boolean.TRUE.equals(r.getBoolean("acquired")) ? "acquired" : "held";
      case "renew" -> Boolean.TRUE.equals(r.getBoolean("renewed")) ? "renewed" : "lost";
      case "release" -> Boolean.TRUE.equals(r.getBoolean("released")) ? "released" : "lost";
      default -> "read";
    };
  }

  static List<LockProcedures.Op> parse(Object body) {
    JsonArray ops = body instanceof JsonArray a ? a
        : body instanceof JsonObject o && o.getValue("operations") instanceof JsonArray a ? a : null;
    if (ops == null) throw bad("locks_bad_request", "the body must be {\"operations\":[...]}");
    List<LockProcedures.Op> out = new ArrayList<>(ops.size());
    for (int i = 0; i < ops.size(); i++) {
      if (!(ops.getValue(i) instanceof JsonObject o)) throw bad("locks_bad_request", "lock operation " + i
          + " must be an object");
      for (String f : TENANT_FIELDS) {
        if (o.containsKey(f)) throw bad("locks_tenant_not_an_input", "lock operation " + i + ": `" + f
            + "` is not an input (the tenant is the request's)");
      }
      if (o.containsKey("forever")) {
        throw bad("locks_bad_ttl", "lock operation " + i + ": `forever` is not accepted, a lease needs ttlSeconds");
      }
      if (!(o.getValue("op") instanceof String op)) throw bad("locks_unknown_op", at(i, "op", "a string"));
      out.add(new LockProcedures.Op(op, text(o, "name", i, "locks_bad_name"), whole(o, "ttlSeconds", i, "locks_bad_ttl"),
          text(o, "owner", i, "locks_bad_owner"), small(o, "limit", i, "locks_bad_limit"),
          whole(o, "token", i, "locks_bad_token"), small(o, "slot", i, "locks_bad_slot")));
    }
    return out;
  }

  private static String text(JsonObject o, String field, int i, String reason) {
    Object v = o.getValue(field);
    if (v == null) return null;
    if (!(v instanceof String s)) throw bad(reason, at(i, field, "a string"));
    if (!StorableText.storable(s)) throw bad(reason, at(i, field, KvInput.UNSTORABLE));
    return s;
  }

  private static Long whole(JsonObject o, String field, int i, String reason) {
    Object v = o.getValue(field);
    if (v == null) return null;
    if (v instanceof Integer || v instanceof Long) return ((Number) v).longValue();
    throw bad(reason, at(i, field, "an integer"));
  }

  private static Integer small(JsonObject o, String field, int i, String reason) {
    Long v = whole(o, field, i, reason);
    if (v == null) return null;
    if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) throw bad(reason, at(i, field, "an integer in range"));
    return v.intValue();
  }

  private static String at(int i, String field, String what) {
    return "lock operation " + i + ": `" + field + "` must be " + what;
  }

  private static StateRefused bad(String reason, String detail) {
    return new StateRefused(400, reason, detail);
  }
}
