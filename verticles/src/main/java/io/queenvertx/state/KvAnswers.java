package io.queenvertx.state;

import io.queenvertx.db.KvProcedures;
import io.queenvertx.json.JsonText;
import io.queenvertx.json.Timestamps;
import io.queenvertx.metrics.StateMetrics;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The result objects of key-value operations (docs/design/queen2-contract.md §2.4), each entry's value spliced verbatim
 * from its stored JSON text (never re-parsed). {@code type} (a transaction's rider: {@code "kv"}) and {@code index}
 * (the flat index there) lead the object.
 */
public final class KvAnswers {
  private KvAnswers() {}

  /** {@code {"results":[...]}} of {@code POST /api/v1/kv}. */
  public static JsonText results(List<KvProcedures.Result> results) {
    JsonText j = new JsonText(256 * Math.max(1, results.size()));
    j.beginObject().key("results").beginArray();
    for (KvProcedures.Result r : results) result(j, r, r.index(), null);
    return j.endArray().endObject();
  }

  /** One result object, alone (the path routes). */
  public static JsonText single(KvProcedures.Result r) {
    return result(new JsonText(256), r, r.index(), null);
  }

  /** Writes the result object of {@code r} into {@code j}. */
  public static JsonText result(JsonText j, KvProcedures.Result r, int index, String type) {
    KvProcedures.Entry e = r.result();
    j.beginObject().field("index", index);
    if (type != null) j.field("type", type);
    j.field("op", r.op());
    switch (r.op()) {
      case "get" -> {
        j.field("found", Boolean.TRUE.equals(e.present())).field("key", e.key());
        if (Boolean.TRUE.equals(e.present())) entry(j, e, true);
      }
      case "getMany" -> {
        j.key("rows").beginArray();
        for (KvProcedures.Entry row : r.rows()) {
          if ("row".equals(row.kind())) row(j, row);
        }
        j.endArray().key("missing").beginArray();
        for (KvProcedures.Entry row : r.rows()) {
          if ("missing".equals(row.kind())) j.str(row.key());
        }
        j.endArray().field("truncated", Boolean.TRUE.equals(e.truncated()));
      }
      case "getPrefix" -> {
        j.key("rows").beginArray();
        for (KvProcedures.Entry row : r.rows()) row(j, row);
        j.endArray().field("truncated", Boolean.TRUE.equals(e.truncated())).field("nextAfter", e.nextAfter());
      }
      default -> write(j, r.op(), e);
    }
    return j.endObject();
  }

  private static void write(JsonText j, String op, KvProcedures.Entry e) {
    boolean applied = Boolean.TRUE.equals(e.applied());
    j.field("applied", applied);
    if (!applied) j.field("reason", e.reason());
    j.field("key", e.key());
    if (!(applied && op.equals("check"))) j.key("value").raw(bytes(e.value()));
    j.field("version", e.version() == null ? 0 : e.version());
  }

  private static void row(JsonText j, KvProcedures.Entry e) {
    j.beginObject().field("key", e.key());
    entry(j, e, e.value() != null);
    j.endObject();
  }

  private static void entry(JsonText j, KvProcedures.Entry e, boolean withValue) {
    if (withValue) j.key("value").raw(bytes(e.value()));
    j.field("version", e.version() == null ? 0 : e.version())
        .field("expiresAt", Timestamps.micros(e.expiresAt())).field("updatedAt", Timestamps.micros(e.updatedAt()));
  }

  /** Counts each operation of an answered call: applied (a read, or a write that applied) or rejected. */
  public static void count(StateMetrics metrics, List<KvProcedures.Result> results) {
    for (KvProcedures.Result r : results) {
      KvProcedures.Entry e = r.result();
      boolean ok = e.applied() == null || e.applied();
      metrics.kvOp(r.op(), ok ? "applied" : "rejected");
    }
  }

  /** Counts every operation of a call that failed: {@code result} rejected (a lost precondition) or error. */
  public static void count(StateMetrics metrics, List<KvProcedures.Op> ops, String result) {
    for (KvProcedures.Op o : ops) metrics.kvOp(o.op(), result);
  }

  static byte[] bytes(String json) {
    return json == null ? null : json.getBytes(StandardCharsets.UTF_8);
  }
}
