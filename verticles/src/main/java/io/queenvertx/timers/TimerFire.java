package io.queenvertx.timers;

import io.queenvertx.codec.EnvelopeCipher;
import io.queenvertx.codec.Frame;
import io.queenvertx.codec.Segment;
import io.queenvertx.codec.TxnHash;
import io.queenvertx.db.PushProcedures;
import io.queenvertx.db.TimerProcedures.Claimed;
import io.queenvertx.db.Transaction;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;

/**
 * One fire (docs/design/queen2-contract.md §3.3), inside ONE transaction: the due timers claimed ({@code timers_claim},
 * due order, SKIP LOCKED), their messages packed one segment per (tenant, queue, partition) in due order and pushed
 * with {@code log_push_multi}, and the timers deleted ({@code timers_fired}). A frame already in its queue's dedup
 * window (a message with the timer's transaction id is in the log) is dropped and its segment pushed again without
 * it; its timer is deleted all the same (a duplicate). A plaintext payload for a queue that is encrypted is encrypted
 * here. Packing and encryption run on a worker when the batch is large. Nothing is announced before the commit: the
 * caller publishes {@link #landed()} after it.
 */
final class TimerFire {
  /** Bytes of payload packed on the caller's event loop; a larger batch is packed on a worker. */
  static final long INLINE_MAX_BYTES = 64 * 1024;

  /** One (tenant, queue, partition) of the batch: its frames in due order. */
  private static final class Seg {
    final UUID tenant;
    final String queue;
    final String partition;
    final List<Frame> frames = new ArrayList<>();
    byte[] blob;
    byte[] hashes;

    Seg(UUID tenant, String queue, String partition) {
      this.tenant = tenant;
      this.queue = queue;
      this.partition = partition;
    }
  }

  private final Vertx vertx;
  private final Optional<EnvelopeCipher> cipher;
  private final int zstdLevel;
  /** The claimed timers (empty until the claim answers; kept for {@code timers_fail} after a rollback). */
  final List<Claimed> claimed = new ArrayList<>();
  private final List<JsonObject> landed = new ArrayList<>();
  int duplicates;

  TimerFire(Vertx vertx, Optional<EnvelopeCipher> cipher, int zstdLevel) {
    this.vertx = vertx;
    this.cipher = cipher;
    this.zstdLevel = zstdLevel;
  }

  /** The fire's work on {@code tx}: how many timers it claimed (0: none due). */
  Future<Integer> run(Transaction tx, int limit) {
    return tx.timers().claim(limit).compose(rows -> {
      claimed.addAll(rows);
      if (rows.isEmpty()) return Future.succeededFuture(0);
      List<Seg> segs = group(rows);
      return encryptedQueues(tx, segs)
          .compose(enc -> pack(segs, enc))
          .compose(v -> push(tx, segs))
          .compose(v -> tx.timers().fired(rows))
          .map(n -> rows.size());
    });
  }

  /** What the commit landed, one {@code Addresses.LANDED} announcement per segment written. */
  List<JsonObject> landed() {
    return landed;
  }

  /** Segments sorted by (tenant, queue, partition), the order every push locks partitions in; frames in due order. */
  private static List<Seg> group(List<Claimed> rows) {
    Map<String, Seg> by = new TreeMap<>();
    for (Claimed c : rows) {
      String k = c.tenant() + "\u0000" + c.queue() + "\u0000" + c.partition();
      by.computeIfAbsent(k, x -> new Seg(c.tenant(), c.queue(), c.partition()))
          .frames.add(new Frame(c.messageId(), c.txn(), null, c.producerSub(), c.payload(), c.encrypted()));
    }
    List<Seg> out = new ArrayList<>(by.values());
    out.sort(Comparator.comparing((Seg s) -> s.tenant.toString()).thenComparing(s -> s.queue)
        .thenComparing(s -> s.partition));
    return out;
  }

  /** The (tenant, queue) keys, among those with a plaintext frame, whose queue is encrypted (read in {@code tx}). */
  private Future<Set<String>> encryptedQueues(Transaction tx, List<Seg> segs) {
    Set<String> out = new HashSet<>();
    if (cipher.isEmpty()) return Future.succeededFuture(out);
    Set<String> asked = new HashSet<>();
    Future<Void> chain = Future.succeededFuture();
    for (Seg s : segs) {
      String k = s.tenant + "\u0000" + s.queue;
      if (s.frames.stream().allMatch(Frame::encrypted) || !asked.add(k)) continue;
      chain = chain.compose(v -> tx.pushes().encryptionEnabled(s.tenant, s.queue).map(on -> {
        if (on) out.add(k);
        return null;
      }));
    }
    return chain.map(v -> out);
  }

  private Future<Void> pack(List<Seg> segs, Set<String> encrypted) {
    long bytes = 0;
    for (Seg s : segs) for (Frame f : s.frames) bytes += f.payload().length;
    if (bytes <= INLINE_MAX_BYTES) {
      packNow(segs, encrypted);
      return Future.succeededFuture();
    }
    return vertx.executeBlocking(() -> {
      packNow(segs, encrypted);
      return null;
    }, false);
  }

  private void packNow(List<Seg> segs, Set<String> encrypted) {
    for (Seg s : segs) {
      if (encrypted.contains(s.tenant + "\u0000" + s.queue)) {
        for (int i = 0; i < s.frames.size(); i++) {
          Frame f = s.frames.get(i);
          if (f.encrypted()) continue;
          s.frames.set(i, new Frame(f.messageId(), f.transactionId(), null, f.producerSub(),
              cipher.orElseThrow().encryptToBytes(f.payload()), true));
        }
      }
      seal(s);
    }
  }

  /** The segment's blob and hash sidecar from its frames; a transaction id twice in it keeps its first frame. */
  private void seal(Seg s) {
    Set<String> txns = new HashSet<>();
    List<Frame> kept = new ArrayList<>(s.frames.size());
    for (Frame f : s.frames) {
      if (txns.add(f.transactionId())) kept.add(f);
      else duplicates++;
    }
    s.frames.clear();
    s.frames.addAll(kept);
    s.hashes = new byte[kept.size() * TxnHash.BYTES];
    for (int j = 0; j < kept.size(); j++) {
      System.arraycopy(TxnHash.of(kept.get(j).transactionId()), 0, s.hashes, j * TxnHash.BYTES, TxnHash.BYTES);
    }
    s.blob = Segment.pack(kept, zstdLevel);
  }

  /** Pushes the segments; a duplicate one is pushed again without its frames already in the log. */
  private Future<Void> push(Transaction tx, List<Seg> segs) {
    if (segs.isEmpty()) return Future.succeededFuture();
    var a = PushProcedures.Segments.of(segs.size());
    for (int i = 0; i < segs.size(); i++) {
      Seg s = segs.get(i);
      a.tenants()[i] = s.tenant;
      a.queues()[i] = s.queue;
      a.partitions()[i] = s.partition;
      a.counts()[i] = s.frames.size();
      a.hashes()[i] = s.hashes;
      a.blobs()[i] = s.blob;
      a.encrypted()[i] = s.frames.stream().allMatch(Frame::encrypted);
    }
    return tx.pushes().pushMulti(a).compose(written -> {
      List<Seg> again = new ArrayList<>();
      for (int i = 0; i < segs.size(); i++) {
        Seg s = segs.get(i);
        PushProcedures.Written w = written.get(i);
        if (w.queued()) {
          landed.add(new JsonObject().put("tenant", s.tenant.toString()).put("queue", s.queue)
              .put("partition", s.partition).put("partitionId", w.partitionId().toString())
              .put("lastOffset", w.baseOffset() + s.frames.size() - 1));
          continue;
        }
        Set<Integer> dup = new HashSet<>();
        for (Object d : w.dups()) dup.add(((JsonObject) d).getInteger("i"));
        List<Frame> rest = new ArrayList<>();
        for (int j = 0; j < s.frames.size(); j++) if (!dup.contains(j)) rest.add(s.frames.get(j));
        duplicates += s.frames.size() - rest.size();
        if (rest.isEmpty()) continue;
        s.frames.clear();
        s.frames.addAll(rest);
        seal(s);
        again.add(s);
      }
      return push(tx, again);
    });
  }
}
