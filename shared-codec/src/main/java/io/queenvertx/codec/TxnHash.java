package io.queenvertx.codec;

import com.dynatrace.hash4j.hashing.HashValue128;
import com.dynatrace.hash4j.hashing.Hasher128;
import com.dynatrace.hash4j.hashing.Hashing;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;

/**
 * The transaction-id hash: the only dedup identity of a message (ENGINE.md §2 "Hash blob").
 *
 * <p>Invariants:
 * <ul>
 *   <li>{@code of(id)} is XXH3-128, seed 0, of {@code id}'s UTF-8 bytes, written as a big-endian u128 (the canonical
 *       XXH128 form, high 64 bits first), so it equals what Queen stores in {@code log_txns.hashes} byte for byte (ours: {@code log_segments.hashes}).
 *       It always has {@link #BYTES} bytes.</li>
 *   <li>A hash blob ({@link #concat}) is 16 bytes per frame, in frame order, with nothing in between.</li>
 * </ul>
 * Stateless and thread-safe: hash4j's hasher instances are immutable.
 */
public final class TxnHash {

  /** Length of one hash. */
  public static final int BYTES = 16;

  private static final Hasher128 XXH3_128 = Hashing.xxh3_128();
  private static final VarHandle LONG_BE =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
  private static final char[] HEX = "0123456789abcdef".toCharArray();

  private TxnHash() {}

  /**
   * The 16-byte hash of a transaction id.
   *
   * <p>Hashes the UTF-8 bytes, not hash4j's {@code hashCharsTo128Bits} (which hashes UTF-16 and would never match
   * Queen). A string with an unpaired surrogate hashes as Java's UTF-8 encoder renders it ({@code '?'}), which is
   * also what {@link Frame} stores, so hash and frame stay consistent.
   */
  public static byte[] of(String transactionId) {
    Objects.requireNonNull(transactionId, "transactionId");
    HashValue128 h = XXH3_128.hashBytesTo128Bits(transactionId.getBytes(StandardCharsets.UTF_8));
    byte[] out = new byte[BYTES];
    // hash4j's HashValue128.toByteArray() is little-endian; Queen's blob is big-endian, most significant long first.
    LONG_BE.set(out, 0, h.getMostSignificantBits());
    LONG_BE.set(out, 8, h.getLeastSignificantBits());
    return out;
  }

  /** Lowercase hex of any byte array (for logs, tests and the xxhsum-style rendering of a hash). */
  public static String hex(byte[] h) {
    Objects.requireNonNull(h, "h");
    char[] out = new char[h.length * 2];
    for (int i = 0; i < h.length; i++) {
      out[2 * i] = HEX[(h[i] >>> 4) & 0xF];
      out[2 * i + 1] = HEX[h[i] & 0xF];
    }
    return new String(out);
  }

  /**
   * The hash blob for a run of frames: the hashes concatenated in list order.
   *
   * @throws IllegalArgumentException if an element is not exactly {@link #BYTES} long, because SQL slices the blob
   *     by offset arithmetic and one short element would shift every later hash onto the wrong frame
   */
  public static byte[] concat(List<byte[]> hashes) {
    Objects.requireNonNull(hashes, "hashes");
    byte[] out = new byte[Math.multiplyExact(hashes.size(), BYTES)];
    int off = 0;
    for (byte[] h : hashes) {
      if (h == null || h.length != BYTES) {
        throw new IllegalArgumentException(
            "hash #" + (off / BYTES) + " must be " + BYTES + " bytes, got " + (h == null ? "null" : h.length));
      }
      System.arraycopy(h, 0, out, off, BYTES);
      off += BYTES;
    }
    return out;
  }
}
