package io.queenvertx.codec;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdCompressCtx;
import com.github.luben.zstd.ZstdDecompressCtx;
import io.queenvertx.codec.SegmentDecodeException.Reason;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.zip.CRC32C;

/**
 * The blob stored in {@code log_segments.blob}: a run of {@link Frame}s compressed as one standard zstd frame
 * (ENGINE.md §2), behind a small header of our own.
 *
 * <pre>
 *   offset size
 *   0      2    magic 'Q','S'
 *   2      1    version = 1
 *   3      1    reserved = 0
 *   4      4    frameCount          u32 LE
 *   8      4    uncompressedLength  u32 LE, bytes of the concatenated frames
 *   12     4    crc32c              u32 LE, CRC32C of those bytes
 *   16     ...  one zstd frame (with its content size) of the concatenated frames
 * </pre>
 *
 * <p>Invariants of every blob {@link #pack} writes, and checked by {@link #decode} before it hands out a
 * {@link DecodedSegment}:
 * <ul>
 *   <li>{@code 1 <= frameCount} and {@code frameCount * MIN_FRAME_BYTES <= uncompressedLength <=
 *       MAX_UNCOMPRESSED_BYTES}.</li>
 *   <li>The zstd data inflates to exactly {@code uncompressedLength} bytes whose CRC32C is {@code crc32c}.</li>
 *   <li>Those bytes are exactly {@code frameCount} frames laid end to end by their {@code body_len}, each body at
 *       least {@link Frame#MIN_BODY_BYTES}; the last one ends at the buffer end.</li>
 * </ul>
 * The header exists so the decoder can bound its allocation before inflating (a corrupt or hostile length cannot
 * make it allocate more than {@link #MAX_UNCOMPRESSED_BYTES}), can tell a corrupt blob from a bad frame, and can
 * change format later by bumping the version. Frames carry no offsets: frame {@code i} of a segment is log offset
 * {@code base + i}, kept by SQL.
 */
public final class Segment {

  public static final int DEFAULT_ZSTD_LEVEL = 3;
  /**
   * Segments of at most this many uncompressed bytes (a single small message: what a push spread over many
   * partitions writes) pack at {@link #SMALL_ZSTD_LEVEL} when the configured level is one of the fast ones
   * ({@code 0..3}). At levels 1..3 zstd builds a Huffman table for the literals and FSE tables for the sequences of
   * every frame, which for a 250-byte run is about three quarters of the 4-5 us the frame costs; level -1 keeps the
   * literals raw and costs 1.3-1.7 us. A run this small has few repeats for Huffman to pay for (issue 39,
   * BENCHMARKS.md). The decoder does not care: the blob is the same standard zstd frame.
   */
  public static final int SMALL_RAW_BYTES = 512;
  public static final int SMALL_ZSTD_LEVEL = -1;
  public static final int HEADER_BYTES = 16;
  public static final int VERSION = 1;
  /** Largest decompressed frame run we write or accept: bounds what a corrupt header can make us allocate. */
  public static final int MAX_UNCOMPRESSED_BYTES = 512 * 1024 * 1024;

  static final byte MAGIC_0 = 'Q';
  static final byte MAGIC_1 = 'S';

  private static final VarHandle INT_LE = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

  /**
   * One zstd context per thread, reused: a one-shot {@code Zstd.compressByteArray} sets up and frees a context per
   * call, which is most of the cost of packing a small segment (about 4 us of 5 for one 250-byte frame).
   */
  private static final ThreadLocal<Compressor> COMPRESSOR = ThreadLocal.withInitial(Compressor::new);
  /** A second context for {@link #SMALL_ZSTD_LEVEL}, so a mix of small and large segments never resets a level. */
  private static final ThreadLocal<Compressor> SMALL_COMPRESSOR = ThreadLocal.withInitial(Compressor::new);
  private static final ThreadLocal<ZstdDecompressCtx> DECOMPRESSOR = ThreadLocal.withInitial(ZstdDecompressCtx::new);

  private static final class Compressor {
    final ZstdCompressCtx ctx = new ZstdCompressCtx();
    int level = Integer.MIN_VALUE;

    int compress(byte[] dst, int dstOffset, int dstSize, byte[] src, int srcSize, int zstdLevel) {
      if (level != zstdLevel) {
        ctx.setLevel(zstdLevel);
        ctx.setContentSize(true);
        level = zstdLevel;
      }
      return ctx.compressByteArray(dst, dstOffset, dstSize, src, 0, srcSize);
    }
  }

  private Segment() {}

  /** {@link #pack(List, int)} at {@link #DEFAULT_ZSTD_LEVEL} ({@code QUEEN_V2_ZSTD_LEVEL}'s default). */
  public static byte[] pack(List<Frame> frames) {
    return pack(frames, DEFAULT_ZSTD_LEVEL);
  }

  /**
   * Encodes {@code frames} in order and compresses them into one blob.
   *
   * @throws IllegalArgumentException if {@code frames} is empty, a frame's text field is too long, the frames
   *     exceed {@link #MAX_UNCOMPRESSED_BYTES} (we never write what {@link #decode} would refuse), or the level is
   *     outside zstd's range
   */
  public static byte[] pack(List<Frame> frames, int zstdLevel) {
    Objects.requireNonNull(frames, "frames");
    if (frames.isEmpty()) {
      throw new IllegalArgumentException("a segment needs at least one frame");
    }
    if (zstdLevel < Zstd.minCompressionLevel() || zstdLevel > Zstd.maxCompressionLevel()) {
      throw new IllegalArgumentException("zstd level " + zstdLevel + " is outside ["
          + Zstd.minCompressionLevel() + ", " + Zstd.maxCompressionLevel() + "]");
    }
    Frame.Encoding[] encodings = new Frame.Encoding[frames.size()];
    long total = 0;
    for (int i = 0; i < encodings.length; i++) {
      encodings[i] = Objects.requireNonNull(frames.get(i), "frame").encoding();
      total += encodings[i].size();
      if (total > MAX_UNCOMPRESSED_BYTES) {
        throw new IllegalArgumentException(
            "frames exceed " + MAX_UNCOMPRESSED_BYTES + " bytes uncompressed; split them into several segments");
      }
    }
    byte[] raw = new byte[(int) total];
    int p = 0;
    for (Frame.Encoding e : encodings) {
      p = e.writeTo(raw, p);
    }
    CRC32C crc = new CRC32C();
    crc.update(raw, 0, raw.length);

    int bound = Math.toIntExact(Zstd.compressBound(raw.length));
    byte[] out = new byte[HEADER_BYTES + bound];
    int level = levelFor(raw.length, zstdLevel);
    int compressed = (level == zstdLevel ? COMPRESSOR : SMALL_COMPRESSOR).get()
        .compress(out, HEADER_BYTES, bound, raw, raw.length, level);
    out[0] = MAGIC_0;
    out[1] = MAGIC_1;
    out[2] = VERSION;
    out[3] = 0;
    INT_LE.set(out, 4, encodings.length);
    INT_LE.set(out, 8, raw.length);
    INT_LE.set(out, 12, (int) crc.getValue());
    return Arrays.copyOf(out, HEADER_BYTES + compressed);
  }

  /** The level {@link #pack} compresses {@code rawBytes} of frames at, given the configured {@code zstdLevel}. */
  static int levelFor(int rawBytes, int zstdLevel) {
    return rawBytes <= SMALL_RAW_BYTES && zstdLevel >= 0 && zstdLevel <= DEFAULT_ZSTD_LEVEL
        ? SMALL_ZSTD_LEVEL : zstdLevel;
  }

  /**
   * Validates and inflates a blob and indexes its frames, without parsing them.
   *
   * <p>Never throws anything but {@link SegmentDecodeException} for any content of {@code blob}; every length is
   * checked against the bounds above before anything is allocated from it.
   */
  public static DecodedSegment decode(byte[] blob) throws SegmentDecodeException {
    Objects.requireNonNull(blob, "blob");
    if (blob.length < HEADER_BYTES) {
      throw new SegmentDecodeException(Reason.TRUNCATED,
          "blob of " + blob.length + " bytes is shorter than the " + HEADER_BYTES + "-byte header");
    }
    if (blob[0] != MAGIC_0 || blob[1] != MAGIC_1) {
      throw new SegmentDecodeException(Reason.BAD_MAGIC,
          String.format("magic 0x%02x%02x is not 'QS'", blob[0] & 0xFF, blob[1] & 0xFF));
    }
    if (blob[2] != VERSION || blob[3] != 0) {
      throw new SegmentDecodeException(Reason.BAD_VERSION,
          "version " + (blob[2] & 0xFF) + " reserved " + (blob[3] & 0xFF) + "; this build reads version "
              + VERSION + " with reserved 0");
    }
    long frameCount = Integer.toUnsignedLong((int) INT_LE.get(blob, 4));
    long rawLength = Integer.toUnsignedLong((int) INT_LE.get(blob, 8));
    int expectedCrc = (int) INT_LE.get(blob, 12);
    if (rawLength > MAX_UNCOMPRESSED_BYTES) {
      throw new SegmentDecodeException(Reason.TOO_LARGE,
          "header declares " + rawLength + " uncompressed bytes; the limit is " + MAX_UNCOMPRESSED_BYTES);
    }
    // Checked before inflating so a corrupt count cannot size the offset index beyond what the data can hold.
    if (frameCount == 0 || frameCount > rawLength / Frame.MIN_FRAME_BYTES) {
      throw new SegmentDecodeException(Reason.FRAME_COUNT_MISMATCH,
          "header declares " + frameCount + " frames in " + rawLength + " bytes");
    }
    int compressedLength = blob.length - HEADER_BYTES;
    if (compressedLength == 0) {
      throw new SegmentDecodeException(Reason.TRUNCATED, "no zstd data after the header");
    }

    byte[] raw = inflate(blob, compressedLength, (int) rawLength);

    CRC32C crc = new CRC32C();
    crc.update(raw, 0, raw.length);
    if ((int) crc.getValue() != expectedCrc) {
      throw new SegmentDecodeException(Reason.CHECKSUM_MISMATCH, String.format(
          "crc32c of the frames is %08x, header says %08x", (int) crc.getValue(), expectedCrc));
    }
    return new DecodedSegment(raw, index(raw, (int) frameCount));
  }

  private static byte[] inflate(byte[] blob, int compressedLength, int rawLength) throws SegmentDecodeException {
    long declared;
    try {
      declared = Zstd.getFrameContentSize(blob, HEADER_BYTES, compressedLength);
    } catch (RuntimeException e) {
      throw new SegmentDecodeException(Reason.DECOMPRESS_FAILED, "unreadable zstd frame header", e);
    }
    // pack always records the content size; requiring it to agree with our header means a flipped length in
    // either place fails here, before the output buffer is allocated, rather than after inflating.
    if (declared != rawLength) {
      throw new SegmentDecodeException(Reason.DECOMPRESS_FAILED, declared < 0
          ? "zstd frame header is corrupt or lacks a content size (code " + declared + ")"
          : "zstd frame declares " + declared + " bytes, segment header " + rawLength);
    }
    byte[] raw = new byte[rawLength];
    long produced;
    try {
      produced = DECOMPRESSOR.get().decompressByteArray(raw, 0, rawLength, blob, HEADER_BYTES, compressedLength);
    } catch (RuntimeException e) { // zstd-jni reports corrupt input as ZstdException, a RuntimeException
      throw new SegmentDecodeException(Reason.DECOMPRESS_FAILED, "zstd: " + e.getMessage(), e);
    }
    if (produced != rawLength) {
      throw new SegmentDecodeException(Reason.DECOMPRESS_FAILED,
          "zstd produced " + produced + " bytes, header declares " + rawLength);
    }
    return raw;
  }

  /**
   * Walks the {@code body_len} fields only, so a pop that wants one frame of a large segment does not parse the
   * others. Returns the start of each frame plus a final sentinel at {@code raw.length}.
   */
  private static int[] index(byte[] raw, int frameCount) throws SegmentDecodeException {
    int[] starts = new int[frameCount + 1];
    int p = 0;
    int i = 0;
    while (p < raw.length) {
      int remaining = raw.length - p;
      if (remaining < Frame.MIN_FRAME_BYTES) {
        throw new SegmentDecodeException(Reason.FRAME_MALFORMED,
            "frame " + i + " at " + p + " has only " + remaining + " bytes, less than a minimal frame");
      }
      long bodyLen = Frame.bodyLength(raw, p);
      if (bodyLen < Frame.MIN_BODY_BYTES || bodyLen > remaining - Frame.LENGTH_PREFIX_BYTES) {
        throw new SegmentDecodeException(Reason.FRAME_MALFORMED, "frame " + i + " at " + p + " has body_len "
            + bodyLen + " with " + (remaining - Frame.LENGTH_PREFIX_BYTES) + " bytes left");
      }
      // Shape before count: leftover bytes that are no frame at all say "malformed", not "one frame too many".
      if (i == frameCount) {
        throw new SegmentDecodeException(Reason.FRAME_COUNT_MISMATCH,
            "a frame remains at " + p + " after the " + frameCount + " frames the header declares");
      }
      starts[i++] = p;
      p += Frame.LENGTH_PREFIX_BYTES + (int) bodyLen;
    }
    if (i != frameCount) {
      throw new SegmentDecodeException(Reason.FRAME_COUNT_MISMATCH,
          "found " + i + " frames, header declares " + frameCount);
    }
    starts[frameCount] = raw.length;
    return starts;
  }
}
