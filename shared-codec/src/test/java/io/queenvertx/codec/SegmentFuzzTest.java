package io.queenvertx.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.luben.zstd.Zstd;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/**
 * Decoding arbitrary or damaged blobs: the only failure ever allowed is a {@link SegmentDecodeException}, whatever
 * the bytes (no other exception, no giant allocation, no hang), and damage is either detected or harmless.
 */
class SegmentFuzzTest {

  /** Decodes every frame; returns null if anything failed with the checked exception, rethrows anything else. */
  private static List<Frame> decodeAll(byte[] blob) {
    try {
      DecodedSegment seg = Segment.decode(blob);
      return seg.frames(0, seg.frameCount());
    } catch (SegmentDecodeException e) {
      assertThat(e.reason()).isNotNull();
      return null;
    }
  }

  @Property
  void roundTripReturnsEveryFrameAtItsIndex(@ForAll("frameLists") List<Frame> frames) throws Exception {
    DecodedSegment seg = Segment.decode(Segment.pack(frames));
    assertThat(seg.frameCount()).isEqualTo(frames.size());
    for (int i = 0; i < frames.size(); i++) {
      assertThat(seg.frame(i)).isEqualTo(frames.get(i));
    }
  }

  @Property
  void randomBytesOnlyFailWithSegmentDecodeException(@ForAll @Size(max = 2048) byte[] blob) {
    decodeAll(blob);
  }

  @Property
  void randomBytesBehindAValidMagicAndVersionOnlyFailWithSegmentDecodeException(
      @ForAll @Size(max = 2048) byte[] tail) {
    byte[] blob = new byte[4 + tail.length];
    blob[0] = 'Q';
    blob[1] = 'S';
    blob[2] = 1;
    System.arraycopy(tail, 0, blob, 4, tail.length);
    assertThat(decodeAll(blob)).isNull();
  }

  @Property
  void randomHeaderFieldsOverValidZstdAreDetected(
      @ForAll("frameLists") List<Frame> frames, @ForAll int frameCount, @ForAll int rawLength, @ForAll int crc) {
    byte[] raw = SegmentTest.rawFrames(frames);
    byte[] blob = SegmentTest.blob(1, 0, frameCount, rawLength, crc, Zstd.compress(raw, 1));
    List<Frame> decoded = decodeAll(blob);
    if (decoded != null) { // only the exact header can pass (a random crc matching is 2^-32)
      assertThat(decoded).isEqualTo(frames);
    }
  }

  @Property
  void everyStrictPrefixOfAValidBlobIsRejected(
      @ForAll("frameLists") List<Frame> frames, @ForAll @IntRange(min = 0, max = 100_000) int cut) {
    byte[] blob = Segment.pack(frames);
    int len = cut % blob.length;
    byte[] prefix = java.util.Arrays.copyOf(blob, len);
    assertThatThrownBy(() -> Segment.decode(prefix)).isInstanceOf(SegmentDecodeException.class);
  }

  @Test
  void everyPrefixOfOneBlobIsRejectedExhaustively() {
    byte[] blob = Segment.pack(SampleFrames.numbered(0, 30));
    for (int len = 0; len < blob.length; len++) {
      byte[] prefix = java.util.Arrays.copyOf(blob, len);
      assertThatThrownBy(() -> Segment.decode(prefix)).as("prefix %d", len)
          .isInstanceOf(SegmentDecodeException.class);
    }
  }

  @Property
  void aFlippedBitIsDetectedOrHarmless(
      @ForAll("frameLists") List<Frame> frames, @ForAll @IntRange(min = 0, max = 1_000_000) int bit) {
    byte[] blob = Segment.pack(frames);
    int at = bit % (blob.length * 8);
    blob[at / 8] ^= (byte) (1 << (at % 8));
    List<Frame> decoded = decodeAll(blob);
    if (decoded != null) { // e.g. zstd's "unused" header bit: then the frames must be untouched
      assertThat(decoded).isEqualTo(frames);
    }
  }

  @Test
  void everySingleBitFlipOfOneBlobIsDetectedOrHarmless() {
    List<Frame> frames = SampleFrames.numbered(0, 8);
    byte[] original = Segment.pack(frames);
    for (int at = 0; at < original.length * 8; at++) {
      byte[] blob = original.clone();
      blob[at / 8] ^= (byte) (1 << (at % 8));
      List<Frame> decoded = decodeAll(blob);
      if (decoded != null) {
        assertThat(decoded).as("bit %d", at).isEqualTo(frames);
      }
    }
  }

  @Property
  void overwrittenBytesAreDetectedOrHarmless(
      @ForAll("frameLists") List<Frame> frames,
      @ForAll @IntRange(min = 0, max = 1_000_000) int at,
      @ForAll @Size(min = 1, max = 8) byte[] junk) {
    byte[] blob = Segment.pack(frames);
    for (int i = 0; i < junk.length; i++) {
      blob[(at + i) % blob.length] = junk[i];
    }
    List<Frame> decoded = decodeAll(blob);
    if (decoded != null) {
      assertThat(decoded).isEqualTo(frames);
    }
  }

  /**
   * Arbitrary bytes behind a consistent header and crc: this reaches the frame index and the frame parser with
   * content no packer would write, past every outer check.
   */
  @Property
  void arbitraryFrameBytesBehindAConsistentHeaderOnlyFailWithSegmentDecodeException(
      @ForAll("frameBytes") byte[] raw, @ForAll @IntRange(min = 1, max = 40) int frameCount) {
    decodeAll(SegmentTest.blobAround(raw, frameCount));
  }

  /** Frames whose bodies were damaged after encoding, re-packed with a correct crc: index and parser see it all. */
  @Property
  void damagedFramesBehindAConsistentHeaderAreRejectedOrDecodeSelfConsistently(
      @ForAll("frameLists") List<Frame> frames,
      @ForAll @IntRange(min = 0, max = 1_000_000) int at,
      @ForAll byte value) throws Exception {
    byte[] raw = SegmentTest.rawFrames(frames);
    raw[at % raw.length] = value;
    DecodedSegment seg;
    try {
      seg = Segment.decode(SegmentTest.blobAround(raw, frames.size()));
    } catch (SegmentDecodeException e) {
      return;
    }
    for (int i = 0; i < seg.frameCount(); i++) {
      try {
        Frame f = seg.frame(i);
        // a frame that parses is a valid frame: it survives another round trip unchanged
        byte[] again = f.encode();
        assertThat(Frame.decode(again, 0, again.length)).isEqualTo(f);
      } catch (SegmentDecodeException e) {
        assertThat(e.reason()).isEqualTo(SegmentDecodeException.Reason.FRAME_MALFORMED);
      }
    }
  }

  @Test
  void hostileHeadersNeverAllocateFromTheirLengths() {
    byte[] z = Zstd.compress(new byte[64], 3);
    int[] lengths = {0, 22, 23, 64, Segment.MAX_UNCOMPRESSED_BYTES, Segment.MAX_UNCOMPRESSED_BYTES + 1, -1};
    int[] counts = {0, 1, 2, Integer.MAX_VALUE, -1};
    for (int len : lengths) {
      for (int count : counts) {
        for (int crc : new int[] {0, -1}) {
          decodeAll(SegmentTest.blob(1, 0, count, len, crc, z));
        }
      }
    }
  }

  @Provide
  Arbitrary<List<Frame>> frameLists() {
    return SampleFrames.frameLists();
  }

  /** Mostly plausible frame runs (little-endian lengths near real sizes), sometimes pure noise. */
  @Provide
  Arbitrary<byte[]> frameBytes() {
    Arbitrary<byte[]> plausible = Arbitraries.integers().between(0, 80).list().ofMinSize(1).ofMaxSize(10)
        .flatMap(bodies -> Arbitraries.bytes().array(byte[].class).ofSize(bodies.stream().mapToInt(b -> b).sum())
            .map(noise -> {
              ByteBuffer bb = ByteBuffer.allocate(noise.length + 4 * bodies.size()).order(ByteOrder.LITTLE_ENDIAN);
              int p = 0;
              for (int body : bodies) {
                bb.putInt(body).put(noise, p, body);
                p += body;
              }
              return bb.array();
            }));
    return Arbitraries.oneOf(plausible, Arbitraries.bytes().array(byte[].class).ofMinSize(1).ofMaxSize(600));
  }
}
