package io.queenvertx.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdCompressCtx;
import io.queenvertx.codec.SegmentDecodeException.Reason;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

class SegmentTest {

  /** The concatenated frame bytes, built with Frame.encode only. */
  static byte[] rawFrames(List<Frame> frames) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    frames.forEach(f -> out.writeBytes(f.encode()));
    return out.toByteArray();
  }

  static int crc32c(byte[] b) {
    CRC32C crc = new CRC32C();
    crc.update(b);
    return (int) crc.getValue();
  }

  /** A blob with a hand-written header over arbitrary zstd bytes, to reach each failure on purpose. */
  static byte[] blob(int version, int reserved, int frameCount, int rawLength, int crc, byte[] zstd) {
    ByteBuffer bb = ByteBuffer.allocate(Segment.HEADER_BYTES + zstd.length).order(ByteOrder.LITTLE_ENDIAN);
    bb.put((byte) 'Q').put((byte) 'S').put((byte) version).put((byte) reserved);
    bb.putInt(frameCount).putInt(rawLength).putInt(crc).put(zstd);
    return bb.array();
  }

  /** A well-formed blob around arbitrary "frame" bytes, with the header fields consistent except the count. */
  static byte[] blobAround(byte[] raw, int frameCount) {
    return blob(1, 0, frameCount, raw.length, crc32c(raw), Zstd.compress(raw, 3));
  }

  static Reason failure(byte[] blob) {
    return catchThrowableOfType(SegmentDecodeException.class, () -> Segment.decode(blob)).reason();
  }

  @Test
  void headerIsMagicVersionCountLengthAndCrcOfTheFrames() {
    List<Frame> frames = SampleFrames.numbered(0, 12);
    byte[] raw = rawFrames(frames);
    byte[] blob = Segment.pack(frames, 3);
    ByteBuffer bb = ByteBuffer.wrap(blob).order(ByteOrder.LITTLE_ENDIAN);
    assertThat(new byte[] {bb.get(), bb.get()}).isEqualTo("QS".getBytes(StandardCharsets.US_ASCII));
    assertThat(bb.get()).isEqualTo((byte) 1);
    assertThat(bb.get()).isZero();
    assertThat(bb.getInt()).isEqualTo(12);
    assertThat(bb.getInt()).isEqualTo(raw.length);
    assertThat(bb.getInt()).isEqualTo(crc32c(raw));
    // the rest is one standard zstd frame, with its content size, of exactly the concatenated frames
    byte[] zstd = Arrays.copyOfRange(blob, Segment.HEADER_BYTES, blob.length);
    assertThat(Zstd.getFrameContentSize(zstd)).isEqualTo(raw.length);
    assertThat(Zstd.decompress(zstd, raw.length)).isEqualTo(raw);
  }

  @Test
  void decodeReturnsTheFramesInOrder() throws Exception {
    List<Frame> frames = SampleFrames.numbered(0, 40);
    DecodedSegment seg = Segment.decode(Segment.pack(frames));
    assertThat(seg.frameCount()).isEqualTo(40);
    assertThat(seg.uncompressedSize()).isEqualTo(rawFrames(frames).length);
    for (int i = 0; i < 40; i++) {
      assertThat(seg.frame(i)).isEqualTo(frames.get(i));
    }
    assertThat(seg.frames(0, 40)).isEqualTo(frames);
    assertThat(seg.frames(10, 5)).isEqualTo(frames.subList(10, 15));
    assertThat(seg.frames(40, 0)).isEmpty();
  }

  @Test
  void oneFrameOfATenThousandFrameSegmentDecodesByIndex() throws Exception {
    List<Frame> frames = SampleFrames.numbered(0, 10_000);
    DecodedSegment seg = Segment.decode(Segment.pack(frames));
    assertThat(seg.frameCount()).isEqualTo(10_000);
    assertThat(seg.frame(0)).isEqualTo(frames.get(0));
    assertThat(seg.frame(7_777)).isEqualTo(frames.get(7_777));
    assertThat(seg.frame(9_999)).isEqualTo(frames.get(9_999));
  }

  @Test
  void indexesOutsideTheSegmentAreIndexOutOfRange() throws Exception {
    DecodedSegment seg = Segment.decode(Segment.pack(SampleFrames.numbered(0, 3)));
    assertThat(catchThrowableOfType(SegmentDecodeException.class, () -> seg.frame(3)).reason())
        .isEqualTo(Reason.INDEX_OUT_OF_RANGE);
    assertThat(catchThrowableOfType(SegmentDecodeException.class, () -> seg.frame(-1)).reason())
        .isEqualTo(Reason.INDEX_OUT_OF_RANGE);
    assertThat(catchThrowableOfType(SegmentDecodeException.class, () -> seg.frames(2, 2)).reason())
        .isEqualTo(Reason.INDEX_OUT_OF_RANGE);
    assertThat(catchThrowableOfType(SegmentDecodeException.class, () -> seg.frames(-1, 1)).reason())
        .isEqualTo(Reason.INDEX_OUT_OF_RANGE);
    assertThat(catchThrowableOfType(SegmentDecodeException.class, () -> seg.frames(1, -1)).reason())
        .isEqualTo(Reason.INDEX_OUT_OF_RANGE);
    assertThat(catchThrowableOfType(SegmentDecodeException.class, () -> seg.frames(1, Integer.MAX_VALUE))
        .reason()).isEqualTo(Reason.INDEX_OUT_OF_RANGE);
  }

  @Test
  void framesListIsUnmodifiable() throws Exception {
    DecodedSegment seg = Segment.decode(Segment.pack(SampleFrames.numbered(0, 3)));
    assertThatThrownBy(() -> seg.frames(0, 3).clear()).isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void everyZstdLevelDecodesToTheSameFrames() throws Exception {
    List<Frame> frames = SampleFrames.numbered(0, 50);
    for (int level : new int[] {Zstd.minCompressionLevel(), -1, 1, 3, 9, 19}) {
      assertThat(Segment.decode(Segment.pack(frames, level)).frames(0, 50)).as("level %d", level).isEqualTo(frames);
    }
  }

  /** The zstd frame zstd itself writes for {@code raw} at {@code level}, with its content size (what pack asks). */
  static byte[] zstdAt(byte[] raw, int level) {
    try (ZstdCompressCtx ctx = new ZstdCompressCtx()) {
      return ctx.setLevel(level).setContentSize(true).compress(raw);
    }
  }

  @Test
  void aSmallSegmentPacksAtTheSmallLevelAndALargerOneAtTheConfiguredLevel() throws Exception {
    // one message of about 200 bytes of JSON: a push spread over many partitions writes segments like this
    String json = "{\"orderId\":\"ord-8f3a2c91\",\"customer\":{\"id\":48213,\"email\":\"jane@example.com\"},"
        + "\"items\":[{\"sku\":\"AB-1029\",\"qty\":2},{\"sku\":\"ZX-0042\",\"qty\":1}],\"note\":\"ring twice\"}";
    List<Frame> one = List.of(Frame.of(UuidV7.next(), "txn-1", json.getBytes(StandardCharsets.UTF_8)));
    byte[] small = rawFrames(one);
    assertThat(small.length).isLessThanOrEqualTo(Segment.SMALL_RAW_BYTES);
    assertThat(zstdAt(small, 3)).isNotEqualTo(zstdAt(small, Segment.SMALL_ZSTD_LEVEL));
    byte[] blob = Segment.pack(one, 3);
    assertThat(Arrays.copyOfRange(blob, Segment.HEADER_BYTES, blob.length))
        .isEqualTo(zstdAt(small, Segment.SMALL_ZSTD_LEVEL));
    assertThat(Segment.decode(blob).frames(0, 1)).isEqualTo(one);

    List<Frame> many = SampleFrames.numbered(0, 40);
    byte[] large = rawFrames(many);
    assertThat(large.length).isGreaterThan(Segment.SMALL_RAW_BYTES);
    assertThat(zstdAt(large, 3)).isNotEqualTo(zstdAt(large, Segment.SMALL_ZSTD_LEVEL));
    // small and large packed in turn on one thread: each keeps its own level
    for (int round = 0; round < 2; round++) {
      byte[] b = Segment.pack(many, 3);
      assertThat(Arrays.copyOfRange(b, Segment.HEADER_BYTES, b.length)).isEqualTo(zstdAt(large, 3));
      b = Segment.pack(one, 3);
      assertThat(Arrays.copyOfRange(b, Segment.HEADER_BYTES, b.length))
          .isEqualTo(zstdAt(small, Segment.SMALL_ZSTD_LEVEL));
    }
    assertThat(Segment.decode(Segment.pack(many, 3)).frames(0, 40)).isEqualTo(many);
  }

  @Test
  void onlyTheFastLevelsStepDownAndOnlyForSmallRuns() {
    assertThat(Segment.levelFor(Segment.SMALL_RAW_BYTES, 3)).isEqualTo(Segment.SMALL_ZSTD_LEVEL);
    assertThat(Segment.levelFor(1, 0)).isEqualTo(Segment.SMALL_ZSTD_LEVEL);
    assertThat(Segment.levelFor(1, 1)).isEqualTo(Segment.SMALL_ZSTD_LEVEL);
    assertThat(Segment.levelFor(Segment.SMALL_RAW_BYTES + 1, 3)).isEqualTo(3);
    // a level chosen for its ratio (above the default) or a faster one than ours is kept as configured
    assertThat(Segment.levelFor(1, 4)).isEqualTo(4);
    assertThat(Segment.levelFor(1, 19)).isEqualTo(19);
    assertThat(Segment.levelFor(1, -5)).isEqualTo(-5);
  }

  @Test
  void packRejectsNoFramesABadLevelAndOversizedRuns() {
    assertThatThrownBy(() -> Segment.pack(List.of())).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Segment.pack(SampleFrames.numbered(0, 1), 23))
        .isInstanceOf(IllegalArgumentException.class);
    // 9 × 64 MiB exceeds the 512 MiB decode limit; the check fires before the frame buffer is allocated
    Frame big = Frame.of(UuidV7.next(), "big", new byte[64 * 1024 * 1024]);
    assertThatThrownBy(() -> Segment.pack(Collections.nCopies(9, big)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("split");
  }

  @Test
  void aLargeHighlyCompressibleFrameRoundTrips() throws Exception {
    Frame big = Frame.of(UuidV7.next(), "zeros", new byte[32 * 1024 * 1024]);
    byte[] blob = Segment.pack(List.of(big));
    assertThat(blob.length).isLessThan(64 * 1024);
    assertThat(Segment.decode(blob).frame(0)).isEqualTo(big);
  }

  @Test
  void blobsShorterThanTheHeaderOrWithoutDataAreTruncated() {
    assertThat(failure(new byte[0])).isEqualTo(Reason.TRUNCATED);
    assertThat(failure(new byte[15])).isEqualTo(Reason.TRUNCATED);
    byte[] valid = Segment.pack(SampleFrames.numbered(0, 2));
    assertThat(failure(Arrays.copyOf(valid, Segment.HEADER_BYTES))).isEqualTo(Reason.TRUNCATED);
  }

  @Test
  void wrongMagicIsBadMagic() {
    byte[] blob = Segment.pack(SampleFrames.numbered(0, 2));
    blob[1] = 'T';
    assertThat(failure(blob)).isEqualTo(Reason.BAD_MAGIC);
    // a bare zstd frame (no header) is also refused by its magic
    assertThat(failure(Zstd.compress(new byte[100], 3))).isEqualTo(Reason.BAD_MAGIC);
  }

  @Test
  void otherVersionsOrANonZeroReservedByteAreBadVersion() {
    byte[] blob = Segment.pack(SampleFrames.numbered(0, 2));
    blob[2] = 2;
    assertThat(failure(blob)).isEqualTo(Reason.BAD_VERSION);
    blob[2] = 1;
    blob[3] = 1;
    assertThat(failure(blob)).isEqualTo(Reason.BAD_VERSION);
  }

  @Test
  void declaredLengthsOverTheLimitAreTooLargeWithoutAllocating() {
    byte[] tiny = Zstd.compress(new byte[23], 3);
    assertThat(failure(blob(1, 0, 1, Segment.MAX_UNCOMPRESSED_BYTES + 1, 0, tiny))).isEqualTo(Reason.TOO_LARGE);
    assertThat(failure(blob(1, 0, 1, -1, 0, tiny))).isEqualTo(Reason.TOO_LARGE); // u32 4 GiB - 1
  }

  @Test
  void aLengthWithinTheLimitThatZstdDisagreesWithFailsBeforeInflating() {
    // 512 MiB declared over a 100-byte stream: refused on the zstd content size, no 512 MiB buffer is made
    byte[] raw = rawFrames(SampleFrames.numbered(0, 2));
    byte[] claim = blob(1, 0, 2, Segment.MAX_UNCOMPRESSED_BYTES, crc32c(raw), Zstd.compress(raw, 3));
    assertThat(failure(claim)).isEqualTo(Reason.DECOMPRESS_FAILED);
  }

  @Test
  void frameCountsTheDataCannotHoldAreRefusedFromTheHeaderAlone() {
    byte[] raw = rawFrames(SampleFrames.numbered(0, 2));
    byte[] z = Zstd.compress(raw, 3);
    assertThat(failure(blob(1, 0, 0, raw.length, crc32c(raw), z))).isEqualTo(Reason.FRAME_COUNT_MISMATCH);
    assertThat(failure(blob(1, 0, raw.length / 23 + 1, raw.length, crc32c(raw), z)))
        .isEqualTo(Reason.FRAME_COUNT_MISMATCH);
    assertThat(failure(blob(1, 0, -1, raw.length, crc32c(raw), z))).isEqualTo(Reason.FRAME_COUNT_MISMATCH);
  }

  @Test
  void frameCountsDifferingFromTheFramesFoundAreMismatched() {
    byte[] raw = rawFrames(SampleFrames.numbered(0, 3));
    assertThat(failure(blobAround(raw, 2))).isEqualTo(Reason.FRAME_COUNT_MISMATCH);
    assertThat(failure(blobAround(raw, 4))).isEqualTo(Reason.FRAME_COUNT_MISMATCH);
  }

  @Test
  void corruptOrTruncatedZstdDataFailsToDecompress() {
    byte[] raw = rawFrames(SampleFrames.numbered(0, 20));
    byte[] z = Zstd.compress(raw, 3);
    byte[] garbage = z.clone();
    for (int i = 6; i < garbage.length; i++) {
      garbage[i] = (byte) (i * 31);
    }
    assertThat(failure(blob(1, 0, 20, raw.length, crc32c(raw), garbage))).isEqualTo(Reason.DECOMPRESS_FAILED);
    assertThat(failure(blob(1, 0, 20, raw.length, crc32c(raw), Arrays.copyOf(z, z.length - 3))))
        .isEqualTo(Reason.DECOMPRESS_FAILED);
    assertThat(failure(blob(1, 0, 20, raw.length, crc32c(raw), new byte[] {1, 2, 3})))
        .isEqualTo(Reason.DECOMPRESS_FAILED);
    byte[] trailing = Arrays.copyOf(z, z.length + 4);
    assertThat(failure(blob(1, 0, 20, raw.length, crc32c(raw), trailing))).isEqualTo(Reason.DECOMPRESS_FAILED);
  }

  @Test
  void aZstdFrameWithoutContentSizeIsRefused() {
    byte[] raw = rawFrames(SampleFrames.numbered(0, 2));
    byte[] z;
    try (ZstdCompressCtx ctx = new ZstdCompressCtx()) {
      z = ctx.setLevel(3).setContentSize(false).compress(raw);
    }
    assertThat(Zstd.getFrameContentSize(z)).isNegative();
    assertThat(failure(blob(1, 0, 2, raw.length, crc32c(raw), z))).isEqualTo(Reason.DECOMPRESS_FAILED);
  }

  @Test
  void aZstdFrameInflatingToADifferentLengthIsRefused() {
    byte[] raw = rawFrames(SampleFrames.numbered(0, 2));
    byte[] z = Zstd.compress(raw, 3);
    assertThat(failure(blob(1, 0, 1, raw.length - 1, crc32c(raw), z))).isEqualTo(Reason.DECOMPRESS_FAILED);
    assertThat(failure(blob(1, 0, 2, raw.length + 1, crc32c(raw), z))).isEqualTo(Reason.DECOMPRESS_FAILED);
  }

  @Test
  void aCrcOtherThanTheFramesIsAChecksumMismatch() {
    byte[] blob = Segment.pack(SampleFrames.numbered(0, 5));
    blob[12] ^= 0x01;
    assertThat(failure(blob)).isEqualTo(Reason.CHECKSUM_MISMATCH);
  }

  @Test
  void framesNotEndingExactlyAtTheBufferEndAreMalformed() {
    byte[] raw = rawFrames(SampleFrames.numbered(0, 2));
    // trailing bytes too short to be a frame
    assertThat(failure(blobAround(Arrays.copyOf(raw, raw.length + 5), 2))).isEqualTo(Reason.FRAME_MALFORMED);
    // last frame cut short: its body_len runs past the end
    assertThat(failure(blobAround(Arrays.copyOf(raw, raw.length - 1), 2))).isEqualTo(Reason.FRAME_MALFORMED);
  }

  @Test
  void aBodyLenUnderTheMinimumIsMalformed() {
    byte[] raw = rawFrames(SampleFrames.numbered(0, 2));
    raw[0] = 18;
    raw[1] = raw[2] = raw[3] = 0;
    assertThat(failure(blobAround(raw, 2))).isEqualTo(Reason.FRAME_MALFORMED);
  }

  @Test
  void aFrameWithBadInnerFieldsFailsAloneWhileItsNeighboursDecode() throws Exception {
    List<Frame> frames = SampleFrames.numbered(1, 3);
    byte[] first = frames.get(0).encode();
    byte[] second = frames.get(1).encode();
    second[4] = (byte) 0x80; // unknown flag; body_len untouched so the index still walks
    byte[] third = frames.get(2).encode();
    ByteArrayOutputStream raw = new ByteArrayOutputStream();
    raw.writeBytes(first);
    raw.writeBytes(second);
    raw.writeBytes(third);
    DecodedSegment seg = Segment.decode(blobAround(raw.toByteArray(), 3));
    assertThat(seg.frame(0)).isEqualTo(frames.get(0));
    assertThat(catchThrowableOfType(SegmentDecodeException.class, () -> seg.frame(1)).reason())
        .isEqualTo(Reason.FRAME_MALFORMED);
    assertThat(seg.frame(2)).isEqualTo(frames.get(2));
    assertThat(catchThrowableOfType(SegmentDecodeException.class, () -> seg.frames(0, 3)).reason())
        .isEqualTo(Reason.FRAME_MALFORMED);
  }

  @Test
  void oneDecodedSegmentServesManyThreadsAndHandsOutIndependentPayloads() throws Exception {
    List<Frame> frames = SampleFrames.numbered(0, 2_000);
    DecodedSegment seg = Segment.decode(Segment.pack(frames));
    seg.frame(1).payload()[0] = 'X'; // mutating a handed-out payload must not reach the shared segment
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<List<Frame>>> reads = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        reads.add(pool.submit(() -> seg.frames(0, seg.frameCount())));
      }
      for (Future<List<Frame>> read : reads) {
        assertThat(read.get()).isEqualTo(frames);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void exceptionMessageNamesItsReason() {
    SegmentDecodeException e = catchThrowableOfType(SegmentDecodeException.class,
        () -> Segment.decode(new byte[3]));
    assertThat(e.reason()).isEqualTo(Reason.TRUNCATED);
    assertThat(e).hasMessageStartingWith("TRUNCATED: ");
  }
}
