package io.queenvertx.codec;

import io.queenvertx.codec.SegmentDecodeException.Reason;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A validated, inflated segment with an index of where each frame starts; frames are parsed only when asked for.
 *
 * <p>Invariants (established by {@link Segment#decode}, the only way to get one):
 * <ul>
 *   <li>{@code starts} has {@code frameCount + 1} entries, strictly increasing, from 0 to {@code raw.length}; frame
 *       {@code i} occupies {@code raw[starts[i], starts[i + 1])} and its {@code body_len} agrees with that span.</li>
 *   <li>Neither array is ever written after construction and neither escapes, so an instance is immutable and may
 *       be shared between threads (it lives in the decode cache); {@link #frame} copies the payload out.</li>
 * </ul>
 * The CRC32C already vouched for the bytes, so {@link #frame} failing means a frame's inner fields are inconsistent
 * (a writer bug or a foreign blob), and that one frame fails while its neighbours still decode.
 */
public final class DecodedSegment {

  private final byte[] raw;
  private final int[] starts;

  DecodedSegment(byte[] raw, int[] starts) {
    this.raw = raw;
    this.starts = starts;
  }

  public int frameCount() {
    return starts.length - 1;
  }

  /** Bytes of the decompressed frames held by this instance (a cache weigher's measure). */
  public int uncompressedSize() {
    return raw.length;
  }

  /**
   * Parses frame {@code index} (0-based; log offset minus the segment's base offset).
   *
   * @throws SegmentDecodeException {@link Reason#INDEX_OUT_OF_RANGE} for an index outside
   *     {@code [0, frameCount)}, {@link Reason#FRAME_MALFORMED} if that frame's fields are inconsistent
   */
  public Frame frame(int index) throws SegmentDecodeException {
    if (index < 0 || index >= frameCount()) {
      throw new SegmentDecodeException(Reason.INDEX_OUT_OF_RANGE,
          "frame " + index + " of a segment with " + frameCount() + " frames");
    }
    return Frame.decode(raw, starts[index], starts[index + 1] - starts[index]);
  }

  /**
   * Parses {@code count} consecutive frames from {@code from}.
   *
   * @throws SegmentDecodeException {@link Reason#INDEX_OUT_OF_RANGE} unless {@code 0 <= from},
   *     {@code 0 <= count} and {@code from + count <= frameCount}; {@link Reason#FRAME_MALFORMED} as {@link #frame}
   */
  public List<Frame> frames(int from, int count) throws SegmentDecodeException {
    if (from < 0 || count < 0 || from > frameCount() - count) {
      throw new SegmentDecodeException(Reason.INDEX_OUT_OF_RANGE,
          "frames [" + from + ", +" + count + ") of a segment with " + frameCount() + " frames");
    }
    List<Frame> out = new ArrayList<>(count);
    for (int i = from; i < from + count; i++) {
      out.add(frame(i));
    }
    return Collections.unmodifiableList(out);
  }

  @Override
  public String toString() {
    return "DecodedSegment[frames=" + frameCount() + ", uncompressedBytes=" + raw.length + "]";
  }
}
