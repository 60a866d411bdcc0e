package io.queenvertx.log;

import io.queenvertx.db.SqlState;
import io.queenvertx.bus.PushItem;
import io.queenvertx.codec.EnvelopeCipher;
import io.queenvertx.codec.Frame;
import io.vertx.core.Context;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The push path's encryption: which queues store their payloads encrypted (the flag, via {@link QueueSettings}),
 * encrypting a payload, and preparing a bundle the push transaction refused with QV103 for its retry.
 *
 * <p>A plain object owned by the log writer and used from its context; encrypting more than 64 KiB of payload runs on
 * the worker pool ({@link Offload}), which only calls the cipher (one per thread). The flag cache it reads
 * ({@link QueueSettings}) is the one shared with the transaction path.
 */
final class PushEncryption {
  private static final Logger log = LoggerFactory.getLogger(LogWriterVerticle.class);
  /**
   * SQL's answer when a segment of plaintext frames targets a queue whose encryption_enabled the push transaction
   * reads as true (our cached flag was stale): nothing was written; the flags are read again and the frames encrypted.
   */

  private final Optional<EnvelopeCipher> cipher;
  private final QueueSettings settings;

  PushEncryption(Optional<EnvelopeCipher> cipher, QueueSettings settings) {
    this.cipher = cipher;
    this.settings = settings;
  }

  /**
   * Per queue of this request: whether its payloads are stored encrypted. A queue whose flag lookup failed is absent
   * (its items are encrypted, see {@link #encrypts}). Without a key nothing is looked up and every queue maps to
   * false: the push transaction refuses plaintext for an encrypted queue (QV103) and those items then fail. The
   * future never fails.
   */
  Future<Map<String, Boolean>> flagsFor(UUID tenant, List<PushItem> items) {
    String only = singleQueue(items);
    if (only != null) return flagOf(tenant, only);
    Set<String> queues = new HashSet<>();
    for (PushItem i : items) queues.add(i.queue());
    List<String> names = new ArrayList<>(queues);
    if (cipher.isEmpty()) {
      Map<String, Boolean> off = new HashMap<>();
      for (String q : names) off.put(q, false);
      return Future.succeededFuture(off);
    }
    List<Future<Boolean>> checks = new ArrayList<>();
    for (String q : names) checks.add(settings.encryptionEnabled(tenant, q));
    return Future.join(checks).transform(ar -> {
      Map<String, Boolean> flags = new HashMap<>();
      for (int i = 0; i < names.size(); i++) {
        if (checks.get(i).succeeded()) flags.put(names.get(i), Boolean.TRUE.equals(checks.get(i).result()));
        else log.warn("encryption flag lookup for queue {} failed: {}", names.get(i), checks.get(i).cause().toString());
      }
      return Future.succeededFuture(flags);
    });
  }

  /** The one queue every item names, or null when the items name several (or none). */
  private static String singleQueue(List<PushItem> items) {
    if (items.isEmpty()) return null;
    String q = items.get(0).queue();
    if (q == null) return null;
    for (int i = 1; i < items.size(); i++) if (!q.equals(items.get(i).queue())) return null;
    return q;
  }

  /** {@link #flagsFor} for a request naming one queue: the same map, without the set, list and join it builds. */
  private Future<Map<String, Boolean>> flagOf(UUID tenant, String queue) {
    if (cipher.isEmpty()) return Future.succeededFuture(Map.of(queue, false));
    return settings.encryptionEnabled(tenant, queue).transform(ar -> {
      if (ar.succeeded()) return Future.succeededFuture(Map.of(queue, Boolean.TRUE.equals(ar.result())));
      log.warn("encryption flag lookup for queue {} failed: {}", queue, ar.cause().toString());
      return Future.succeededFuture(Map.of());
    });
  }

  /**
   * Whether {@code queue}'s items are stored encrypted. A queue whose flag could not be read (the database is away,
   * and the item is about to be spooled) is encrypted whenever this node has a key: an encrypted frame is valid on
   * any queue (every frame carries its flag), a plaintext one on an encrypted queue never is. Without a key no flag
   * is looked up at all (every queue reads as plain, and the push transaction refuses plaintext for an encrypted one).
   */
  boolean encrypts(String queue, Map<String, Boolean> encryptedQueues) {
    Boolean on = encryptedQueues.get(queue);
    return on == null ? cipher.isPresent() : on;
  }

  /**
   * The payload as it is stored for its queue: as given for a queue that is not encrypted, else encrypted; null when
   * the encryption failed (or this node has no key). Never plaintext for an encrypted queue.
   */
  byte[] storedPayload(String queue, Map<String, Boolean> encryptedQueues, byte[] payload) {
    return encrypts(queue, encryptedQueues) ? encrypted(queue, payload) : payload;
  }

  /**
   * Each item's {@link #storedPayload}, by index (null where refused); encrypted on the worker pool when the payloads
   * to encrypt add up to more than {@link Offload#INLINE_MAX_BYTES}. Completes on {@code context}.
   */
  Future<byte[][]> storedPayloads(Context context, List<PushItem> items,
                                  Map<String, Boolean> encryptedQueues) {
    long bytes = 0;
    for (PushItem it : items) if (encrypts(it.queue(), encryptedQueues)) bytes += it.payload().length;
    return Offload.cpu(context, bytes, () -> {
      byte[][] stored = new byte[items.size()][];
      for (int i = 0; i < stored.length; i++) {
        stored[i] = storedPayload(items.get(i).queue(), encryptedQueues, items.get(i).payload());
      }
      return stored;
    });
  }

  /** {@code payload} encrypted for {@code queue}, or null (logged) when this node cannot encrypt it. */
  byte[] encrypted(String queue, byte[] payload) {
    if (cipher.isEmpty()) {
      log.warn("push to encrypted queue {} refused: this node has no QUEEN_ENCRYPTION_KEY", queue);
      return null;
    }
    try {
      return cipher.get().encryptToBytes(payload);
    } catch (RuntimeException e) {
      log.warn("push to encrypted queue {} refused: encryption failed: {}", queue, e.toString());
      return null;
    }
  }

  /** Whether a write failed because it carried plaintext for an encrypted queue (QV103). */
  static boolean isCrypt(Throwable e) {
    return SqlState.PUSH_PLAINTEXT_FOR_ENCRYPTED.is(e);
  }

  static boolean allEncrypted(List<Slot> slots) {
    for (Slot s : slots) if (!s.frame.encrypted()) return false;
    return true;
  }

  /**
   * After QV103: drops the cached flags of the bundle's queues that had plaintext frames, reads them again, encrypts
   * those frames where the queue is encrypted and hands each segment's slots to {@code requeue} (back at the head of
   * their partition). A frame whose flag cannot be read or that cannot be encrypted fails; it is never written as
   * plaintext. The encryption runs on the worker pool when large ({@link Offload}); the future completes on
   * {@code context} once every segment was handed back.
   */
  Future<?> prepareRetry(Context context, List<PackedSegment> bundle,
                         BiConsumer<PartitionKey, List<Slot>> requeue) {
    Map<String, Future<Boolean>> flags = new HashMap<>();
    for (PackedSegment s : bundle) {
      if (allEncrypted(s.slots)) continue;
      String k = s.key.tenant() + "\u001f" + s.key.queue();
      if (flags.containsKey(k)) continue;
      settings.invalidate(s.key.tenant().toString(), s.key.queue());
      flags.put(k, settings.encryptionEnabled(s.key.tenant(), s.key.queue()));
    }
    return Future.join(new ArrayList<>(flags.values())).eventually(() -> {
      // QV103 said these queues are encrypted: a flag that could not be read again changes nothing.
      Map<Slot, String> toEncrypt = new IdentityHashMap<>();
      long bytes = 0;
      for (PackedSegment s : bundle) {
        Future<Boolean> flag = flags.get(s.key.tenant() + "\u001f" + s.key.queue());
        for (Slot slot : s.slots) {
          if (flag == null || slot.frame.encrypted() || (flag.succeeded() && !flag.result())) continue;
          toEncrypt.put(slot, s.key.queue());
          bytes += slot.frame.payload().length;
        }
      }
      return Offload.cpu(context, bytes, () -> {
        Map<Slot, byte[]> done = new IdentityHashMap<>();
        toEncrypt.forEach((slot, queue) -> done.put(slot, encrypted(queue, slot.frame.payload())));
        return done;
      }).andThen(enc -> {
        for (PackedSegment s : bundle) {
          List<Slot> again = new ArrayList<>(s.slots.size());
          for (Slot slot : s.slots) {
            if (toEncrypt.containsKey(slot)) {
              byte[] payload = enc.succeeded() ? enc.result().get(slot) : null;
              if (payload == null) {
                slot.fail();
                continue;
              }
              Frame f = slot.frame;
              slot.frame = new Frame(f.messageId(), f.transactionId(), f.traceId(), f.producerSub(), payload, true);
            }
            again.add(slot);
          }
          requeue.accept(s.key, again);
        }
      });
    });
  }
}
