package io.queenvertx.codec;

import io.queenvertx.codec.SegmentDecodeException.Reason;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;
import java.util.UUID;

/**
 * One message as stored inside a segment (ENGINE.md §2 "Frame layout").
 *
 * <p>Wire form, little-endian:
 * <pre>
 *   body_len  u32   bytes that follow in this frame
 *   flags     u8    1 = trace, 2 = producerSub, 4 = encrypted
 *   message_id 16 B
 *   trace_id  16 B  if flag 1
 *   txn_len   u16 + txn UTF-8
 *   psub_len  u16 + producer_sub UTF-8   if flag 2
 *   payload   rest of the body (raw JSON text or the encryption envelope; may be empty)
 * </pre>
 *
 * <p>Invariants:
 * <ul>
 *   <li>{@code messageId}, {@code transactionId} and {@code payload} are non-null; {@code traceId} and
 *       {@code producerSub} are null exactly when their flag is clear. An empty payload is a message whose data
 *       renders as JSON {@code null} (see {@link #payloadOrNull()}); no frame can distinguish "empty" from "null".</li>
 *   <li>The body is at least {@link #MIN_BODY_BYTES}; {@code transactionId} and {@code producerSub} are at most
 *       {@link #MAX_TEXT_BYTES} UTF-8 bytes each (checked when encoding).</li>
 *   <li>Decoding is strict (no unknown flag bits, exact lengths, valid UTF-8), so every frame that decodes encodes
 *       back to the identical bytes.</li>
 *   <li>{@code payload} is held, not copied, to keep the push and pop paths free of extra copies: treat the array
 *       as immutable once it is in a frame. Equality and hash code compare its content.</li>
 * </ul>
 */
public record Frame(
    UUID messageId,
    String transactionId,
    UUID traceId,
    String producerSub,
    byte[] payload,
    boolean encrypted) {

  public static final int FLAG_TRACE = 1;
  public static final int FLAG_PRODUCER_SUB = 2;
  public static final int FLAG_ENCRYPTED = 4;
  private static final int KNOWN_FLAGS = FLAG_TRACE | FLAG_PRODUCER_SUB | FLAG_ENCRYPTED;

  /** Size of the {@code body_len} prefix. */
  public static final int LENGTH_PREFIX_BYTES = 4;
  /** flags + message_id + txn_len: the smallest body (ENGINE.md §2). */
  public static final int MIN_BODY_BYTES = 1 + 16 + 2;
  /** Smallest whole frame, prefix included. */
  public static final int MIN_FRAME_BYTES = LENGTH_PREFIX_BYTES + MIN_BODY_BYTES;
  /** Longest transactionId or producerSub in UTF-8 bytes: the u16 length field. */
  public static final int MAX_TEXT_BYTES = 0xFFFF;

  private static final VarHandle INT_LE = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
  private static final VarHandle SHORT_LE =
      MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.LITTLE_ENDIAN);

  public Frame {
    Objects.requireNonNull(messageId, "messageId");
    Objects.requireNonNull(transactionId, "transactionId");
    Objects.requireNonNull(payload, "payload");
  }

  /** A plaintext frame with neither trace id nor producer subject. */
  public static Frame of(UUID messageId, String transactionId, byte[] payload) {
    return new Frame(messageId, transactionId, null, null, payload, false);
  }

  /** The payload, or null when it is empty: the HTTP layer renders an empty frame as JSON {@code null}. */
  public byte[] payloadOrNull() {
    return payload.length == 0 ? null : payload;
  }

  /** The flags byte this frame is written with. */
  public int flags() {
    return (traceId != null ? FLAG_TRACE : 0)
        | (producerSub != null ? FLAG_PRODUCER_SUB : 0)
        | (encrypted ? FLAG_ENCRYPTED : 0);
  }

  /**
   * This frame's wire bytes, length prefix included.
   *
   * @throws IllegalArgumentException if {@code transactionId} or {@code producerSub} exceeds
   *     {@link #MAX_TEXT_BYTES} UTF-8 bytes
   */
  public byte[] encode() {
    Encoding e = encoding();
    byte[] out = new byte[Math.toIntExact(e.size())];
    e.writeTo(out, 0);
    return out;
  }

  /** The text fields rendered once, so {@link Segment#pack} can size its buffer before writing. */
  Encoding encoding() {
    byte[] txn = utf8Bounded(transactionId, "transactionId");
    byte[] psub = producerSub == null ? null : utf8Bounded(producerSub, "producerSub");
    return new Encoding(this, txn, psub);
  }

  /**
   * Decodes the one frame occupying exactly {@code buf[off, off + len)}, length prefix included.
   *
   * @throws SegmentDecodeException with {@link Reason#FRAME_MALFORMED} if the bytes are not exactly one valid frame
   */
  public static Frame decode(byte[] buf, int off, int len) throws SegmentDecodeException {
    Objects.requireNonNull(buf, "buf");
    if (off < 0 || len < 0 || len > buf.length - off) {
      throw malformed("region [" + off + ", +" + len + ") is outside a buffer of " + buf.length);
    }
    if (len < MIN_FRAME_BYTES) {
      throw malformed("frame of " + len + " bytes is shorter than the minimum " + MIN_FRAME_BYTES);
    }
    long bodyLen = Integer.toUnsignedLong((int) INT_LE.get(buf, off));
    if (bodyLen != len - LENGTH_PREFIX_BYTES) {
      throw malformed("body_len " + bodyLen + " does not match the " + (len - LENGTH_PREFIX_BYTES) + " body bytes");
    }
    int end = off + len;
    int p = off + LENGTH_PREFIX_BYTES;
    int flags = buf[p++] & 0xFF;
    if ((flags & ~KNOWN_FLAGS) != 0) {
      throw malformed("unknown flag bits 0x" + Integer.toHexString(flags & ~KNOWN_FLAGS));
    }
    UUID messageId = UuidV7.fromBytes(buf, p);
    p += 16;
    UUID traceId = null;
    if ((flags & FLAG_TRACE) != 0) {
      need(p, 16, end, "trace_id");
      traceId = UuidV7.fromBytes(buf, p);
      p += 16;
    }
    need(p, 2, end, "txn_len");
    int txnLen = (short) SHORT_LE.get(buf, p) & 0xFFFF;
    p += 2;
    need(p, txnLen, end, "txn");
    String txn = utf8Strict(buf, p, txnLen, "txn");
    p += txnLen;
    String psub = null;
    if ((flags & FLAG_PRODUCER_SUB) != 0) {
      need(p, 2, end, "psub_len");
      int psubLen = (short) SHORT_LE.get(buf, p) & 0xFFFF;
      p += 2;
      need(p, psubLen, end, "producer_sub");
      psub = utf8Strict(buf, p, psubLen, "producer_sub");
      p += psubLen;
    }
    byte[] payload = Arrays.copyOfRange(buf, p, end);
    return new Frame(messageId, txn, traceId, psub, payload, (flags & FLAG_ENCRYPTED) != 0);
  }

  /** Reads the unsigned {@code body_len} at {@code off}; the caller has checked 4 bytes are there. */
  static long bodyLength(byte[] buf, int off) {
    return Integer.toUnsignedLong((int) INT_LE.get(buf, off));
  }

  private static void need(int p, int n, int end, String field) throws SegmentDecodeException {
    if (n > end - p) {
      throw malformed(field + " needs " + n + " bytes but only " + (end - p) + " remain in the frame");
    }
  }

  private static SegmentDecodeException malformed(String message) {
    return new SegmentDecodeException(Reason.FRAME_MALFORMED, message);
  }

  private static byte[] utf8Bounded(String s, String field) {
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    if (b.length > MAX_TEXT_BYTES) {
      throw new IllegalArgumentException(
          field + " is " + b.length + " UTF-8 bytes; a frame allows at most " + MAX_TEXT_BYTES);
    }
    return b;
  }

  /*
   * Strict, unlike new String(bytes, UTF_8), which would silently turn corrupt bytes into U+FFFD and break the
   * "decodes, therefore re-encodes identically" invariant. Ids are nearly always ASCII, so that case skips the
   * CharsetDecoder.
   */
  private static String utf8Strict(byte[] buf, int off, int len, String field) throws SegmentDecodeException {
    int end = off + len;
    for (int i = off; i < end; i++) {
      if (buf[i] < 0) {
        try {
          return StandardCharsets.UTF_8.newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(ByteBuffer.wrap(buf, off, len))
              .toString();
        } catch (CharacterCodingException e) {
          throw new SegmentDecodeException(Reason.FRAME_MALFORMED, field + " is not valid UTF-8", e);
        }
      }
    }
    return new String(buf, off, len, StandardCharsets.ISO_8859_1);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Frame f
        && encrypted == f.encrypted
        && messageId.equals(f.messageId)
        && transactionId.equals(f.transactionId)
        && Objects.equals(traceId, f.traceId)
        && Objects.equals(producerSub, f.producerSub)
        && Arrays.equals(payload, f.payload);
  }

  @Override
  public int hashCode() {
    int h = Objects.hash(messageId, transactionId, traceId, producerSub, encrypted);
    return 31 * h + Arrays.hashCode(payload);
  }

  /** Leaves the payload out: it may be large, and when encryption is off it is the user's data in plaintext. */
  @Override
  public String toString() {
    return "Frame[messageId=" + messageId + ", transactionId=" + transactionId + ", traceId=" + traceId
        + ", producerSub=" + producerSub + ", payload=" + payload.length + " bytes, encrypted=" + encrypted + "]";
  }

  /** A frame with its text fields already UTF-8 encoded and bounds-checked. */
  record Encoding(Frame frame, byte[] txn, byte[] psub) {

    /** Whole-frame size, prefix included; long because a caller sums many of them. */
    long size() {
      return LENGTH_PREFIX_BYTES + bodySize();
    }

    private long bodySize() {
      return 1L + 16
          + (frame.traceId != null ? 16 : 0)
          + 2 + txn.length
          + (psub != null ? 2 + psub.length : 0)
          + frame.payload.length;
    }

    /** Writes the frame at {@code off} and returns the offset just past it. */
    int writeTo(byte[] dst, int off) {
      int p = off;
      INT_LE.set(dst, p, (int) bodySize());
      p += LENGTH_PREFIX_BYTES;
      dst[p++] = (byte) frame.flags();
      UuidV7.write(frame.messageId, dst, p);
      p += 16;
      if (frame.traceId != null) {
        UuidV7.write(frame.traceId, dst, p);
        p += 16;
      }
      SHORT_LE.set(dst, p, (short) txn.length);
      p += 2;
      System.arraycopy(txn, 0, dst, p, txn.length);
      p += txn.length;
      if (psub != null) {
        SHORT_LE.set(dst, p, (short) psub.length);
        p += 2;
        System.arraycopy(psub, 0, dst, p, psub.length);
        p += psub.length;
      }
      System.arraycopy(frame.payload, 0, dst, p, frame.payload.length);
      return p + frame.payload.length;
    }
  }
}
