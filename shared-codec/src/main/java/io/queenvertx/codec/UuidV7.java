package io.queenvertx.codec;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.security.SecureRandom;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * UUIDv7 as Queen mints it for message ids, lease/worker ids and transaction ids (ENGINE.md §2 "uuidv7").
 *
 * <p>Layout (big-endian, as {@link UUID#getMostSignificantBits()} then {@link UUID#getLeastSignificantBits()}):
 * bytes 0–5 unix milliseconds; byte 6 {@code 0x70 | counter >>> 8}; byte 7 {@code counter & 0xFF}, where
 * {@code counter} is a 12-bit per-millisecond counter starting at 0; byte 8 {@code 0x80 | 6 random bits}; bytes 9–15
 * random.
 *
 * <p>Invariants:
 * <ul>
 *   <li>Within one generator (one per JVM behind {@link #next()}), the pair (millis, counter), i.e. the most
 *       significant 64 bits, strictly increases from call to call across all threads, so ids sort in mint order
 *       both as bytes and as text.</li>
 *   <li>When 4096 ids were minted in one millisecond, the next id borrows the following millisecond (counter 0)
 *       instead of wrapping; when the wall clock steps back, ids keep counting up from the last one handed out. The
 *       embedded time therefore may run slightly ahead of the wall clock, never behind the previous id.</li>
 * </ul>
 */
public final class UuidV7 {

  /** The all-zero UUID ({@code 00000000-0000-0000-0000-000000000000}), Queen's "no message" id. */
  public static final UUID ZERO = new UUID(0L, 0L);

  /** Length of {@link #toBytes}. */
  public static final int BYTES = 16;

  private static final int COUNTER_BITS = 12;
  private static final long MILLIS_MASK = (1L << 48) - 1;
  private static final VarHandle LONG_BE =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

  private static final UuidV7 PROCESS = new UuidV7(System::currentTimeMillis);

  /*
   * Ids leave the process (lease ids in pop responses, minted transaction ids), so their random bits come from a
   * SecureRandom. A per-thread buffer amortises the SecureRandom call over many ids and avoids contending on one
   * shared instance from every event loop.
   */
  private static final ThreadLocal<RandomBits> RANDOM = ThreadLocal.withInitial(RandomBits::new);

  private final LongSupplier clock;
  /** {@code (millis << 12) | counter} of the last id handed out; only ever grows. */
  private final AtomicLong last = new AtomicLong(0L);

  /** A generator on its own clock; package-private so tests can drive the clock. */
  UuidV7(LongSupplier clock) {
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  /** Mints the next id from the process-wide generator. Thread-safe, lock-free. */
  public static UUID next() {
    return PROCESS.mint();
  }

  UUID mint() {
    long stamp = Math.max(0L, Math.min(clock.getAsLong(), MILLIS_MASK)) << COUNTER_BITS;
    long prev;
    long next;
    do {
      prev = last.get();
      // A newer millisecond restarts the counter at 0; otherwise count on, and prev + 1 carries a full counter
      // (4095) into the next millisecond by plain arithmetic.
      next = Math.max(stamp, prev + 1);
    } while (!last.compareAndSet(prev, next));
    long millis = (next >>> COUNTER_BITS) & MILLIS_MASK;
    long counter = next & ((1L << COUNTER_BITS) - 1);
    long msb = (millis << 16) | 0x7000L | counter;
    long lsb = (RANDOM.get().nextLong() & 0x3FFF_FFFF_FFFF_FFFFL) | 0x8000_0000_0000_0000L;
    return new UUID(msb, lsb);
  }

  /** The unix milliseconds embedded in a v7 id. */
  public static long unixMillis(UUID id) {
    return id.getMostSignificantBits() >>> 16;
  }

  /** The 16 bytes of {@code id}, big-endian (the wire and frame order). */
  public static byte[] toBytes(UUID id) {
    byte[] out = new byte[BYTES];
    write(id, out, 0);
    return out;
  }

  /** Writes the 16 bytes of {@code id} at {@code off}. */
  static void write(UUID id, byte[] dst, int off) {
    LONG_BE.set(dst, off, id.getMostSignificantBits());
    LONG_BE.set(dst, off + 8, id.getLeastSignificantBits());
  }

  /**
   * Reads 16 big-endian bytes at {@code off}. Any 16 bytes are accepted (this also reads the all-zero id and ids
   * minted elsewhere); it does not check the version nibble.
   *
   * @throws IndexOutOfBoundsException if fewer than 16 bytes remain at {@code off}
   */
  public static UUID fromBytes(byte[] b, int off) {
    Objects.checkFromIndexSize(off, BYTES, b.length);
    return new UUID((long) LONG_BE.get(b, off), (long) LONG_BE.get(b, off + 8));
  }

  private static final class RandomBits {
    private final SecureRandom random = new SecureRandom();
    private final byte[] buffer = new byte[512];
    private int pos = buffer.length;

    long nextLong() {
      if (pos == buffer.length) {
        random.nextBytes(buffer);
        pos = 0;
      }
      long v = (long) LONG_BE.get(buffer, pos);
      pos += Long.BYTES;
      return v;
    }
  }
}
