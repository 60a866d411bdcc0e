package io.queenvertx.consumer;

import io.queenvertx.bus.AckItem;
import io.queenvertx.db.AckCall;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * The one way an ack reaches SQL, for {@code POST /ack} ({@link Acks}) and {@code POST /transaction}
 * ({@code log.Transactions}) alike: the items are grouped per (partition, consumer group, lease), in order of first
 * appearance; each group is one {@link AckCall} ({@code log_ack}); its answer is read as a {@link Verdict}.
 */
public final class AckGroups {
  /** A group's key; {@code leaseId} is the item's own, else the request's hint (null: no lease). */
  public record Key(String partitionId, String group, String leaseId) {}

  /** One group: its key and the indexes of its items in the request. */
  public record Group(Key key, List<Integer> indexes) {
    /** The group's items, in request order. */
    public List<AckItem> items(List<AckItem> all) {
      List<AckItem> out = new ArrayList<>(indexes.size());
      for (int i : indexes) out.add(all.get(i));
      return out;
    }

    /**
     * The group's {@code log_ack} call, or null when its partition id is not a uuid ({@link #badPartition} says what
     * PostgreSQL itself answers for the cast, API.md §5.5 "a raw DB message").
     */
    public AckCall call(UUID tenant, List<AckItem> all) {
      UUID pid;
      try {
        pid = UUID.fromString(key.partitionId());
      } catch (RuntimeException e) {
        return null;
      }
      return AckCall.of(tenant, pid, key.group(), key.leaseId(), items(all));
    }

    public String badPartition() {
      return "invalid input syntax for type uuid: \"" + key.partitionId() + "\"";
    }
  }

  /**
   * A {@code log_ack} verdict (ENGINE.md §5.3): whether it applied ({@code ok}, else {@code error}), and by index in the
   * group the items that changed nothing ({@code noop}), came too late ({@code stale}), matched no message
   * ({@code unresolved}), cannot take effect because the earlier item {@code blockedBy} redelivers
   * ({@code superseded}), or wait for a dead-letter filing ({@code pending}); {@code dlq}: a hand-off to file.
   */
  public record Verdict(boolean ok, String error, Set<Integer> noop, Set<Integer> stale, Set<Integer> unresolved,
                        Set<Integer> superseded, Set<Integer> pending, Integer blockedBy, boolean leaseReleased,
                        boolean dlq, JsonObject raw) {
    public static Verdict of(JsonObject r) {
      return new Verdict(r.getBoolean("ok", false), r.getString("error"), indexes(r.getJsonArray("noop")),
          indexes(r.getJsonArray("stale")), indexes(r.getJsonArray("unresolved")),
          indexes(r.getJsonArray("superseded")), indexes(r.getJsonArray("pending")), r.getInteger("blockedBy"),
          r.getBoolean("leaseReleased", false), r.getBoolean("dlq", false), r);
    }
  }

  private AckGroups() {}

  /** The groups of {@code items} (null entries, a transaction's pushes, are skipped); {@code leaseHint} fills gaps. */
  public static List<Group> of(List<AckItem> items, String leaseHint) {
    Map<Key, List<Integer>> groups = new LinkedHashMap<>();
    for (int i = 0; i < items.size(); i++) {
      AckItem it = items.get(i);
      if (it == null) continue;
      String lease = it.leaseId() != null ? it.leaseId() : leaseHint;
      groups.computeIfAbsent(new Key(it.partitionId(), it.consumerGroup(), lease), k -> new ArrayList<>()).add(i);
    }
    List<Group> out = new ArrayList<>(groups.size());
    groups.forEach((k, v) -> out.add(new Group(k, v)));
    return out;
  }

  private static Set<Integer> indexes(JsonArray a) {
    Set<Integer> s = new HashSet<>();
    if (a != null) for (Object o : a) s.add(((Number) o).intValue());
    return s;
  }
}
