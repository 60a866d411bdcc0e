package io.queenvertx.codec;

import java.util.Objects;

/**
 * A segment blob or one of its frames could not be decoded.
 *
 * <p>Checked on purpose: every caller of {@link Segment#decode} and {@link DecodedSegment#frame} sits on a read path
 * (pop, message GET, listing, DLQ) that must decide what a corrupt segment means for its response (ENGINE.md §2: "a
 * blob that fails to decompress is skipped"; API.md: 500 {@code frame decode failed}), so the compiler makes it decide.
 * The {@link Reason} lets that decision and the metrics distinguish corruption from a bad request (an index out of
 * range).
 */
public class SegmentDecodeException extends Exception {

  private static final long serialVersionUID = 1L;

  /** Why decoding failed. */
  public enum Reason {
    /** The blob is shorter than its header, or has no compressed data after it. */
    TRUNCATED,
    /** The blob does not start with the {@code 'Q','S'} magic. */
    BAD_MAGIC,
    /** An unknown format version, or a non-zero reserved byte. */
    BAD_VERSION,
    /** zstd rejected the data, or it did not inflate to exactly the length the header declares. */
    DECOMPRESS_FAILED,
    /** The CRC32C of the decompressed frames differs from the header's. */
    CHECKSUM_MISMATCH,
    /** A frame's lengths or flags are inconsistent, or its text is not valid UTF-8. */
    FRAME_MALFORMED,
    /** The frames found do not match the header's frame count. */
    FRAME_COUNT_MISMATCH,
    /** A frame index outside {@code [0, frameCount)} was asked for. */
    INDEX_OUT_OF_RANGE,
    /** The header declares more decompressed bytes than {@link Segment#MAX_UNCOMPRESSED_BYTES}. */
    TOO_LARGE
  }

  private final Reason reason;

  public SegmentDecodeException(Reason reason, String message) {
    super(reason + ": " + message);
    this.reason = Objects.requireNonNull(reason, "reason");
  }

  public SegmentDecodeException(Reason reason, String message, Throwable cause) {
    super(reason + ": " + message, cause);
    this.reason = Objects.requireNonNull(reason, "reason");
  }

  public Reason reason() {
    return reason;
  }
}
